package reviewcorpus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs/review"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

func generate(t *testing.T, seed int64, n int) []Contract {
	t.Helper()
	cs, err := Generate(Options{Seed: seed, Contracts: n})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestGenerateDeterministic(t *testing.T) {
	a, _ := json.Marshal(generate(t, 42, 5))
	b, _ := json.Marshal(generate(t, 42, 5))
	c, _ := json.Marshal(generate(t, 43, 5))
	if string(a) != string(b) {
		t.Error("the same seed gave two corpora")
	}
	if string(a) == string(c) {
		t.Error("two seeds gave the same corpus")
	}
}

// TestTruthMatchesText checks the ground truth against the generated text
// itself, without the analyser: a MISSING clause's text is absent, a
// verbatim one is there word for word, a changed one is not.
func TestTruthMatchesText(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	std := map[string]string{}
	for _, c := range pb.Clauses {
		std[c.Key] = strings.Join(strings.Fields(c.StandardText), " ")
	}
	seen := map[string]int{}
	for _, c := range generate(t, 7, 40) {
		var all []string
		for _, p := range c.Paragraphs {
			all = append(all, p.Text)
		}
		doc := strings.Join(all, " ")
		if len(c.Truth.Clauses) != len(pb.Clauses) {
			t.Fatalf("%s: %d truths for %d clauses", c.Name, len(c.Truth.Clauses), len(pb.Clauses))
		}
		for _, ct := range c.Truth.Clauses {
			seen[ct.Status]++
			seen[ct.Placement]++
			first := strings.Join(strings.Fields(std[ct.Clause])[:12], " ")
			switch {
			case ct.Status == review.StatusMissing:
				if strings.Contains(doc, first) || ct.Heading != "" {
					t.Errorf("%s %s: MISSING but its text or heading is there", c.Name, ct.Clause)
				}
			case ct.Variant == VariantVerbatim:
				if !strings.Contains(doc, std[ct.Clause]) {
					t.Errorf("%s %s: verbatim but not found word for word", c.Name, ct.Clause)
				}
			case ct.Status == review.StatusDeviation:
				if strings.Contains(doc, std[ct.Clause]) {
					t.Errorf("%s %s: DEVIATION but the standard text is there verbatim", c.Name, ct.Clause)
				}
				if ct.NumericChange && strings.Join(ct.Expected, "|") == strings.Join(ct.Found, "|") {
					t.Errorf("%s %s: numeric change with the same terms %v", c.Name, ct.Clause, ct.Found)
				}
			}
			if ct.Status != review.StatusMissing && ct.Placement != PlacedUnheaded && !strings.Contains(doc, ct.Heading) {
				t.Errorf("%s %s: heading %q not in the document", c.Name, ct.Clause, ct.Heading)
			}
		}
	}
	for _, k := range []string{review.StatusMatch, review.StatusDeviation, review.StatusMissing,
		PlacedSection, PlacedSubsection, PlacedUnlisted, PlacedUnheaded} {
		if seen[k] == 0 {
			t.Errorf("40 contracts without a single %q clause", k)
		}
	}
}

func TestFlowAndParagraphsAgree(t *testing.T) {
	for _, c := range generate(t, 3, 10) {
		n, breaks := 0, 0
		for _, b := range c.Flow.Blocks {
			if b.Kind == testdocs.PageBreak {
				breaks++
				continue
			}
			n++
		}
		if n != len(c.Paragraphs) {
			t.Errorf("%s: %d blocks with text, %d paragraphs", c.Name, n, len(c.Paragraphs))
		}
		if c.Flow.Footer == "" {
			t.Errorf("%s: no running footer", c.Name)
		}
		last := c.Paragraphs[len(c.Paragraphs)-1].Pages
		if last[len(last)-1] < 3 {
			t.Errorf("%s: a contract of %d pages, want a few", c.Name, last[len(last)-1])
		}
		for _, p := range c.Paragraphs {
			if strings.Contains(p.Text, "{page}") {
				t.Errorf("%s: running footer text in the paragraphs", c.Name)
			}
		}
	}
}

func TestEval(t *testing.T) {
	truth := []Truth{{Contract: "c1", Clauses: []ClauseTruth{
		{Clause: "a", Status: review.StatusMatch},
		{Clause: "b", Status: review.StatusDeviation, NumericChange: true},
		{Clause: "c", Status: review.StatusDeviation},
		{Clause: "d", Status: review.StatusMissing},
		{Clause: "e", Status: review.StatusDeviation, NumericChange: true},
	}}}
	res := &review.Result{Findings: []review.Finding{
		{Clause: "a", Status: review.StatusMatch},
		{Clause: "b", Status: review.StatusDeviation, NumericChange: true},
		{Clause: "c", Status: review.StatusMatch}, // a false MATCH
		{Clause: "d", Status: review.StatusMissing},
		{Clause: "e", Status: review.StatusDeviation}, // status right, numeric change missed
	}}
	rep, err := Eval(truth, map[string]*review.Result{"c1": res})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Clauses != 5 || rep.StatusCorrect != 4 || rep.LabelCorrect != 3 || rep.FalseMatch != 1 ||
		rep.NumericTotal != 2 || rep.NumericCaught != 1 {
		t.Errorf("report %+v", rep)
	}
	if rep.Confusion[LabelText][LabelMatch] != 1 || rep.Confusion[LabelNumeric][LabelText] != 1 {
		t.Errorf("confusion %v", rep.Confusion)
	}
	if got := rep.Accuracy(); got != 0.8 {
		t.Errorf("accuracy %v", got)
	}
	table := rep.Format(10)
	for _, want := range []string{"status right", "80.0%", "false MATCH             1", "c1 c "} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if _, err := Eval(truth, map[string]*review.Result{}); err == nil {
		t.Error("a truth without a result must be an error")
	}
}

func TestWriteContract(t *testing.T) {
	c := generate(t, 1, 1)[0]
	dir := t.TempDir()
	if err := WriteContract(dir, &c); err != nil {
		t.Fatal(err)
	}
	var truth Truth
	b, err := os.ReadFile(filepath.Join(dir, c.Name+".truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil || truth.Contract != c.Name || len(truth.Clauses) == 0 {
		t.Errorf("truth %+v, %v", truth, err)
	}
	for _, suffix := range []string{".flow.json", ".paragraphs.json"} {
		if _, err := os.Stat(filepath.Join(dir, c.Name+suffix)); err != nil {
			t.Error(err)
		}
	}
}

func TestNoisy(t *testing.T) {
	ps := []Paragraph{{Text: strings.Repeat("The Licensor shall promptly notify the other party in writing. ", 20), Pages: []int{1, 2}}}
	a, b := Noisy(ps, 1, 0.01), Noisy(ps, 1, 0.01)
	if a[0].Text != b[0].Text {
		t.Error("same seed, different noise")
	}
	if a[0].Text == ps[0].Text {
		t.Error("no noise at 1%")
	}
	if ps[0].Text != strings.Repeat("The Licensor shall promptly notify the other party in writing. ", 20) {
		t.Error("Noisy changed its input")
	}
	diff := 0
	for i := range min(len(a[0].Text), len(ps[0].Text)) {
		if a[0].Text[i] != ps[0].Text[i] {
			diff++
			break
		}
	}
	if diff == 0 && len(a[0].Text) == len(ps[0].Text) {
		t.Error("noise left the text unchanged")
	}
	split := SplitAcrossPages(ps)
	if len(split) != 2 || split[0].Pages[0] != 1 || split[1].Pages[0] != 2 {
		t.Errorf("split %+v", split)
	}
}
