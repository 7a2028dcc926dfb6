package redactworld

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// TestGenerateShapes: every format is present, deterministic for a seed,
// spans lie in their text, JSON parses, CSV parses in its dialect, the
// canaries are planted as people, and near misses are counted.
func TestGenerateShapes(t *testing.T) {
	for _, split := range []Split{Dev, Test} {
		docs := Generate(3, 8, split)
		again := Generate(3, 8, split)
		formats, planted, near := map[string]int{}, map[string]bool{}, 0
		for i, d := range docs {
			if d.Text != again[i].Text {
				t.Fatalf("%s: not deterministic", d.Name)
			}
			formats[d.Format]++
			rs := []rune(d.Text)
			for _, s := range d.Spans {
				if s.Start >= s.End || s.End > len(rs) {
					t.Fatalf("%s: span %+v outside the text", d.Name, s)
				}
			}
			for _, n := range d.NearMisses {
				near += n
			}
			checkFormat(t, d)
			for _, c := range d.Canaries {
				planted[c] = true
				if !strings.Contains(letters(d.Text), letters(c)) && !inWords(d, c) {
					t.Fatalf("%s: canary %q not in it", d.Name, c)
				}
			}
		}
		if len(formats) != 4 || formats["page"] != 8 {
			t.Fatalf("%s: formats %v", split, formats)
		}
		if len(planted) != 4 || near < 60 {
			t.Fatalf("%s: %d canaries planted, %d near misses", split, len(planted), near)
		}
	}
}

// letters keeps only letters (a canary name split over CSV cells still
// reads as itself).
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, s)
}

func inWords(d redactcorpus.Doc, c string) bool {
	if d.Page == nil {
		return false
	}
	var words []string
	for _, w := range d.Page.Words {
		words = append(words, w.Text)
	}
	return strings.Contains(strings.Join(words, " "), c)
}

func checkFormat(t *testing.T, d redactcorpus.Doc) {
	t.Helper()
	switch d.Format {
	case "json":
		if !json.Valid([]byte(d.Text)) {
			t.Fatalf("%s: invalid JSON:\n%s", d.Name, d.Text)
		}
	case "csv":
		r := csv.NewReader(strings.NewReader(d.Text))
		r.Comma = rune(sniff(d.Text))
		recs, err := r.ReadAll()
		if err != nil || len(recs) < 3 {
			t.Fatalf("%s: CSV: %d records, %v", d.Name, len(recs), err)
		}
	case "page":
		if d.Page == nil || len(d.Page.Words) == 0 {
			t.Fatalf("%s: no words", d.Name)
		}
	}
}

func sniff(s string) byte {
	head, _, _ := strings.Cut(s, "\n")
	for _, d := range []byte{'\t', ';'} {
		if strings.Count(head, string(d)) > 2 {
			return d
		}
	}
	return ','
}

// TestSplitsShareNoValue: Dev and Test draw people, addresses and
// numbers from disjoint pools, so nothing tuned on Dev's values helps on
// Test by memory.
func TestSplitsShareNoValue(t *testing.T) {
	values := func(split Split) map[string]bool {
		m := map[string]bool{}
		for _, d := range Generate(1, 24, split) {
			rs := []rune(d.Text)
			for _, s := range d.Spans {
				if s.Type == tPerson || s.Type == tAddress && s.End-s.Start > 12 {
					m[string(rs[s.Start:s.End])] = true
				}
			}
		}
		return m
	}
	dev, test := values(Dev), values(Test)
	for v := range dev {
		if test[v] {
			t.Errorf("%q is in both splits", v)
		}
	}
}

// TestWriteFiles: the corpus goes through the first corpus's writer, so
// its documents render (page documents as PDFs and scans) with truths.
func TestWriteFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("renders pages")
	}
	docs := Generate(2, 4, Test)
	paths, err := redactcorpus.WriteFiles(t.TempDir(), docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		tr, err := redactcorpus.ReadTruth(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Spans) == 0 && len(tr.Words) == 0 {
			t.Fatalf("%s: empty truth", p)
		}
	}
}
