package reviewcorpus

import (
	"strings"
	"testing"
)

func TestShortfalls(t *testing.T) {
	met := Report{Contracts: 2, Clauses: 100, StatusCorrect: 97, NumericTotal: 5, NumericCaught: 5}
	if got := met.Shortfalls(0.97); len(got) != 0 {
		t.Fatalf("a report at the targets falls short: %q", got)
	}
	for _, tc := range []struct {
		name string
		edit func(*Report)
		want string
	}{
		{"accuracy", func(r *Report) { r.StatusCorrect = 96 }, "status accuracy 0.960, want >= 0.97"},
		{"numeric", func(r *Report) { r.NumericCaught = 4 }, "numeric changes caught 4 of 5"},
		{"false match", func(r *Report) { r.FalseMatch = 1 }, "1 false MATCH"},
		{"empty", func(r *Report) { r.Contracts = 0 }, "no contracts"},
	} {
		r := met
		tc.edit(&r)
		got := r.Shortfalls(0.97)
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s: shortfalls %q, want one naming %q", tc.name, got, tc.want)
		}
	}
}
