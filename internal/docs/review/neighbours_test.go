package review

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
)

// standardText is the default playbook's standard text of a clause.
func standardText(t *testing.T, pb *playbook.Playbook, key string) string {
	t.Helper()
	for _, c := range pb.Clauses {
		if c.Key == key {
			return c.StandardText
		}
	}
	t.Fatalf("no clause %s in the default playbook", key)
	return ""
}

func defaultPB(t *testing.T) *playbook.Playbook {
	t.Helper()
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// contract is a short agreement with the given sections ("N. Title" then
// paragraphs).
func contract(sections ...[]string) []Paragraph {
	ps := []Paragraph{{Text: "SERVICES AGREEMENT", Pages: []int{1}},
		{Text: "1. Services", Pages: []int{1}},
		{Text: "Provider shall perform the services described in each statement of work.", Pages: []int{1}}}
	for _, s := range sections {
		for _, t := range s {
			ps = append(ps, Paragraph{Text: t, Pages: []int{1}})
		}
	}
	return ps
}

// A sentence a drafter added after the clause, in a section whose
// heading names the clause's subject in words no playbook heading uses,
// is part of the clause: the clause is a DEVIATION, never a MATCH that
// leaves the addition out.
func TestAdditionUnderTopicalHeadingIsCompared(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "dispute_resolution")
	ps := contract([]string{"17. Resolving Disputes", "17.1 " + std,
		"17.2 Either party may seek interim relief from any competent court at any time."},
		[]string{"18. Relationship", "The parties are independent contractors."})
	f := finding(t, pb, ps, "dispute_resolution")
	if f.Status == StatusMatch || !strings.Contains(f.Text, "interim relief") {
		t.Fatalf("%s, text %q: want a DEVIATION that includes the added sentence", f.Status, f.Text)
	}
	// Without the addition the same layout matches.
	ps = contract([]string{"17. Resolving Disputes", "17.1 " + std},
		[]string{"18. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "dispute_resolution"); f.Status != StatusMatch {
		t.Fatalf("the standard text alone: %s, want MATCH", f.Status)
	}
}

// An untitled numbered paragraph after a titled one that refers back to
// it ("such events") goes on with the clause.
func TestUntitledParagraphReferringBackJoins(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "force_majeure")
	ps := contract([]string{"20. General", "20.1 Entire Agreement. This Agreement is the entire agreement between the parties.",
		"20.2 Events Outside a Party's Control. " + std,
		"20.3 Provider shall maintain a business continuity plan designed to limit the effect of such events.",
		"20.4 Waiver. A failure to enforce a right is not a waiver of it."})
	f := finding(t, pb, ps, "force_majeure")
	if f.Status == StatusMatch || !strings.Contains(f.Text, "continuity plan") {
		t.Fatalf("%s, text %q: want a DEVIATION that includes the business continuity sentence", f.Status, f.Text)
	}
	if strings.Contains(f.Text, "waiver") {
		t.Fatalf("the next titled provision joined: %q", f.Text)
	}
}

// A drafter's one-sentence assignment clause in a general section is
// found by its one topic word when the contract uses that word nowhere
// else; "Termination for Cause" is not termination for convenience
// though "terminate" is just as rare there.
func TestRareTopicWordLocatesShortClause(t *testing.T) {
	pb := defaultPB(t)
	short := "15.4 Neither party may assign this Agreement without the other party's consent, except that Provider may assign it to an affiliate on ten (10) days' notice."
	ps := contract([]string{"15. General", "15.1 Entire Agreement. This Agreement is the entire agreement between the parties.",
		short, "15.5 Waiver. A failure to enforce a right is not a waiver of it."})
	f := finding(t, pb, ps, "assignment")
	if f.Status == StatusMissing || !strings.Contains(f.Text, "affiliate") {
		t.Fatalf("%s, text %q: want the short assignment clause found", f.Status, f.Text)
	}
	cause := contract([]string{"3. Termination for Cause", "Either party may terminate this Agreement with immediate effect by written notice " +
		"if the other party commits a material breach and fails to remedy it within thirty (30) days after being notified of it."},
		[]string{"4. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, cause, "termination_for_convenience"); f.Status != StatusMissing {
		t.Fatalf("termination for cause taken as termination for convenience: %s, text %q", f.Status, f.Text)
	}
}

// A drafter's one-line notices clause, with two of the clause's own
// words (courier, email) and little else of its standard text, is the
// clause, changed: not MISSING.
func TestShortClauseWithOwnWordsIsFound(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"15. General", "15.5 This Agreement is the entire agreement between the parties.",
		"15.6 Notices must be in writing and are effective two (2) business days after sending by courier or on the day of sending by email.",
		"15.7 A failure to enforce a right is not a waiver of it."})
	f := finding(t, pb, ps, "notices")
	if f.Status == StatusMissing || !strings.Contains(f.Text, "courier") {
		t.Fatalf("%s, text %q: want the short notices clause found", f.Status, f.Text)
	}
}

// A one-sentence arbitration clause has five of dispute resolution's own
// words though it is short beside the standard text; a non-solicitation
// clause that "recruit"s "staff" is about what the standard text's
// "solicit" and "employees" are. Both are found, changed.
func TestShortClauseInOtherWordsIsFound(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"18. Law and Disputes", "18.1 This Agreement is governed by the laws of France.",
		"18.2 Disputes shall be finally resolved by arbitration under the Rules of Arbitration of the International " +
			"Chamber of Commerce by three (3) arbitrators seated in Paris, France."},
		[]string{"19. General", "19.1 A failure to enforce a right under this Agreement is not a waiver of that right.",
			"19.2 Neither party will, while this Agreement is in force or during the twelve (12) months after it ends, recruit " +
				"or employ any member of the other party's staff who was involved in the Services, unless the other party agrees in writing."})
	if f := finding(t, pb, ps, "dispute_resolution"); f.Status == StatusMissing || !strings.Contains(f.Text, "Chamber of Commerce") {
		t.Errorf("dispute resolution: %s, text %q: want the arbitration sentence", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "non_solicitation"); f.Status == StatusMissing || !strings.Contains(f.Text, "recruit") {
		t.Errorf("non-solicitation: %s, text %q: want the recruiting sentence", f.Status, f.Text)
	}
}

// A heading made of a clause's one-word name and a word naming no other
// clause ("Giving Notice", "Limited Warranty") holds the clause when its
// text is like it, though no playbook lists that heading; one whose other
// word names another clause ("Termination Notice") does not make it the
// clause's.
func TestModifiedTitleHoldsClause(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"16. Giving Notice", "16.1 Notices shall be in writing and shall be deemed received seven (7) days after posting or, if sent by email, when sent."},
		[]string{"17. Relationship", "The parties are independent contractors."})
	f := finding(t, pb, ps, "notices")
	if f.Status == StatusMissing || f.Heading != "16. Giving Notice" {
		t.Fatalf("%s under %q: want the clause found under its heading", f.Status, f.Heading)
	}
	an := newAnalyzer(ps)
	var specs []*clauseSpec
	for i := range pb.Clauses {
		specs = append(specs, prepareClause(&pb.Clauses[i], i))
	}
	setOwnWords(an.t, specs)
	for _, c := range specs {
		if c.clause.Key != "notices" {
			continue
		}
		for _, title := range []string{"Giving Notice", "Formal Notices"} {
			if !c.modifiedTitle(titleWords(title), specs) {
				t.Errorf("%q: not a modified title of Notices", title)
			}
		}
		for _, title := range []string{"Termination Notice", "Notice Period Under Insurance"} {
			if c.modifiedTitle(titleWords(title), specs) {
				t.Errorf("%q: taken as a modified title of Notices", title)
			}
		}
	}
}

// A clause whose second sentence a drafter numbered as a paragraph of its
// own, past the titled subsection that holds the first, is found whole:
// "17.5 Choice of Law and Courts. <first sentence>" then "17.6 <second>"
// is the standard governing-law clause, a MATCH.
func TestStandardSentenceAfterSubsection(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "governing_law")
	first, second, ok := strings.Cut(std, ". ")
	if !ok {
		t.Fatalf("standard text %q has one sentence", std)
	}
	ps := contract([]string{"17. General", "17.4 Counterparts. This Agreement may be signed in counterparts.",
		"17.5 Choice of Law and Courts. " + first + ".", "17.6 " + second},
		[]string{"18. Relationship", "The parties are independent contractors."})
	f := finding(t, pb, ps, "governing_law")
	if f.Status != StatusMatch {
		t.Fatalf("%s, text %q: want MATCH", f.Status, f.Text)
	}
}

// Table cells extraction put after a clause in its own section ("Consultant,
// per day") are not part of it: the verbatim clause is a MATCH.
func TestFragmentsAfterClauseLeftOut(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"14. Dispute Resolution. " + standardText(t, pb, "dispute_resolution"), "Consultant, per day", "Senior per day", "consultant,"},
		[]string{"15. Relationship", "The parties are independent contractors."})
	f := finding(t, pb, ps, "dispute_resolution")
	if f.Status != StatusMatch {
		t.Fatalf("%s, text %q: want MATCH", f.Status, f.Text)
	}
}
