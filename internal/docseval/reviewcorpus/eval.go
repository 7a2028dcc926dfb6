package reviewcorpus

import (
	"fmt"
	"strings"

	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Labels of the confusion matrix: the status, with DEVIATION split by
// numeric_change.
const (
	LabelMatch     = "MATCH"
	LabelNumeric   = "DEVIATION/numeric"
	LabelText      = "DEVIATION/text"
	LabelMissing   = "MISSING"
	LabelNoFinding = "no finding"
)

var labels = []string{LabelMatch, LabelNumeric, LabelText, LabelMissing, LabelNoFinding}

// Report scores review results against the truth.
type Report struct {
	Contracts, Clauses int
	// StatusCorrect counts findings with the right status; LabelCorrect
	// those with the right status and numeric_change.
	StatusCorrect, LabelCorrect int
	// ByStatus tallies by true status.
	ByStatus map[string]*Tally
	// NumericTotal is the clauses with a changed key term; NumericCaught
	// those reported as DEVIATION with numeric_change.
	NumericTotal, NumericCaught int
	// FalseMatch counts MATCH findings for clauses that are not a match.
	FalseMatch int
	// Confusion[truth][result] counts findings by label.
	Confusion map[string]map[string]int
	Mistakes  []Mistake
}

// Tally is a count of clauses and of those right.
type Tally struct{ Total, Correct int }

// Mistake is one wrong finding.
type Mistake struct {
	Contract, Clause, Variant, Placement, Want, Got, Heading string
	Similarity                                               float64
}

// Accuracy is the share of statuses right.
func (r *Report) Accuracy() float64 {
	if r.Clauses == 0 {
		return 0
	}
	return float64(r.StatusCorrect) / float64(r.Clauses)
}

// Shortfalls lists how r falls short of the review targets: at least
// minAcc of the statuses right, every numeric change caught, no false
// MATCH, and at least one contract scored. It is empty when r meets them.
func (r *Report) Shortfalls(minAcc float64) []string {
	if r.Contracts == 0 {
		return []string{"no contracts"}
	}
	var out []string
	if acc := r.Accuracy(); acc < minAcc {
		out = append(out, fmt.Sprintf("status accuracy %.3f, want >= %.2f", acc, minAcc))
	}
	if r.NumericCaught != r.NumericTotal {
		out = append(out, fmt.Sprintf("numeric changes caught %d of %d, want all", r.NumericCaught, r.NumericTotal))
	}
	if r.FalseMatch != 0 {
		out = append(out, fmt.Sprintf("%d false MATCH findings, want none", r.FalseMatch))
	}
	return out
}

func truthLabel(c ClauseTruth) string {
	return label(c.Status, c.NumericChange)
}

func label(status string, numeric bool) string {
	switch {
	case status == reviewresult.StatusDeviation && numeric:
		return LabelNumeric
	case status == reviewresult.StatusDeviation:
		return LabelText
	}
	return status
}

// Eval scores results (by contract name) against the truth. Every truth
// needs a result; a playbook clause with no finding counts as wrong.
func Eval(truth []Truth, results map[string]*reviewresult.Result) (*Report, error) {
	r := &Report{ByStatus: map[string]*Tally{}, Confusion: map[string]map[string]int{}}
	for _, l := range labels {
		r.Confusion[l] = map[string]int{}
	}
	for _, s := range []string{reviewresult.StatusMatch, reviewresult.StatusDeviation, reviewresult.StatusMissing} {
		r.ByStatus[s] = &Tally{}
	}
	for _, t := range truth {
		res := results[t.Contract]
		if res == nil {
			return nil, fmt.Errorf("eval: no result for %s", t.Contract)
		}
		r.Contracts++
		byClause := map[string]*reviewresult.Finding{}
		for i := range res.Findings {
			byClause[res.Findings[i].Clause] = &res.Findings[i]
		}
		for _, c := range t.Clauses {
			r.score(t.Contract, c, byClause[c.Clause])
		}
	}
	return r, nil
}

func (r *Report) score(contract string, c ClauseTruth, f *reviewresult.Finding) {
	r.Clauses++
	want, got := truthLabel(c), LabelNoFinding
	status, sim := "", 0.0
	if f != nil {
		status, sim = f.Status, f.Similarity
		got = label(f.Status, f.NumericChange)
	}
	r.Confusion[want][got]++
	tally := r.ByStatus[c.Status]
	if tally == nil {
		tally = &Tally{}
		r.ByStatus[c.Status] = tally
	}
	tally.Total++
	if status == c.Status {
		r.StatusCorrect++
		tally.Correct++
	}
	if want == got {
		r.LabelCorrect++
	}
	if c.NumericChange {
		r.NumericTotal++
		if got == LabelNumeric {
			r.NumericCaught++
		}
	}
	if status == reviewresult.StatusMatch && c.Status != reviewresult.StatusMatch {
		r.FalseMatch++
	}
	if want != got {
		m := Mistake{Contract: contract, Clause: c.Clause, Variant: c.Variant, Placement: c.Placement,
			Want: want, Got: got, Similarity: sim}
		if f != nil {
			m.Heading = f.Heading
		}
		r.Mistakes = append(r.Mistakes, m)
	}
}

// Format renders the report as a plain-text table, with at most
// maxMistakes mistakes listed.
func (r *Report) Format(maxMistakes int) string {
	var b strings.Builder
	pct := func(n, d int) string {
		if d == 0 {
			return "   -  "
		}
		return fmt.Sprintf("%5.1f%%", 100*float64(n)/float64(d))
	}
	fmt.Fprintf(&b, "contracts %d, clauses %d\n", r.Contracts, r.Clauses)
	fmt.Fprintf(&b, "status right            %s  (%d/%d)\n", pct(r.StatusCorrect, r.Clauses), r.StatusCorrect, r.Clauses)
	fmt.Fprintf(&b, "status+numeric right    %s  (%d/%d)\n", pct(r.LabelCorrect, r.Clauses), r.LabelCorrect, r.Clauses)
	fmt.Fprintf(&b, "numeric changes caught  %s  (%d/%d)\n", pct(r.NumericCaught, r.NumericTotal), r.NumericCaught, r.NumericTotal)
	fmt.Fprintf(&b, "false MATCH             %d\n\n", r.FalseMatch)
	fmt.Fprintf(&b, "%-12s %6s %8s\n", "truth", "total", "right")
	for _, s := range []string{reviewresult.StatusMatch, reviewresult.StatusDeviation, reviewresult.StatusMissing} {
		t := r.ByStatus[s]
		fmt.Fprintf(&b, "%-12s %6d %8s\n", s, t.Total, pct(t.Correct, t.Total))
	}
	fmt.Fprintf(&b, "\nconfusion (rows: truth, columns: result)\n%-18s", "")
	for _, l := range labels {
		fmt.Fprintf(&b, " %17s", l)
	}
	b.WriteByte('\n')
	for _, w := range labels[:4] {
		fmt.Fprintf(&b, "%-18s", w)
		for _, g := range labels {
			fmt.Fprintf(&b, " %17d", r.Confusion[w][g])
		}
		b.WriteByte('\n')
	}
	if len(r.Mistakes) > 0 && maxMistakes > 0 {
		fmt.Fprintf(&b, "\nmistakes (%d, first %d)\n", len(r.Mistakes), min(maxMistakes, len(r.Mistakes)))
	}
	for _, m := range r.Mistakes[:min(maxMistakes, len(r.Mistakes))] {
		fmt.Fprintf(&b, "  %s %-28s %-40s %-16s want %-17s got %-17s sim %.3f heading %q\n",
			m.Contract, m.Clause, m.Variant, m.Placement, m.Want, m.Got, m.Similarity, m.Heading)
	}
	return b.String()
}
