package review

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// The issue's example: a two-page services agreement whose "3. Term and
// Termination" holds the three-year term, termination for convenience
// word for word, and termination for breach with a thirty-day cure
// period.
const (
	termSentence = "This Agreement begins on the Effective Date and continues for three (3) years."
	tfcSentences = "Either party may terminate this Agreement for convenience at any time upon sixty (60) days' prior " +
		"written notice to the other party. Upon such termination, Customer shall pay all fees for Services performed " +
		"through the effective date of termination, and Provider shall refund any prepaid fees for Services not yet performed."
	cureSentence = "Either party may terminate this Agreement by written notice if the other party materially breaches it " +
		"and fails to cure the breach within thirty (30) days after receiving notice of it."
)

func servicesAgreement(section3 ...string) []Paragraph {
	ps := []Paragraph{
		{Text: "SERVICES AGREEMENT", Pages: []int{1}},
		{Text: "1. Services", Pages: []int{1}},
		{Text: "Provider shall perform the services described in each statement of work.", Pages: []int{1}},
		{Text: "2. Fees", Pages: []int{1}},
		{Text: "Customer shall pay the fees set out in each statement of work.", Pages: []int{1}},
		{Text: "3. Term and Termination", Pages: []int{2}},
	}
	for _, t := range section3 {
		ps = append(ps, Paragraph{Text: t, Pages: []int{2}})
	}
	return append(ps, Paragraph{Text: "4. Relationship", Pages: []int{2}},
		Paragraph{Text: "The parties are independent contractors.", Pages: []int{2}})
}

func finding(t *testing.T, pb *playbook.Playbook, ps []Paragraph, clause string) *Finding {
	t.Helper()
	r, err := Analyze(ps, pb)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Findings {
		if r.Findings[i].Clause == clause {
			return &r.Findings[i]
		}
	}
	t.Fatalf("no finding for %s", clause)
	return nil
}

// TestClauseInCombinedSection: termination for convenience is found
// inside "Term and Termination", in its own paragraphs or run into one
// with the term and the cure period, with or without the section's
// heading as a synonym, and compared on its own sentences: the term and
// the cure period are not its key terms.
func TestClauseInCombinedSection(t *testing.T) {
	def, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	withHeading, err := playbook.ParsePlaybook("p.yaml", []byte("name: p\nclauses:\n  termination_for_convenience:\n"+
		"    headings: [Term and Termination]\n    standard_text: >-\n      "+tfcSentences+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string][]Paragraph{
		"paragraphs of their own": servicesAgreement(termSentence, tfcSentences, cureSentence),
		"one paragraph":           servicesAgreement(termSentence + " " + tfcSentences + " " + cureSentence),
		"numbered paragraphs":     servicesAgreement("3.1 "+termSentence, "3.2 "+tfcSentences, "3.3 "+cureSentence),
	}
	for name, ps := range layouts {
		for _, pb := range []*playbook.Playbook{def, withHeading} {
			f := finding(t, pb, ps, "termination_for_convenience")
			if f.Status != StatusMatch {
				t.Errorf("%s (%s): %s numeric=%v, want MATCH; text %q", name, pb.Name, f.Status, f.NumericChange, f.Text)
				continue
			}
			l := f.Location
			if l == nil || l.Section != "3. Term and Termination" || l.Page != 2 || l.FirstSentence != 2 || l.LastSentence != 3 ||
				l.SectionSentences != 4 {
				t.Errorf("%s (%s): location %+v, want sentences 2-3 of 4 of 3. Term and Termination on page 2", name, pb.Name, l)
			}
		}
	}
}

// TestCombinedSectionStatuses: a clause changed inside a combined section
// is a DEVIATION on its own terms; a sentence added to it in its
// paragraph belongs to it; a neighbouring provision alone does not make
// it present.
func TestCombinedSectionStatuses(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	ninety := "Either party may terminate this Agreement for convenience at any time upon ninety (90) days' prior " +
		"written notice to the other party. Upon such termination, Customer shall pay all fees for Services performed " +
		"through the effective date of termination, and Provider shall refund any prepaid fees for Services not yet performed."
	tests := []struct {
		name    string
		ps      []Paragraph
		status  string
		numeric bool
	}{
		{"notice period changed", servicesAgreement(termSentence, ninety, cureSentence), StatusDeviation, true},
		{"a fee added in its paragraph", servicesAgreement(termSentence, tfcSentences+
			" Customer shall also pay an early termination fee equal to two (2) months of fees.", cureSentence), StatusDeviation, true},
		{"a condition added in its paragraph", servicesAgreement(termSentence, tfcSentences+
			" Such notice may not be given during a statement of work.", cureSentence), StatusDeviation, false},
		{"only termination for breach", servicesAgreement(termSentence, cureSentence), StatusMissing, false},
	}
	for _, tt := range tests {
		f := finding(t, pb, tt.ps, "termination_for_convenience")
		if f.Status != tt.status || f.NumericChange != tt.numeric {
			t.Errorf("%s: %s numeric=%v, want %s numeric=%v; text %q", tt.name, f.Status, f.NumericChange, tt.status, tt.numeric, f.Text)
		}
	}
}

// TestTermChangesDirection: a changed pinned term says which way it
// moved and, with worse_if, whether that is worse.
func TestTermChangesDirection(t *testing.T) {
	pb, err := playbook.ParsePlaybook("p.yaml", []byte("name: p\nclauses:\n  termination_for_convenience:\n"+
		"    standard_text: >-\n      "+tfcSentences+"\n    key_terms:\n      notice_period:\n        text: sixty (60) days\n        worse_if: lower\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		period, change, verdict string
	}{{"thirty (30) days'", result.ChangeLower, result.VerdictWorse}, {"ninety (90) days'", result.ChangeHigher, result.VerdictBetter},
		{"three (3) months'", result.ChangeHigher, result.VerdictBetter}} {
		text := "Either party may terminate this Agreement for convenience at any time upon " + tt.period + " prior " +
			"written notice to the other party. Upon such termination, Customer shall pay all fees for Services performed " +
			"through the effective date of termination, and Provider shall refund any prepaid fees for Services not yet performed."
		f := finding(t, pb, servicesAgreement(termSentence, text, cureSentence), "termination_for_convenience")
		if !f.NumericChange || len(f.TermChanges) != 1 {
			t.Errorf("%s: numeric=%v changes %+v, want one change", tt.period, f.NumericChange, f.TermChanges)
			continue
		}
		c := f.TermChanges[0]
		if c.Name != "notice_period" || c.Change != tt.change || c.Verdict != tt.verdict || c.Expected != "sixty (60) days" {
			t.Errorf("%s: change %+v, want notice_period %s, %s", tt.period, c, tt.change, tt.verdict)
		}
	}
}
