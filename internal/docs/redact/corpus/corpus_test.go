package corpus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDeterministicAndWellFormed(t *testing.T) {
	a, b := Generate(1, 8), Generate(1, 8)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different corpus")
	}
	if reflect.DeepEqual(a, Generate(2, 8)) {
		t.Fatal("different seeds, same corpus")
	}
	formats := map[string]int{}
	for _, d := range a {
		formats[d.Format]++
		rs := []rune(d.Text)
		for _, s := range d.Spans {
			if s.Start < 0 || s.End > len(rs) || s.End <= s.Start || strings.TrimSpace(string(rs[s.Start:s.End])) == "" {
				t.Fatalf("%s: bad span %+v", d.Name, s)
			}
		}
		if d.Format == "json" && !json.Valid([]byte(d.Text)) {
			t.Fatalf("%s: invalid JSON", d.Name)
		}
		if d.Format == "page" && (d.Page == nil || len(d.Page.Words) == 0) {
			t.Fatalf("%s: page document without words", d.Name)
		}
	}
	if len(formats) != 4 {
		t.Fatalf("formats %v", formats)
	}
}

func TestEvalRules(t *testing.T) {
	docs := Generate(3, 4)
	perfect := func(d Doc) ([]Span, error) { return d.Spans, nil }
	none := func(Doc) ([]Span, error) { return nil, nil }
	wrongType := func(d Doc) ([]Span, error) {
		var out []Span
		for _, s := range d.Spans {
			out = append(out, Span{Type: Email, Start: s.Start, End: s.End})
		}
		return out, nil
	}
	rep, _ := Eval(docs, perfect)
	if s := rep.Types[SSN]; s.Recall != 1 || s.Precision != 1 || s.F2 != 1 || rep.Leaked != 0 {
		t.Fatalf("perfect: %+v leaked %d", s, rep.Leaked)
	}
	rep, _ = Eval(docs, none)
	if s := rep.Types[SSN]; s.Recall != 0 || rep.Leaked != rep.TruthChars {
		t.Fatalf("none: %+v", s)
	}
	rep, _ = Eval(docs, wrongType)
	if s := rep.Types[SSN]; s.Recall != 0 || rep.Leaked != 0 || rep.Types[Email].Precision >= 1 {
		t.Fatalf("wrong type: ssn %+v email %+v leaked %d", s, rep.Types[Email], rep.Leaked)
	}
}
