package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func validResult() *Result {
	fs := []Finding{
		{Clause: "governing_law", Title: "Governing Law", Status: StatusMatch, Similarity: 1, LocatedBy: LocatedByHeading,
			Heading: "9. Governing Law", Text: "This Agreement is governed by ...", ExpectedValues: map[string]string{"governing_law": "New York"},
			FoundValues: map[string]string{"governing_law": "New York"}, Redline: []Segment{{Op: OpEqual, Text: "This Agreement"}},
			Pages: []int{3}, Location: &Location{Section: "9. Governing Law", Page: 3, FirstSentence: 1, LastSentence: 2, SectionSentences: 2},
			Severity: SeverityMedium},
		{Clause: "limitation_of_liability", Title: "Limitation of Liability", Status: StatusDeviation, Similarity: 0.97,
			NumericChange: true, LocatedBy: LocatedByHeading, Heading: "7. LIMITATION", Text: "... eighteen (18) months ...",
			Redline: []Segment{{Op: OpDelete, Text: "twelve (12)"}, {Op: OpInsert, Text: "eighteen (18)"}},
			TermChanges: []TermChange{{Name: "cap_period", Expected: "twelve (12) months", Found: "eighteen (18) months",
				Change: ChangeHigher, Verdict: VerdictWorse}},
			Pages:    []int{2, 3},
			Location: &Location{Section: "7. LIMITATION", Page: 2, FirstSentence: 3, LastSentence: 4, SectionSentences: 6},
			Severity: SeverityCritical},
		{Clause: "insurance", Title: "Insurance", Status: StatusMissing, Severity: SeverityLow,
			ExpectedValues: map[string]string{"money_1": "$1,000,000"}},
	}
	return &Result{Playbook: PlaybookRef{Name: "p", Version: "1"}, Findings: fs, Summary: Summarize(fs)}
}

func TestDecodeValid(t *testing.T) {
	b, err := json.Marshal(validResult())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := Summary{Clauses: 3, Match: 1, Deviation: 1, NumericChanges: 1, Missing: 1}
	if r.Summary != want {
		t.Errorf("summary %+v, want %+v", r.Summary, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *Result)
		raw    func(b []byte) []byte
		want   string
	}{
		{name: "unknown field", raw: func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"summary"`, `"extra":1,"summary"`, 1))
		}, want: "unknown field"},
		{name: "trailing data", raw: func(b []byte) []byte { return append(b, []byte(` {}`)...) }, want: "trailing"},
		{name: "oversize", raw: func(b []byte) []byte {
			return append(b, []byte(strings.Repeat(" ", MaxResultBytes))...)
		}, want: "limit"},
		{name: "status outside the set", mutate: func(r *Result) { r.Findings[0].Status = "PARTIAL" }, want: "status"},
		{name: "numeric_change on MATCH", mutate: func(r *Result) { r.Findings[0].NumericChange = true }, want: "only allowed on DEVIATION"},
		{name: "MISSING with text", mutate: func(r *Result) { r.Findings[2].Text = "x" }, want: "MISSING with located fields"},
		{name: "MISSING with similarity", mutate: func(r *Result) { r.Findings[2].Similarity = 0.2 }, want: "MISSING"},
		{name: "DEVIATION without text", mutate: func(r *Result) { r.Findings[1].Text = "  " }, want: "without located text"},
		{name: "located_by outside the set", mutate: func(r *Result) { r.Findings[0].LocatedBy = "guess" }, want: "located_by"},
		{name: "similarity above 1", mutate: func(r *Result) { r.Findings[1].Similarity = 1.5 }, want: "similarity"},
		{name: "severity outside the set", mutate: func(r *Result) { r.Findings[0].Severity = "urgent" }, want: "severity"},
		{name: "bad clause key", mutate: func(r *Result) { r.Findings[0].Clause = "Governing Law" }, want: "clause key"},
		{name: "clause repeated", mutate: func(r *Result) { r.Findings[1].Clause = "governing_law" }, want: "repeated"},
		{name: "pages not ascending", mutate: func(r *Result) { r.Findings[1].Pages = []int{3, 2} }, want: "pages"},
		{name: "page zero", mutate: func(r *Result) { r.Findings[1].Pages = []int{0} }, want: "pages"},
		{name: "redline op outside the set", mutate: func(r *Result) { r.Findings[1].Redline[0].Op = "move" }, want: "op"},
		{name: "text over the limit", mutate: func(r *Result) { r.Findings[0].Text = strings.Repeat("a", MaxTextBytes+1) }, want: "text"},
		{name: "value name not a key", mutate: func(r *Result) { r.Findings[0].FoundValues["Bad Name"] = "x" }, want: "term name"},
		{name: "summary inconsistent", mutate: func(r *Result) { r.Summary.Match = 2 }, want: "summary"},
		{name: "located without a location", mutate: func(r *Result) { r.Findings[0].Location = nil }, want: "without a location"},
		{name: "MISSING with a location", mutate: func(r *Result) {
			r.Findings[2].Location = &Location{FirstSentence: 1, LastSentence: 1, SectionSentences: 1}
		},
			want: "MISSING with located fields"},
		{name: "sentences out of the section", mutate: func(r *Result) { r.Findings[1].Location.LastSentence = 7 }, want: "sentences"},
		{name: "sentence zero", mutate: func(r *Result) { r.Findings[1].Location.FirstSentence = 0 }, want: "sentences"},
		{name: "negative page", mutate: func(r *Result) { r.Findings[1].Location.Page = -1 }, want: "location.page"},
		{name: "section over the limit", mutate: func(r *Result) { r.Findings[1].Location.Section = strings.Repeat("x", MaxHeadingBytes+1) },
			want: "location.section"},
		{name: "term change outside the set", mutate: func(r *Result) { r.Findings[1].TermChanges[0].Change = "bigger" }, want: "change"},
		{name: "verdict without a direction", mutate: func(r *Result) { r.Findings[1].TermChanges[0].Change = ChangeDifferent },
			want: "verdict"},
		{name: "verdict outside the set", mutate: func(r *Result) { r.Findings[1].TermChanges[0].Verdict = "awful" }, want: "verdict"},
		{name: "gone with a found value", mutate: func(r *Result) {
			r.Findings[1].TermChanges[0].Change, r.Findings[1].TermChanges[0].Verdict = ChangeGone, ""
		}, want: "gone change"},
		{name: "term changes without numeric_change", mutate: func(r *Result) { r.Findings[0].TermChanges = r.Findings[1].TermChanges },
			want: "term_changes are only allowed"},
		{name: "too many term changes", mutate: func(r *Result) {
			for range MaxTermChanges {
				r.Findings[1].TermChanges = append(r.Findings[1].TermChanges, r.Findings[1].TermChanges[0])
			}
		}, want: "term_changes"},
		{name: "term change name not a key", mutate: func(r *Result) { r.Findings[1].TermChanges[0].Name = "Cap Period" }, want: "term name"},
		{name: "too many findings", mutate: func(r *Result) {
			for range MaxFindings {
				r.Findings = append(r.Findings, r.Findings[2])
			}
		}, want: "findings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validResult()
			if tt.mutate != nil {
				tt.mutate(r)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if tt.raw != nil {
				b = tt.raw(b)
			}
			_, err = Decode(b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestErrorsDoNotQuoteMuch(t *testing.T) {
	r := validResult()
	r.Findings[0].Status = strings.Repeat("<script>", 100)
	r.Summary = Summarize(r.Findings)
	err := r.Validate()
	if err == nil {
		t.Fatal("want an error")
	}
	if len(err.Error()) > 200 {
		t.Errorf("error quotes %d bytes of untrusted input: %q", len(err.Error()), err)
	}
}
