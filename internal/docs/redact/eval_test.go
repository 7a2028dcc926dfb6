package redact_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus/redactsim"

	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// corpusSeed and corpusSize fix the corpus the targets are measured on.
const (
	corpusSeed = 20240611
	corpusSize = 40
)

// redactDoc runs the redactor on a corpus document in its format.
func redactDoc(r *redact.Redactor, d redactcorpus.Doc) (*redact.Output, error) {
	switch d.Format {
	case "json":
		return r.JSON([]byte(d.Text))
	case "csv":
		return r.CSV([]byte(d.Text))
	}
	return r.Text([]byte(d.Text))
}

// predictions runs the redactor on each document: text formats through
// the format's redactor, page documents through the page pipeline on the
// corpus's own word boxes (the real extraction is the pipeline harness's
// business).
func predictions(r *redact.Redactor, docs []redactcorpus.Doc) ([]redactcorpus.Prediction, error) {
	out := make([]redactcorpus.Prediction, len(docs))
	for i, d := range docs {
		if d.Page != nil {
			out[i].Findings = r.Pages(redactsim.Document(d.Page))
			continue
		}
		o, err := redactDoc(r, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		out[i].Findings = o.Findings
	}
	return out, nil
}

// TestCorpusTargets measures the detectors on the corpus (page documents
// on their synthetic word boxes) and holds them to the targets: recall 1.00 for the checksum- and
// format-backed types, 0.97 for names and addresses, precision 0.90.
func TestCorpusTargets(t *testing.T) {
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seed, size := int64(corpusSeed), corpusSize
	if v := os.Getenv("REDACT_EVAL_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
		size = 200
	}
	docs := redactcorpus.Generate(seed, size)
	preds, err := predictions(r, docs)
	if err != nil {
		t.Fatal(err)
	}
	rep := redactcorpus.Score(redactcorpus.Truths(docs), preds)
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if os.Getenv("REDACT_EVAL_PRINT") != "" {
		fmt.Print(b.String())
	}
	for typ, s := range rep.Types {
		want := 0.97
		switch typ {
		case redactcorpus.SSN, redactcorpus.CreditCard, redactcorpus.IBAN, redactcorpus.BankRouting, redactcorpus.Email, redactcorpus.Phone:
			want = 1
		}
		if s.TruthSpans > 0 && s.Recall < want {
			t.Errorf("%s recall %.3f, want >= %.2f", typ, s.Recall, want)
		}
		if s.Predicted > 0 && s.Precision < 0.90 {
			t.Errorf("%s precision %.3f, want >= 0.90", typ, s.Precision)
		}
	}
}
