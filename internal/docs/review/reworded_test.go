package review

import (
	"strings"
	"testing"
)

// Another drafter's one-sentence version of a clause, with a changed
// term, is found and reported as a numeric DEVIATION, never MISSING.
// Each case failed before the rule named in it.
func TestShortRewordingIsFound(t *testing.T) {
	pb := defaultPB(t)
	tests := []struct {
		name, clause, want string
		sections           [][]string
	}{{
		// headingSubjectFloor: a heading one of whose subjects is the
		// clause, and a run with three of its own and topic words.
		name: "under a joint heading", clause: "warranty", want: "re-perform",
		sections: [][]string{{"7. Warranties and Undertakings",
			"7.1 Each party represents that entering into this Agreement does not breach any other agreement binding on it.",
			"7.2 Provider shall re-perform any Services that fail to conform to industry standards if Customer reports the failure within six (6) months after their performance."}},
	}, {
		// coreFloor, by content: a heading the playbook does not know.
		name: "under an unknown heading", clause: "assignment", want: "may not assign",
		sections: [][]string{{"15. Transfer of Rights",
			"Customer may not assign this Agreement within the first two (2) years without Provider's consent; Provider may assign it freely."}},
	}, {
		// coreFloor, by heading: the heading names the clause beside
		// another subject, and the text is short.
		name: "under a joint heading, one core word", clause: "assignment", want: "may not assign",
		sections: [][]string{{"15. Assignment and Novation",
			"15.1 Customer may not assign this Agreement within the first two (2) years without Provider's consent; Provider may assign it freely."}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := contract(append(tc.sections, []string{"16. Relationship", "The parties are independent contractors."})...)
			f := finding(t, pb, ps, tc.clause)
			if f.Status != StatusDeviation || !f.NumericChange || !strings.Contains(f.Text, tc.want) {
				t.Fatalf("%s numeric=%v, text %q: want a numeric DEVIATION holding %q", f.Status, f.NumericChange, f.Text, tc.want)
			}
		})
	}
}

// A core word alone never claims a sentence of another subject: "for
// convenience only" in a definitions section or in a section headed for
// other clauses is not termination for convenience.
func TestCoreWordDoesNotClaimBoilerplate(t *testing.T) {
	pb := defaultPB(t)
	for _, sections := range [][][]string{
		{{"2. Definitions and Interpretation",
			"2.1 Terms defined in a statement of work have the same meaning in this Agreement.",
			"2.2 Headings are for convenience only and do not affect the interpretation of this Agreement."}},
		{{"14. Governing Law and Disputes",
			"This Agreement shall be governed by the laws of the State of New York. This Agreement is written in English, and any translation of it is for convenience only."},
			{"Signed by the authorised representatives of the parties on the date at the top of this Agreement."}},
	} {
		f := finding(t, pb, contract(sections...), "termination_for_convenience")
		if f.Status != StatusMissing {
			t.Fatalf("%s, text %q: want MISSING", f.Status, f.Text)
		}
	}
}

// Key terms compared sentence by sentence: a sentence reworded so far
// that no words align with the standard's still pairs with the standard
// sentence that has its terms, so the same places are no change; other
// places still are.
func TestRewordedSentencesKeepTheirTerms(t *testing.T) {
	pb := defaultPB(t)
	reworded := "New York law, without reference to its choice of law rules, applies to this Agreement. Any action relating to this " +
		"Agreement may be brought only in the state or federal courts in %s, and each party consents to their jurisdiction."
	ps := contract([]string{"17. Choice of Law and Courts", strings.Replace(reworded, "%s", "New York County, New York", 1)})
	f := finding(t, pb, ps, "governing_law")
	if f.Status != StatusDeviation || f.NumericChange || !strings.Contains(f.Text, "New York law") {
		t.Fatalf("same places reworded: %s numeric=%v %+v, text %q: want a DEVIATION with no term change", f.Status, f.NumericChange, f.TermChanges, f.Text)
	}
	ps = contract([]string{"17. Choice of Law and Courts", strings.Replace(reworded, "%s", "Kent County, Delaware", 1)})
	if f := finding(t, pb, ps, "governing_law"); !f.NumericChange {
		t.Fatalf("courts in Delaware for New York: %s numeric=%v text %q, want a term change", f.Status, f.NumericChange, f.Text)
	}
}

// Under a title of the clause's own ("15.2 Law."), the untitled paragraph
// after it that does not open like a provision of its own goes on with
// the clause; the signature block never does.
func TestUntitledParagraphUnderOwnTitleJoins(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "governing_law")
	ps := contract([]string{"15. General",
		"15.1 Counterparts. This Agreement may be signed in counterparts, and all counterparts together form one document.",
		"15.2 Law. " + std,
		"15.3 The United Nations Convention on Contracts for the International Sale of Goods does not apply to this Agreement.",
		"15.4 Waiver. A failure to enforce a right is not a waiver of it."})
	f := finding(t, pb, ps, "governing_law")
	if f.Status != StatusDeviation || !strings.Contains(f.Text, "United Nations") || strings.Contains(f.Text, "Waiver") {
		t.Fatalf("%s, text %q: want a DEVIATION holding the Convention sentence and not the waiver", f.Status, f.Text)
	}

	std = standardText(t, pb, "dispute_resolution")
	ps = contract([]string{"RESOLUTION OF DISPUTES", std,
		"IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date.", "ACME CORP.", "By: ________"})
	if f := finding(t, pb, ps, "dispute_resolution"); f.Status != StatusMatch {
		t.Fatalf("the standard text before the signature block: %s, text %q, want MATCH", f.Status, f.Text)
	}
}

// A paragraph after the clause that opens with the clause's name as its
// subject goes on with it, even as a numbered paragraph of a general
// section.
func TestParagraphOpeningWithTheClauseNameJoins(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "notices")
	ps := contract([]string{"16. Miscellaneous",
		"16.1 This Agreement may be signed in counterparts.",
		"16.2 " + std,
		"16.3 Notices to Customer must be copied to its legal department.",
		"16.4 This Agreement sets out everything the parties have agreed about the Services."})
	f := finding(t, pb, ps, "notices")
	if f.Status != StatusDeviation || !strings.Contains(f.Text, "legal department") || strings.Contains(f.Text, "everything") {
		t.Fatalf("%s, text %q: want a DEVIATION holding the copy to the legal department and nothing after it", f.Status, f.Text)
	}
}

// A word of the clause's key terms ("percent") does not tie a neighbour
// to it: a price adjustment after the payment terms in "Fees and Payment"
// is a provision of its own, and the clause stays a MATCH.
func TestKeyTermWordsDoNotLink(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "payment_terms")
	ps := contract([]string{"2. Fees, Invoicing and Payment",
		"2.1 Customer shall pay the charges set out in Schedule 1, which are fixed for the first contract year.",
		"2.2 " + std,
		"2.3 From the second contract year, Provider may adjust the charges once a year by the change in the consumer price index, up to a maximum of four percent (4%)."},
		[]string{"3. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "payment_terms"); f.Status != StatusMatch {
		t.Fatalf("%s, text %q: want MATCH", f.Status, f.Text)
	}
}

// "This section" in a section that holds two clauses speaks of the whole
// section: a remark with no word of the clause and no key term does not
// join the clause before it, but a cap "under this section" does.
func TestSectionReferenceInSharedSection(t *testing.T) {
	pb := defaultPB(t)
	indemnity, cap := standardText(t, pb, "indemnification"), standardText(t, pb, "limitation_of_liability")
	ps := contract([]string{"9. Indemnities and Liability", "9.1 " + indemnity, "9.2 " + cap,
		"9.3 The parties agree that the allocation of risk in this section is reflected in the fees."},
		[]string{"10. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "limitation_of_liability"); f.Status != StatusMatch {
		t.Fatalf("a remark on the section after the cap: %s, text %q, want MATCH", f.Status, f.Text)
	}
	ps = contract([]string{"9. Risk Allocation", "9.1 " + cap, "9.2 " + indemnity,
		"9.3 The total due under this section is capped at $2,000,000."},
		[]string{"10. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "indemnification"); f.Status != StatusDeviation || !f.NumericChange {
		t.Fatalf("a cap under this section after the indemnity: %s numeric=%v, text %q, want a numeric DEVIATION", f.Status, f.NumericChange, f.Text)
	}
}

// "16.1 The laws of Switzerland govern this Agreement." is a provision,
// not a run-in title ("16.1 Governing law."), and a short version of the
// clause under a heading that names it beside another subject is found
// even where a longer run of the section is more like the standard text.
func TestShortGoverningLawClause(t *testing.T) {
	pb := defaultPB(t)
	law := "16.1 The laws of Switzerland govern this Agreement. The courts of Zurich have exclusive jurisdiction."
	for _, section := range [][]string{
		{"16. Miscellaneous", "16.1 Costs. Each party bears its own costs of negotiating and signing this Agreement.",
			strings.Replace(law, "16.1", "16.2", 1), "16.3 This Agreement is signed in two originals, one for each party."},
		{"16. Applicable Law and Dispute Resolution", law, "16.2 This Agreement is signed in two originals, one for each party."},
	} {
		f := finding(t, pb, contract(section, []string{"17. Relationship", "The parties are independent contractors."}), "governing_law")
		if f.Status != StatusDeviation || !f.NumericChange || !strings.Contains(f.Text, "Switzerland") {
			t.Fatalf("under %q: %s numeric=%v, text %q: want a numeric DEVIATION holding the Swiss law", section[0], f.Status, f.NumericChange, f.Text)
		}
	}
}

// A sentence that opens with the clause's name is the clause when it is
// somewhat like it, in a general section under no title of its own.
func TestSentenceOpeningWithTheClauseNameIsFound(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"16. Miscellaneous",
		"16.1 This Agreement may be signed in counterparts.",
		"16.2 Notices shall be in writing and shall be deemed received seven (7) days after posting or, if sent by email, when sent.",
		"16.3 This Agreement sets out everything the parties have agreed about the Services."})
	f := finding(t, pb, ps, "notices")
	if f.Status != StatusDeviation || !f.NumericChange || !strings.Contains(f.Text, "seven (7) days") {
		t.Fatalf("%s numeric=%v, text %q: want a numeric DEVIATION holding the notice period", f.Status, f.NumericChange, f.Text)
	}
}
