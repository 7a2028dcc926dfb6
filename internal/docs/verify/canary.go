package verify

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/airlock-dev/airlock/internal/docs/verify/result"
)

// Canaries are strings planted in a batch's inputs (fake names, numbers)
// that must never come out of redaction. A canary counts as found in any
// common rendering: any case, Unicode form or accents, with spacing and
// punctuation changed or removed, and, for one with four or more digits,
// its digits alone in the same order anywhere in the document's digits
// (a card or phone number reformatted).

// MinCanaryLen is the shortest canary (letters and digits) accepted:
// shorter ones would match by chance (result.CheckCanaries).
const MinCanaryLen = result.MinCanaryLen

// squash keeps letters and digits, lower-cased, with compatibility forms
// folded and accents dropped ("José" and "JOSE" are one rendering).
func squash(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FindCanaries returns the indexes of the canaries found in text.
func FindCanaries(text string, canaries []string) []int {
	text = asText(text)
	flat, digits := squash(text), digitsOf(text)
	var out []int
	for i, c := range canaries {
		sc, dc := squash(c), digitsOf(c)
		switch {
		case len(sc) >= MinCanaryLen && strings.Contains(flat, sc):
			out = append(out, i)
		case len(dc) >= MinCanaryLen && strings.Contains(digits, dc):
			out = append(out, i)
		}
	}
	return out
}

// WithCanaries adds canary hits to a report, making it suspicious.
func WithCanaries(r *result.Report, hits []int) *result.Report {
	if len(hits) == 0 {
		return r
	}
	r.Canaries = hits
	r.Verdict = result.Suspicious
	r.Reasons = append(r.Reasons, fmt.Sprintf("%d canary string(s) found", len(hits)))
	if r.Findings == nil {
		r.Findings = []result.Finding{}
	}
	return r
}
