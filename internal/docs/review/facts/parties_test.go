package facts

import "testing"

// Labels in single quotes (UK drafting: ('the Customer')) and the mixed
// curly quotes tesseract reads off double ones (‘Customer’) name roles as
// double quotes do; an apostrophe in a name does not make a label.
func TestPartyLabelsInSingleQuotes(t *testing.T) {
	for _, tc := range []struct {
		preamble string
		want     [][2]string // name, role
	}{
		{"This Agreement is made between Umbrella Health Systems, Inc., a California corporation (‘Customer’), and Stark Logistics LLC, a Nevada limited liability company (\"Provider\").",
			[][2]string{{"Umbrella Health Systems, Inc.", "Customer"}, {"Stark Logistics LLC", "Provider"}}},
		{"THIS AGREEMENT is made between Harlow & Finch Ltd, a company registered in England ('Supplier') and O'Brien Freight Ltd ('Customer').",
			[][2]string{{"Harlow & Finch Ltd", "Supplier"}, {"O'Brien Freight Ltd", "Customer"}}},
		{"This Agreement (\"Agreement\") is made effective as of the 1st day of April, 2026 (Effective Date\"), by and between Hooli Cloud Services, Inc., a Washington corporation (the “Client”), and Dana Ortiz, an individual (the “Consultant’).",
			[][2]string{{"Hooli Cloud Services, Inc.", "Client"}, {"Dana Ortiz", "Consultant"}}},
	} {
		got := extractParties([]Paragraph{{Text: tc.preamble, Pages: []int{1}}})
		if len(got) != len(tc.want) {
			t.Fatalf("%q: got %+v, want %v", tc.preamble, got, tc.want)
		}
		for i, w := range tc.want {
			if got[i].Name != w[0] || got[i].Role != w[1] {
				t.Errorf("party %d: got %q as %q, want %q as %q", i, got[i].Name, got[i].Role, w[0], w[1])
			}
		}
	}
}

// A definition whose quotes OCR mixed or half lost still defines its term,
// so the term's uses are not reported as undefined.
func TestDefinitionsWithOCRQuotes(t *testing.T) {
	got := Extract([]Paragraph{
		{Text: "This Agreement is made effective as of the 1st day of April, 2026 (Effective Date\"), by and between Hooli Cloud Services, Inc., a Washington corporation (the “Client”), and Dana Ortiz, an individual (the “Consultant’).", Pages: []int{1}},
		{Text: "1.01 The Consultant shall submit a written progress report to the Client every month from the Effective Date.", Pages: []int{1}},
	})
	for _, want := range []string{"Effective Date", "Consultant", "Client"} {
		found := false
		for _, d := range got.DefinedTerms {
			if d.Term == want {
				found = true
				for _, p := range d.Problems {
					if p == "undefined" {
						t.Errorf("%s: reported undefined", want)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: not among the defined terms %+v", want, got.DefinedTerms)
		}
	}
}
