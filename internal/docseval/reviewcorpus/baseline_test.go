package reviewcorpus

import (
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review"
)

// baseline is the published approach the analysis replaces: a heading
// regex built from the clause key, the next paragraph as the clause, and
// difflib's character ratio above 0.85 for MATCH.
func baseline(paras []Paragraph, pb *playbook.Playbook) *review.Result {
	r := &review.Result{}
	for _, c := range pb.Clauses {
		words := strings.Split(c.Key, "_")
		re := regexp.MustCompile(`(?i)^[\d.\s]*` + strings.Join(words, `\W+`) + `\b`)
		f := review.Finding{Clause: c.Key, Status: review.StatusMissing}
		for i, p := range paras {
			if !re.MatchString(p.Text) {
				continue
			}
			text := re.ReplaceAllString(p.Text, "")
			if len(strings.Fields(text)) < 5 && i+1 < len(paras) {
				text = paras[i+1].Text
			}
			m := difflib.NewMatcher(strings.Split(strings.TrimSpace(text), ""), strings.Split(c.StandardText, ""))
			f.Status = review.StatusDeviation
			if m.Ratio() > 0.85 {
				f.Status = review.StatusMatch
			}
			break
		}
		r.Findings = append(r.Findings, f)
	}
	return r
}

// TestBaseline measures the baseline on the same corpus, to show the
// corpus is not one that any approach gets right.
func TestBaseline(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Generate(Options{Seed: *corpusSeed, Contracts: *corpusSize})
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]*review.Result{}
	var truth []Truth
	for _, c := range cs {
		results[c.Name] = baseline(c.Paragraphs, pb)
		truth = append(truth, c.Truth)
	}
	rep, err := Eval(truth, results)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("baseline (key regex + char ratio > 0.85), clean paragraphs:\n%s", rep.Format(0))
	if rep.Accuracy() > 0.9 {
		t.Errorf("baseline accuracy %.3f: the corpus is too easy to tell approaches apart", rep.Accuracy())
	}
}
