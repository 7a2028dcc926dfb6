package review

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs"
)

const testStandard = "The Licensor shall notify each employee in writing within thirty (30) days, and then pay the " +
	"non-refundable fee of $10,000, unless the parties agree otherwise. Any dispute is governed by the laws of " +
	"the State of New York, without regard to its conflict of laws principles."

func testPlaybook(t *testing.T) *playbook.Playbook {
	t.Helper()
	data := "name: test\nversion: \"1\"\nclauses:\n  notice_fee:\n    title: Notice and Fee\n    headings: [Fee Notice]\n" +
		"    standard_text: >-\n      " + testStandard + "\n    severity: high\n"
	pb, err := playbook.ParsePlaybook("test.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

func analyzeOne(t *testing.T, pb *playbook.Playbook, ps []Paragraph) *Finding {
	t.Helper()
	r, err := Analyze(ps, pb)
	if err != nil {
		t.Fatal(err)
	}
	return &r.Findings[0]
}

// TestStatus runs the status rules on one clause: trivial differences and
// OCR slips are a MATCH; any key-term change is a numeric DEVIATION; a
// one-word rewording is a DEVIATION even at 99% similarity.
func TestStatus(t *testing.T) {
	pb := testPlaybook(t)
	replace := func(old, new string) string { return strings.Replace(testStandard, old, new, 1) }
	tests := []struct {
		name    string
		body    []string
		status  string
		numeric bool
	}{
		{"verbatim", []string{testStandard}, StatusMatch, false},
		{"upper case", []string{strings.ToUpper(testStandard)}, StatusMatch, false},
		{"curly quotes and dashes", []string{replace("non-refundable", "non\u2011refundable")}, StatusMatch, false},
		{"serial comma dropped", []string{replace("days, and then", "days and then")}, StatusMatch, false},
		{"hyphen dropped", []string{replace("non-refundable", "nonrefundable")}, StatusMatch, false},
		{"hyphen as a space", []string{replace("non-refundable", "non refundable")}, StatusMatch, false},
		{"paragraph break", []string{testStandard[:strings.Index(testStandard, " Any")], testStandard[strings.Index(testStandard, "Any"):]}, StatusMatch, false},
		{"extra spaces", []string{replace("shall notify", "shall   notify")}, StatusMatch, false},
		{"OCR: l for i, 0 for o", []string{replace("Licensor shall", "Licens0r sha1l")}, StatusMatch, false},
		{"OCR: rn for m, e for c", []string{replace("employee", "ernployee")}, StatusMatch, false},
		{"OCR: word split and joined", []string{replace("employee in writing", "emp loyee inwriting")}, StatusMatch, false},
		{"OCR: a garbled letter that is no word", []string{replace("otherwise", "otherwlze")}, StatusMatch, false},
		{"number changed in words and digits", []string{replace("thirty (30)", "forty-five (45)")}, StatusDeviation, true},
		{"number changed in digits only", []string{replace("thirty (30)", "thirty (45)")}, StatusDeviation, true},
		{"unit changed", []string{replace("(30) days", "(30) business days")}, StatusDeviation, true},
		{"amount changed", []string{replace("$10,000", "$15,000")}, StatusDeviation, true},
		{"currency changed", []string{replace("$10,000", "€10,000")}, StatusDeviation, true},
		{"jurisdiction changed", []string{replace("New York", "Delaware")}, StatusDeviation, true},
		{"97% similar, one number", []string{replace("thirty (30)", "thirty-one (31)")}, StatusDeviation, true},
		{"shall becomes may", []string{replace("shall notify", "may notify")}, StatusDeviation, false},
		{"not inserted", []string{replace("shall notify", "shall not notify")}, StatusDeviation, false},
		{"Licensor becomes Licensee", []string{replace("Licensor", "Licensee")}, StatusDeviation, false},
		{"employee becomes employer", []string{replace("employee", "employer")}, StatusDeviation, false},
		{"then becomes than", []string{replace("and then pay", "and than pay")}, StatusDeviation, false},
		{"unless becomes if", []string{replace("unless the parties", "if the parties")}, StatusDeviation, false},
		{"without becomes with", []string{replace("without regard", "with regard")}, StatusDeviation, false},
		{"refundable", []string{replace("non-refundable", "refundable")}, StatusDeviation, false},
		{"plural", []string{replace("each employee", "each employees")}, StatusDeviation, false},
		{"a sentence added", []string{testStandard + " The fee is due on signature."}, StatusDeviation, false},
		{"a sentence dropped", []string{testStandard[:strings.Index(testStandard, " Any")]}, StatusDeviation, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := []Paragraph{{Text: "4. FEE NOTICE", Pages: []int{2}}}
			for _, b := range tt.body {
				ps = append(ps, Paragraph{Text: b, Pages: []int{2}})
			}
			ps = append(ps, Paragraph{Text: "5. TERM", Pages: []int{3}}, Paragraph{Text: "One year.", Pages: []int{3}})
			f := analyzeOne(t, pb, ps)
			if f.Status != tt.status || f.NumericChange != tt.numeric {
				t.Errorf("got %s numeric=%v (similarity %.3f), want %s numeric=%v; redline %v",
					f.Status, f.NumericChange, f.Similarity, tt.status, tt.numeric, f.Redline)
			}
			if f.LocatedBy != "heading" || f.Heading != "4. FEE NOTICE" || len(f.Pages) != 1 || f.Pages[0] != 2 {
				t.Errorf("located by %s under %q on %v", f.LocatedBy, f.Heading, f.Pages)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	var gov, tfc, conf string
	for _, c := range pb.Clauses {
		switch c.Key {
		case "governing_law":
			gov = c.StandardText
		case "termination_for_convenience":
			tfc = c.StandardText
		case "confidentiality_term":
			conf = c.StandardText
		}
	}
	filler := "The parties are independent contractors and nothing in this Agreement creates a partnership."
	tests := []struct {
		name, clause string
		paras        []Paragraph
		status, by   string
		heading      string
	}{
		{"subsection of another article", "governing_law", paras("ARTICLE IX", "GENERAL", "Section 9.01 Relationship. "+filler,
			"Section 9.02 Choice of Law; Venue. "+gov), StatusMatch, "heading", "Section 9.02 Choice of Law; Venue."},
		{"synonym with & and plural", "termination_for_convenience", paras("12. EARLY TERMINATIONS", tfc, "13. RELATIONSHIP", filler),
			StatusMatch, "heading", "12. EARLY TERMINATIONS"},
		{"sentence-case subsection", "governing_law", paras("9. GENERAL", "9.1 Governing law", gov, "9.2 Relationship", filler),
			StatusMatch, "heading", "9.1 Governing law"},
		{"no heading: by content", "governing_law", paras("9. MISCELLANEOUS", filler, gov),
			StatusMatch, "content", "9. MISCELLANEOUS"},
		{"unlisted heading: by content", "governing_law", paras("9. LEGAL FRAMEWORK", gov, "10. RELATIONSHIP", filler),
			StatusMatch, "content", "9. LEGAL FRAMEWORK"},
		{"the subsection that matches, not the whole article", "confidentiality_term", paras("5. CONFIDENTIALITY",
			"5.1 Definition. Confidential Information means non-public information marked as confidential.",
			"5.2 Duration. "+conf, "5.3 Return. Each party returns the other's information on request."),
			StatusMatch, "heading", "5.2 Duration."},
		{"similar clause is not the missing one", "termination_for_convenience", paras("8. TERMINATION FOR CAUSE",
			"Either party may terminate this Agreement upon written notice if the other party materially breaches it and fails to cure the breach within thirty (30) days after receiving notice of it."),
			StatusMissing, "", ""},
		{"missing", "governing_law", paras("1. RELATIONSHIP", filler), StatusMissing, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Analyze(tt.paras, pb)
			if err != nil {
				t.Fatal(err)
			}
			var f *Finding
			for i := range r.Findings {
				if r.Findings[i].Clause == tt.clause {
					f = &r.Findings[i]
				}
			}
			if f.Status != tt.status || f.LocatedBy != tt.by || f.Heading != tt.heading {
				t.Errorf("got %s by %q under %q (similarity %.3f), want %s by %q under %q",
					f.Status, f.LocatedBy, f.Heading, f.Similarity, tt.status, tt.by, tt.heading)
			}
		})
	}
}

func TestAnalyzeErrors(t *testing.T) {
	pb := testPlaybook(t)
	many := make([]Paragraph, MaxParagraphs+1)
	tests := []struct {
		name  string
		paras []Paragraph
		pb    *playbook.Playbook
		code  string
	}{
		{"no playbook", paras("x"), nil, docs.CodeInvalidArg},
		{"empty playbook", paras("x"), &playbook.Playbook{Name: "e"}, docs.CodeInvalidArg},
		{"too many paragraphs", many, pb, docs.CodeTooLarge},
		{"paragraph too long", paras(strings.Repeat("a ", MaxParagraphBytes)), pb, docs.CodeTooLarge},
		{"no words", paras("  ", "\u00a0", "- - -"), pb, docs.CodeUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Analyze(tt.paras, tt.pb)
			var de *docs.Error
			if !errors.As(err, &de) || de.Code != tt.code {
				t.Fatalf("error %v, want code %s", err, tt.code)
			}
		})
	}
}

func TestAnalyzeDeterministicAndBounded(t *testing.T) {
	pb := testPlaybook(t)
	long := strings.Repeat("The parties shall cooperate in good faith on every matter. ", 400)
	ps := paras("4. FEE NOTICE", testStandard, long)
	var first []byte
	for i := range 3 {
		r, err := Analyze(ps, pb)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatal("two runs on the same input differ")
		}
		f := r.Findings[0]
		if !f.Truncated || len(f.Text) > 6000 {
			t.Errorf("text of %d bytes, truncated=%v: want it cut to the limit", len(f.Text), f.Truncated)
		}
	}
}

func TestRedline(t *testing.T) {
	pb := testPlaybook(t)
	body := strings.Replace(testStandard, "thirty (30) days", "forty-five (45) days", 1)
	f := analyzeOne(t, pb, paras("4. FEE NOTICE", body))
	var del, ins []string
	for _, s := range f.Redline {
		switch s.Op {
		case "delete":
			del = append(del, s.Text)
		case "insert":
			ins = append(ins, s.Text)
		}
	}
	if strings.Join(del, "|") != "thirty (30)" || strings.Join(ins, "|") != "forty-five (45)" {
		t.Errorf("deleted %q, inserted %q", del, ins)
	}
	if f.ExpectedValues["duration_1"] != "thirty (30) days" || f.FoundValues["duration_1"] != "forty-five (45) days" {
		t.Errorf("values %v / %v", f.ExpectedValues, f.FoundValues)
	}
}
