package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func withFacts() *Result {
	r := validResult()
	r.Parties = []Party{{Name: "Globex Industries, Inc.", Role: "Customer", Address: "500 Main Street", Signatory: "Jordan Lee"}}
	r.KeyDates = KeyDates{EffectiveDate: "2025-03-03", ExpirationDate: "2027-03-03", Renewal: "renews yearly",
		NoticeDeadlines: []NoticeDeadline{{Event: "non-renewal", Notice: "sixty (60) days", Date: "2027-01-02", Page: 2}}}
	r.DefinedTerms = []DefinedTerm{{Term: "Services", Definition: `(the "Services")`, Page: 1, Uses: []int{1, 1, 2}, Problems: []string{}},
		{Term: "Steering Committee", Uses: []int{2}, Problems: []string{ProblemUndefined}}}
	r.Obligations = []Obligation{{Party: "Customer", Action: "pay each invoice", Deadline: "within thirty (30) days after receipt",
		Page: 1, TextSpan: "Customer shall pay each invoice within thirty (30) days after receipt."}}
	return r
}

func TestDecodeFacts(t *testing.T) {
	b, err := json.Marshal(withFacts())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if r.KeyDates.NoticeDeadlines[0].Date != "2027-01-02" || r.Obligations[0].Party != "Customer" {
		t.Errorf("facts lost in the round trip: %+v", r)
	}
	for _, field := range []string{`"parties"`, `"key_dates"`, `"effective_date"`, `"expiration_date"`, `"renewal"`,
		`"notice_deadlines"`, `"defined_terms"`, `"term"`, `"definition"`, `"uses"`, `"problems"`, `"obligations"`,
		`"party"`, `"action"`, `"deadline"`, `"due_date"`, `"text_span"`, `"short_name"`, `"signatory"`, `"address"`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("the JSON has no %s", field)
		}
	}
}

func TestDecodeFactsRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *Result)
		raw    func(b []byte) []byte
		want   string
	}{
		{name: "unknown party field", raw: func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"role":`, `"ssn":"x","role":`, 1))
		}, want: "unknown field"},
		{name: "unknown obligation field", raw: func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"due_date":`, `"owner":"x","due_date":`, 1))
		}, want: "unknown field"},
		{name: "empty party name", mutate: func(r *Result) { r.Parties[0].Name = " " }, want: "empty name"},
		{name: "party field over the limit", mutate: func(r *Result) { r.Parties[0].Address = strings.Repeat("a", MaxPartyFieldBytes+1) }, want: "address"},
		{name: "too many parties", mutate: func(r *Result) {
			for range MaxParties {
				r.Parties = append(r.Parties, r.Parties[0])
			}
		}, want: "parties"},
		{name: "not a date", mutate: func(r *Result) { r.KeyDates.EffectiveDate = "March 3, 2025" }, want: "effective_date"},
		{name: "impossible date", mutate: func(r *Result) { r.Obligations[0].DueDate = "2025-02-30" }, want: "due_date"},
		{name: "notice deadline date", mutate: func(r *Result) { r.KeyDates.NoticeDeadlines[0].Date = "soon" }, want: "notice_deadlines[0].date"},
		{name: "problem outside the set", mutate: func(r *Result) { r.DefinedTerms[0].Problems = []string{"ambiguous"} }, want: "problems"},
		{name: "problem twice", mutate: func(r *Result) {
			r.DefinedTerms[0].Problems = []string{ProblemUnused, ProblemUnused}
		}, want: "problems"},
		{name: "undefined with a definition", mutate: func(r *Result) { r.DefinedTerms[1].Definition = "x" }, want: "undefined"},
		{name: "uses descending", mutate: func(r *Result) { r.DefinedTerms[0].Uses = []int{2, 1} }, want: "uses"},
		{name: "too many uses", mutate: func(r *Result) { r.DefinedTerms[0].Uses = make([]int, MaxUses+1) }, want: "uses"},
		{name: "empty action", mutate: func(r *Result) { r.Obligations[0].Action = "" }, want: "empty action"},
		{name: "negative page", mutate: func(r *Result) { r.Obligations[0].Page = -1 }, want: "page"},
		{name: "text span over the limit", mutate: func(r *Result) {
			r.Obligations[0].TextSpan = strings.Repeat("a", MaxTextSpanBytes+1)
		}, want: "text_span"},
		{name: "too many obligations", mutate: func(r *Result) {
			for range MaxObligations {
				r.Obligations = append(r.Obligations, r.Obligations[0])
			}
		}, want: "obligations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := withFacts()
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
