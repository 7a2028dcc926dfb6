package review

import (
	"strings"
	"testing"
)

// How far a located clause reaches. Each case failed before the rule
// named in it.

// Under a heading that names the clause beside another subject, a
// paragraph after it that opens like a provision of its own goes on with
// it when it has two words of the clause's standard text and names no
// other clause's subject ("interim relief from any competent court" after
// the arbitration clause); a companion paragraph about something else
// does not, nor does another clause's paragraph with words of this one
// (wordsShared, otherSubject).
func TestProvisionUnderTheClauseHeadingJoinsOnItsWords(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "dispute_resolution")
	after := []string{"16. Relationship", "The parties are independent contractors."}
	for _, heading := range []string{"15. Escalation and Arbitration", "15. Applicable Law and Dispute Resolution"} {
		ps := contract([]string{heading, "15.1 " + std, "15.2 Either party may seek interim relief from any competent court at any time."}, after)
		f := finding(t, pb, ps, "dispute_resolution")
		if f.Status != StatusDeviation || !strings.Contains(f.Text, "interim relief") {
			t.Fatalf("under %q: %s, text %q: want a DEVIATION holding the interim relief", heading, f.Status, f.Text)
		}
		ps = contract([]string{heading, "15.1 " + std, "15.2 This Agreement is signed in two originals, one for each party."}, after)
		if f := finding(t, pb, ps, "dispute_resolution"); f.Status != StatusMatch {
			t.Fatalf("under %q, before the originals: %s, text %q: want MATCH", heading, f.Status, f.Text)
		}
	}
	// Another drafter's indemnity after the cap shares "damages" and
	// "costs" with the cap's standard text, and names indemnity.
	ps := contract([]string{"8. Liability and Indemnities", "8.1 " + standardText(t, pb, "limitation_of_liability"),
		"8.2 Provider shall hold harmless, defend and indemnify Customer and its personnel from and against third-party claims " +
			"that the Services violate any patent, copyright, trade secret or other intellectual property right, including " +
			"resulting damages, fines, costs and reasonable attorneys' fees."}, after)
	if f := finding(t, pb, ps, "limitation_of_liability"); f.Status != StatusMatch {
		t.Fatalf("the cap before a reworded indemnity: %s, text %q: want MATCH", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "indemnification"); f.Status != StatusDeviation || !strings.Contains(f.Text, "hold harmless") {
		t.Fatalf("the reworded indemnity: %s, text %q: want a DEVIATION", f.Status, f.Text)
	}
}

// Under a title of the clause's own in a general section ("14.3
// Assignment and Transfer."), the untitled numbered paragraph after it is
// read as the clause's section would be.
func TestUntitledSiblingAfterOwnTitleJoins(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "assignment")
	ps := contract([]string{"14. General",
		"14.1 Waiver. A failure to enforce a right under this Agreement is not a waiver of that right.",
		"14.2 Assignment and Transfer. " + std,
		"14.3 This Agreement binds and benefits the parties and their permitted successors and assigns.",
		"14.4 Costs. Each party bears its own costs of negotiating and signing this Agreement."})
	f := finding(t, pb, ps, "assignment")
	if f.Status != StatusDeviation || !strings.Contains(f.Text, "binds and benefits") || strings.Contains(f.Text, "costs") {
		t.Fatalf("%s, text %q: want a DEVIATION holding the successors sentence and not the costs", f.Status, f.Text)
	}
}

// In a section headed for the clause alone, a sentence of another
// clause's standard text ends it: a scan that lost the next heading
// ("15. Disputes") must not make the governing law swallow the
// arbitration clause (otherClause in extend).
func TestOwnSectionStopsAtAnotherClause(t *testing.T) {
	pb := defaultPB(t)
	law, disputes := standardText(t, pb, "governing_law"), standardText(t, pb, "dispute_resolution")
	ps := contract([]string{"14. Governing Law", law, "14.1 " + disputes},
		[]string{"16. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "governing_law"); f.Status != StatusMatch {
		t.Fatalf("governing law: %s, text %q: want MATCH", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "dispute_resolution"); f.Status != StatusMatch {
		t.Fatalf("dispute resolution: %s, text %q: want MATCH", f.Status, f.Text)
	}
}

// OCR reads a heading set in the margin into the first line of its text
// ("3. Invoices 3.1 Provider shall invoice ..."); the subsection number
// restating the heading's tells the heading apart, so the next such
// heading ends the clause (splitSideHeadings).
func TestSideHeadingReadIntoItsFirstLine(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "payment_terms")
	first, rest, _ := strings.Cut(std, ". ")
	ps := contract([]string{"3. Invoices 3.1 " + first + ".", "3.2 " + rest,
		"4. Term; Termination 4.1 This Agreement takes effect on the Effective Date and remains in force for two (2) years."})
	f := finding(t, pb, ps, "payment_terms")
	if f.Status != StatusMatch {
		t.Fatalf("%s, text %q: want MATCH", f.Status, f.Text)
	}
	for _, s := range []string{"3. The fee is 3.5 percent of the charges.", "7. Liability. 7.1 In no event shall ..."} {
		if _, _, ok := splitSideHeading(s); ok {
			t.Errorf("%q split as a side heading", s)
		}
	}
}

// In a paragraph that runs the arbitration clause into the governing law
// ("... Judgment on the award may be entered in any court of competent
// jurisdiction. The laws of Switzerland govern this Agreement."), a
// sentence with a core word of another clause ("govern") and no word of
// this one ends the clause, so governing law is found (otherCore).
func TestRunInParagraphStopsAtAnotherClausesCoreWord(t *testing.T) {
	pb := defaultPB(t)
	std := standardText(t, pb, "dispute_resolution")
	ps := contract([]string{"17. Law, Jurisdiction and Disputes", std + " The laws of Switzerland govern this Agreement. " +
		"The courts of Zurich have exclusive jurisdiction. This Agreement is signed in two originals, one for each party."},
		[]string{"18. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "dispute_resolution"); strings.Contains(f.Text, "Switzerland") {
		t.Fatalf("dispute resolution: %s, text %q: want it to end before the governing law", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "governing_law"); f.Status != StatusDeviation || !f.NumericChange || !strings.Contains(f.Text, "Switzerland") {
		t.Fatalf("governing law: %s numeric=%v, text %q: want a numeric DEVIATION holding the Swiss law", f.Status, f.NumericChange, f.Text)
	}
}

// Under a heading that names the clause's subject in words the
// playbook's headings do not ("Caps and Exclusions"), a short version of
// the clause that opens the section is held to the floor of a heading
// naming the clause (opensTopicalSection).
func TestShortClauseUnderTopicalHeading(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"10. Caps and Exclusions", "Each party's total liability under this Agreement is limited to EUR 500,000 " +
		"in aggregate. Neither party is liable for indirect or consequential loss or lost profits."},
		[]string{"11. Records", "Provider shall keep accurate records of the Services for six (6) years."})
	f := finding(t, pb, ps, "limitation_of_liability")
	if f.Status != StatusDeviation || !strings.Contains(f.Text, "EUR 500,000") {
		t.Fatalf("%s numeric=%v, text %q: want a DEVIATION holding the cap", f.Status, f.NumericChange, f.Text)
	}
}

// A sentence that goes on, in its paragraph, with another clause's
// standard text is no start of this clause: where a scan put the notices
// clause under "14. Governing Law and", the governing law's run does not
// begin with the notices clause's added sentence (continuesOther).
func TestRunDoesNotStartInsideAnotherClausesParagraph(t *testing.T) {
	pb := defaultPB(t)
	notices := standardText(t, pb, "notices")
	ps := contract([]string{"14. Governing Law and",
		"12.1 " + notices + " A party may change its address for notices by giving notice in accordance with this section.",
		"The laws of the State of New York govern this Agreement and any dispute arising from it, excluding any conflict-of-law " +
			"rule that would apply another law. The parties agree that the state and federal courts in New York County have " +
			"exclusive jurisdiction over any such dispute."},
		[]string{"15. Relationship", "The parties are independent contractors."})
	if f := finding(t, pb, ps, "notices"); f.Status != StatusDeviation || !strings.Contains(f.Text, "change its address") {
		t.Fatalf("notices: %s, text %q: want a DEVIATION holding the added sentence", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "governing_law"); strings.Contains(f.Text, "change its address") {
		t.Fatalf("governing law: %s, text %q: want it to start at the laws of New York", f.Status, f.Text)
	}
}

// A short version of the clause that opens a section under a title that
// names neither it nor its subject ("9. Risk Allocation.") is found by
// four of its own and topic words, one a topic word (manySubjectWords).
func TestShortClauseOpeningAnySection(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"9. Risk Allocation. 9.1 Each party's total liability under this Agreement is limited to " +
		"EUR 500,000 in aggregate. Neither party is liable for indirect or consequential loss or lost profits.",
		"9.2 Provider shall indemnify Customer against any third-party intellectual property claim relating to the Services, " +
			"up to a maximum of $1,000,000, on condition that Customer gives written notice within ten (10) business days.",
		"9.3 The parties agree that the allocation of risk in this section is reflected in the fees."},
		[]string{"10. Records", "Provider shall keep accurate records of the Services for six (6) years."})
	f := finding(t, pb, ps, "limitation_of_liability")
	if f.Status != StatusDeviation || !strings.Contains(f.Text, "EUR 500,000") {
		t.Fatalf("%s numeric=%v, text %q: want a DEVIATION holding the cap", f.Status, f.NumericChange, f.Text)
	}
}

// "Change" names assignment only in "Change of Control": a variation
// clause after the assignment clause does not join it (genericWords).
func TestChangeAloneDoesNotNameAssignment(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"16. Boilerplate Provisions",
		"16.1 No person other than the parties may enforce any term of this Agreement.",
		"16.2 " + standardText(t, pb, "assignment"),
		"16.3 No change to this Agreement is valid unless it is in writing and signed by an authorised signatory of each party."})
	if f := finding(t, pb, ps, "assignment"); f.Status != StatusMatch {
		t.Fatalf("%s, text %q: want MATCH", f.Status, f.Text)
	}
}

// "Terminate" and "termination" are one word naming the subject, not the
// two topic words that locate a clause: termination for breach in "Term;
// Termination" is not termination for convenience (families). A name of
// the clause in full ("early termination") still counts as one more
// (namedInFull).
func TestOneWordFamilyIsOneTopicWord(t *testing.T) {
	pb := defaultPB(t)
	term := "4.1 This Agreement takes effect on the Effective Date and remains in force for two (2) years unless terminated earlier in accordance with this section."
	after := []string{"5. Relationship", "The parties are independent contractors."}
	ps := contract([]string{"4. Term; Termination", term,
		"4.2 Either party may terminate this Agreement with immediate effect if the other party is in material breach and has not remedied the breach within twenty (20) business days of a written request to do so.",
		"4.3 On expiry or termination, Provider shall return all Customer data within fourteen (14) days and then delete any copies it holds."}, after)
	if f := finding(t, pb, ps, "termination_for_convenience"); f.Status != StatusMissing {
		t.Fatalf("termination for breach: %s, text %q: want MISSING", f.Status, f.Text)
	}
	ps = contract([]string{"4. Term; Termination", term,
		"4.2 Either party may terminate this Agreement without cause on one hundred twenty (120) days' written notice, and Customer shall pay an early termination fee equal to three (3) months' fees."}, after)
	if f := finding(t, pb, ps, "termination_for_convenience"); f.Status != StatusDeviation || !f.NumericChange {
		t.Fatalf("termination without cause: %s numeric=%v, text %q: want a numeric DEVIATION", f.Status, f.NumericChange, f.Text)
	}
}

// A clause's own section ends at a paragraph numbered for another
// section ("8.2 Provider warrants ..." under "7. Indemnities."), where a
// scan read two columns across and lost section 8's heading; the
// warranty after it is found (foreignNumber).
func TestOwnSectionEndsAtAnotherSectionsNumber(t *testing.T) {
	pb := defaultPB(t)
	ps := contract([]string{"7. Indemnities. " + standardText(t, pb, "indemnification"),
		"8.2 Provider warrants that it will provide the Services diligently, in a workmanlike way and in accordance with industry standards.",
		"Provided Customer gives notice of a breach of this warranty within ninety (90) days after the Services in question, Provider will " +
			"re-perform them at no charge, or, if that fails, refund what Customer paid for them, which is Customer's exclusive remedy.",
		"9. Records. Provider shall keep complete and accurate records of the Services for at least six (6) years."})
	if f := finding(t, pb, ps, "indemnification"); f.Status != StatusMatch {
		t.Fatalf("indemnification: %s, text %q: want MATCH", f.Status, f.Text)
	}
	if f := finding(t, pb, ps, "warranty"); f.Status != StatusDeviation || !strings.Contains(f.Text, "diligently") {
		t.Fatalf("warranty: %s, text %q: want a DEVIATION", f.Status, f.Text)
	}
}
