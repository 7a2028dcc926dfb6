package verify

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/verify/result"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// TestCorpusUnredactedIsSuspicious: on every corpus document as written
// (before redaction) the verifier must say suspicious.
func TestCorpusUnredactedIsSuspicious(t *testing.T) {
	docs := redactcorpus.Generate(20240611, 40)
	for _, d := range docs {
		rep := Check(d.Text)
		if rep.Verdict != result.Suspicious {
			t.Errorf("%s: verdict %s on the unredacted document", d.Name, rep.Verdict)
		}
	}
}
