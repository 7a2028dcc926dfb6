package redact_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/redact/corpus"
)

// corpusSeed and corpusSize fix the corpus the targets are measured on.
const (
	corpusSeed = 20240611
	corpusSize = 40
)

// redactDoc runs the redactor on a corpus document in its format.
func redactDoc(r *redact.Redactor, d corpus.Doc) (*redact.Output, error) {
	switch d.Format {
	case "json":
		return r.JSON([]byte(d.Text))
	case "csv":
		return r.CSV([]byte(d.Text))
	}
	return r.Text([]byte(d.Text))
}

// predictor returns a document's findings as spans: text formats through
// the format's redactor, page documents through the page pipeline (their
// corpus text is the page's words joined as the pipeline joins them).
func predictor(r *redact.Redactor) func(corpus.Doc) ([]corpus.Span, error) {
	return func(d corpus.Doc) ([]corpus.Span, error) {
		var fs []redact.Finding
		if d.Format == "page" {
			fs = r.Pages(d.Page.Document())
		} else {
			out, err := redactDoc(r, d)
			if err != nil {
				return nil, err
			}
			fs = out.Findings
		}
		spans := make([]corpus.Span, len(fs))
		for i, f := range fs {
			spans[i] = corpus.Span{Type: f.Type, Start: f.Start, End: f.End}
		}
		return spans, nil
	}
}

// TestCorpusTargets measures the detectors on the corpus's text formats
// and holds them to the targets: recall 1.00 for the checksum- and
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
	docs := corpus.Generate(seed, size)
	rep, err := corpus.Eval(docs, predictor(r))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if os.Getenv("REDACT_EVAL_PRINT") != "" {
		fmt.Print(b.String())
	}
	for typ, s := range rep.Types {
		want := 0.97
		switch typ {
		case corpus.SSN, corpus.CreditCard, corpus.IBAN, corpus.BankRouting, corpus.Email, corpus.Phone:
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
