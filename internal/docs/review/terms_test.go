package review

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
)

func TestExtractTerms(t *testing.T) {
	tests := []struct {
		in   string
		want string // "kind=value" joined by "; "
	}{
		// Numbers in digits and words, with their units.
		{"within twelve (12) months after", "duration=12 month"},
		{"upon sixty (60) days' prior written notice", "duration=60 day"},
		{"within ten (10) business days", "duration=10 business day"},
		{"a 30-day cure period", "duration=30 day"},
		{"for five years", "duration=5 year"},
		{"one hundred twenty (120) days", "duration=120 day"},
		{"twelve (18) months", "duration=12|18 month"},
		{"limits of $1,000,000 per occurrence and $2,000,000 in the aggregate", "money=USD 1000000 per occurrence; money=USD 2000000"},
		{"not less than USD 2 million", "money=USD 2000000"},
		{"two million dollars ($2,000,000)", "money=USD 2000000"},
		{"EUR 500,000", "money=EUR 500000"},
		{"€1,000,000", "money=EUR 1000000"},
		{"£250,000", "money=GBP 250000"},
		{"$2.5m", "money=USD 2500000"},
		{"one percent (1%) per month", "percent=1% per month"},
		{"one and one-half percent (1.5%)", "percent=1.5%"},
		{"10 per cent", "percent=10%"},
		{"two times (2x) such fees", "multiplier=2x"},
		{"1.5x the fees", "multiplier=1.5x"},
		{"twice the fees", "multiplier=2x"},
		{"three (3) arbitrators", "number=3"},
		{"the laws of the State of New York", "jurisdiction=new york"},
		{"the laws of England and Wales", "jurisdiction=england and wales"},
		{"courts of London, England", "jurisdiction=london; jurisdiction=england"},
		{"Wilmington, Delaware", "jurisdiction=wilmington; jurisdiction=delaware"},
		{"West Virginia law", "jurisdiction=west virginia"},
		// OCR damage the terms survive.
		{"thirtv (3O) davs", "duration=30 day"},
		{"$l,OOO,OOO", "money=USD 1000000"},
		{"$1.000,000", "money=USD 1000000"},
		{"fi ve (5) years", "duration=5 year"},
		{"five (S) years", "duration=5 year"},
		{"ten (10) busines s days", "duration=10 business day"},
		{"Ncw York", "jurisdiction=new york"},
		{"thirty (30) days'prior", "duration=30 day"},
		{"within thirty.(30) days", "duration=30 day"},
		{"within thirty,(30) days", "duration=30 day"},
		{"$1,000,000. per occurrence", "money=USD 1000000 per occurrence"},
		{"$1,000,000 for each occurrence and $5,000,000 each claim", "money=USD 1000000 per occurrence; money=USD 5000000 per claim"},
		// Near misses: no key term.
		{"as set out in Section 7.2 and Article 3", ""},
		{"clauses (1) and (2)", ""},
		{"dated January 1, 2025", ""},
		{"any one party", ""},
		{"Provider'5 obligations", ""},
		{"Provider 5hall pay", ""},
		{"USE of the Services", ""},
		{"Jersey cows", ""},
		{"new york style", ""},
		{"in 2025", ""},
		// A real full stop ends the term: the next sentence is not its unit.
		{"fees up to $1,000,000. Per occurrence limits apply.", "money=USD 1000000"},
		{"within thirty. (30) days", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			for _, tm := range extractTerms(cleanText(tt.in)) {
				got = append(got, tm.Kind+"="+tm.Value)
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("got %q, want %q", g, tt.want)
			}
		})
	}
}

func TestCompareTermsNames(t *testing.T) {
	c := &playbook.Clause{Key: "x", Title: "X", Threshold: playbook.DefaultThreshold, Severity: "low",
		StandardText: "Pay within thirty (30) days at one percent (1%) per month under New York law.",
		KeyTerms:     []playbook.KeyTerm{{Name: "net", Text: "thirty (30) days"}}}
	cs := prepareClause(c, 0)
	tests := []struct {
		name, found   string
		changed       bool
		expect, fvals string
	}{
		{"same", "Pay within thirty (30) days at one percent (1%) per month under New York law.", false,
			"jurisdiction_1=New York; net=thirty (30) days; percent_1=one percent (1%) per month",
			"jurisdiction_1=New York; net=thirty (30) days; percent_1=one percent (1%) per month"},
		{"pinned term changed", "Pay within forty-five (45) days at one percent (1%) per month under New York law.", true,
			"", "jurisdiction_1=New York; net=forty-five (45) days; percent_1=one percent (1%) per month"},
		{"place changed", "Pay within thirty (30) days at one percent (1%) per month under Texas law.", true,
			"", "jurisdiction_1=Texas; net=thirty (30) days; percent_1=one percent (1%) per month"},
		{"term added", "Pay within thirty (30) days at one percent (1%) per month under New York law, or $500.", true,
			"", "jurisdiction_1=New York; money_1=$500; net=thirty (30) days; percent_1=one percent (1%) per month"},
		{"period unit changed", "Pay within thirty (30) business days at one percent (1%) per month under New York law.", true,
			"", "jurisdiction_1=New York; net=thirty (30) business days; percent_1=one percent (1%) per month"},
		{"same terms reworded", "Customer pays in thirty (30) days; interest is one percent (1%) per month; New York law governs.", false,
			"", "jurisdiction_1=New York; net=thirty (30) days; percent_1=one percent (1%) per month"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := cleanText(tt.found)
			exp, got, _, changed := compareTerms(cs, extractTerms(text), tokenize(text, 0))
			if changed != tt.changed {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
			if tt.expect != "" && joinMap(exp) != tt.expect {
				t.Errorf("expected values %q, want %q", joinMap(exp), tt.expect)
			}
			if joinMap(got) != tt.fvals {
				t.Errorf("found values %q, want %q", joinMap(got), tt.fvals)
			}
		})
	}
}

func joinMap(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sortStrings(parts)
	return strings.Join(parts, "; ")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
