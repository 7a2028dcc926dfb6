package redactcorpus

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact/result"
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
	planted := map[string]bool{}
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
		for _, c := range d.Canaries {
			planted[c] = true
			if !strings.Contains(d.Text, c) {
				t.Fatalf("%s: canary %d not in the text", d.Name, len(planted))
			}
		}
	}
	if len(formats) != 4 {
		t.Fatalf("formats %v", formats)
	}
	if len(planted) != len(Canaries(1)) {
		t.Fatalf("%d of %d canaries planted", len(planted), len(Canaries(1)))
	}
}

// TestScoreText: the span rules on a text document.
func TestScoreText(t *testing.T) {
	truth := []Truth{{Name: "d", Format: FormatText, text: "SSN 123-45-6789 mail a@b.co",
		Spans: []Span{{SSN, 4, 15}, {Email, 21, 27}}}}
	find := func(typ string, s, e int) result.Finding { return result.Finding{Type: typ, Start: s, End: e} }
	for _, tc := range []struct {
		name            string
		fs              []result.Finding
		recall, prec    float64
		leaked, fpCount int
		gone            int // of 2 values
	}{
		{"perfect", []result.Finding{find(SSN, 4, 15), find(Email, 21, 27)}, 1, 1, 0, 0, 2},
		{"none", nil, 0, 1, 17, 0, 0},
		{"most of it", []result.Finding{find(SSN, 4, 14), find(Email, 21, 27)}, 1, 1, 1, 0, 1},
		{"wrong type", []result.Finding{find(Email, 4, 15), find(Email, 21, 27)}, 0, 1, 0, 1, 2},
		{"extra", []result.Finding{find(SSN, 4, 15), find(Email, 21, 27), find(SSN, 0, 3)}, 1, 0.5, 0, 1, 2},
	} {
		rep := Score(truth, []Prediction{{tc.fs}})
		s := rep.Types[SSN]
		if s.Recall != tc.recall || s.Precision != tc.prec || rep.Leaked != tc.leaked || len(rep.FalsePositives) != tc.fpCount {
			t.Errorf("%s: ssn %+v leaked %d fps %v", tc.name, s, rep.Leaked, rep.FalsePositives)
		}
		if rep.Values != 2 || rep.ValuesGone != tc.gone {
			t.Errorf("%s: %d of %d values gone, want %d of 2", tc.name, rep.ValuesGone, rep.Values, tc.gone)
		}
		if rep.ByFormat["text"] == nil || rep.ByFormat["text"].Docs != 1 {
			t.Errorf("%s: no per-format report", tc.name)
		}
	}
}

// TestScorePages: the area rules on a page document.
func TestScorePages(t *testing.T) {
	words := []Word{
		{Page: 1, Text: "SSN:", XMin: 10, YMin: 10, XMax: 40, YMax: 20},
		{Page: 1, Text: "123-45-6789", XMin: 50, YMin: 10, XMax: 150, YMax: 20, Type: SSN},
		{Page: 2, Text: "Kim", XMin: 50, YMin: 10, XMax: 80, YMax: 20, Type: Person},
	}
	tr := []Truth{{Name: "p", Format: FormatPDF, Words: words}}
	box := func(typ string, page int, x0, x1 float64) result.Finding {
		return result.Finding{Type: typ, Page: page, Boxes: []result.Box{{XMin: x0, YMin: 8, XMax: x1, YMax: 22}}}
	}
	for _, tc := range []struct {
		name               string
		fs                 []result.Finding
		ssnRecall, ssnPrec float64
		personRecall       float64
		leaked             int
		gone               int // of 2 values (the SSN, the name)
	}{
		{"both", []result.Finding{box(SSN, 1, 48, 152), box(Person, 2, 48, 82)}, 1, 1, 1, 0, 2},
		{"wrong page", []result.Finding{box(SSN, 1, 48, 152), box(Person, 1, 48, 82)}, 1, 1, 0, 3, 1},
		{"under half", []result.Finding{box(SSN, 1, 48, 95), box(Person, 2, 48, 82)}, 0, 0, 1, 11, 1},
		{"over half", []result.Finding{box(SSN, 1, 48, 105), box(Person, 2, 48, 82)}, 1, 1, 1, 0, 2},
		{"split boxes add up", []result.Finding{box(SSN, 1, 48, 90), box(SSN, 1, 90, 152), box(Person, 2, 48, 82)}, 1, 0.5, 1, 0, 2},
		{"label boxed", []result.Finding{box(SSN, 1, 8, 42), box(SSN, 1, 48, 152), box(Person, 2, 48, 82)}, 1, 0.5, 1, 0, 2},
		{"wrong type", []result.Finding{box(Phone, 1, 48, 152), box(Person, 2, 48, 82)}, 0, 1, 1, 0, 2},
	} {
		rep := Score(tr, []Prediction{{tc.fs}})
		s, p := rep.Types[SSN], rep.Types[Person]
		if s.Recall != tc.ssnRecall || s.Precision != tc.ssnPrec || p.Recall != tc.personRecall || rep.Leaked != tc.leaked {
			t.Errorf("%s: ssn %+v person %+v leaked %d", tc.name, s, p, rep.Leaked)
		}
		if rep.Values != 2 || rep.ValuesGone != tc.gone {
			t.Errorf("%s: %d of %d values gone, want %d of 2", tc.name, rep.ValuesGone, rep.Values, tc.gone)
		}
	}
}

// TestWriteAndReadTruth: every document is written with its truth; the
// truth read back scores a perfect prediction perfectly; scans are split
// between image PDFs and PNGs; the canaries file lists the planted ones.
func TestWriteAndReadTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("renders scans")
	}
	docs := Generate(5, 4)
	dir := t.TempDir()
	paths, err := WriteFiles(dir, docs)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var truths []Truth
	var preds []Prediction
	for i, p := range paths {
		tr, err := ReadTruth(p)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Name != docs[i].Name || filepath.Ext(p) != ext(tr.Format) {
			t.Fatalf("%s: truth %s/%s", p, tr.Name, tr.Format)
		}
		kinds[tr.Kind()]++
		truths = append(truths, tr)
		preds = append(preds, perfect(tr))
	}
	for _, k := range []string{"text", "json", "csv", "pdf-text", "pdf-scan", "png-scan"} {
		if kinds[k] == 0 {
			t.Errorf("no %s documents: %v", k, kinds)
		}
	}
	rep := Score(truths, preds)
	for typ, s := range rep.Types {
		if s.Recall != 1 || s.Precision != 1 {
			t.Errorf("%s: %+v on a perfect prediction", typ, s)
		}
	}
	listed, err := DocPaths(dir)
	if err != nil || len(listed) != len(paths) {
		t.Fatalf("DocPaths: %d paths, err %v; wrote %d", len(listed), err, len(paths))
	}
	cs, err := ReadCanaries(dir)
	if err != nil || len(cs) != len(Canaries(5)) {
		t.Fatalf("canaries %d, err %v", len(cs), err)
	}
}

// perfect predicts exactly the truth.
func perfect(t Truth) Prediction {
	var p Prediction
	for _, s := range t.Spans {
		p.Findings = append(p.Findings, result.Finding{Type: s.Type, Start: s.Start, End: s.End})
	}
	for _, w := range t.Words {
		if w.Type != "" {
			p.Findings = append(p.Findings, result.Finding{Type: w.Type, Page: w.Page,
				Boxes: []result.Box{{XMin: w.XMin, YMin: w.YMin, XMax: w.XMax, YMax: w.YMax}}})
		}
	}
	return p
}
