package redact_test

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus/redactsim"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/verify"
	"github.com/airlock-dev/airlock/internal/docs/verify/result"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// TestVerifierOnRedactedCorpus: the independent verifier finds nothing in
// any redacted corpus document (text, JSON, CSV, page text) under each
// operator, and finds something in every unredacted one.
func TestVerifierOnRedactedCorpus(t *testing.T) {
	docs := redactcorpus.Generate(corpusSeed, corpusSize)
	for _, op := range []string{policy.OpReplace, policy.OpMask, policy.OpHash, policy.OpRemove} {
		pol := policy.Default()
		pol.DefaultOperator = op
		r, err := redact.New(redact.Options{Policy: pol, Salt: []byte("0123456789abcdef-test-salt")})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if got := verify.Check(d.Text).Verdict; got != result.Suspicious {
				t.Errorf("%s: unredacted verdict %s", d.Name, got)
			}
			if d.Format == "page" {
				rep := verify.CheckPages(unboxedWords(d, r.Pages(redactsim.Document(d.Page))))
				for _, f := range rep.Findings {
					t.Errorf("%s/%s: verifier %s %s on page %d", op, d.Name, f.Type, f.Rule, f.Page)
				}
				continue
			}
			out, err := redactDoc(r, d)
			if err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			rep := verify.Check(string(out.Data))
			if rep.Verdict != result.Clean {
				rs := []rune(string(out.Data))
				for _, f := range rep.Findings {
					t.Errorf("%s/%s: verifier %s %s on %q", op, d.Name, f.Type, f.Rule, string(rs[max(0, f.Start-20):min(len(rs), f.End+10)]))
				}
			}
		}
	}
}

// unboxedWords is what re-extracting the redacted page would read: the
// page document without the words under a box (a black box reads as
// nothing).
func unboxedWords(d redactcorpus.Doc, fs []redact.Finding) *extract.Document {
	kept := *d.Page
	kept.Words = nil
	for _, w := range d.Page.Words {
		if _, boxed := inBox(w, fs); !boxed {
			kept.Words = append(kept.Words, w)
		}
	}
	return redactsim.Document(&kept)
}
