package pattern

import (
	"regexp"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
)

var (
	phoneExt  = regexp.MustCompile(`(?i)[ \t]*(?:x|ext\.?:?|extension|#)[ \t]*\d{1,6}$`)
	dateLike  = regexp.MustCompile(`^\d{1,4}[./\-–]\d{1,2}[./\-–]\d{1,4}$`)
	quadLike  = regexp.MustCompile(`^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$`)
	chunkSeps = regexp.MustCompile(`[ \t\x{00A0}]+`)
)

// trunkZero is the "(0)" Britain and much of Europe write after the
// country code ("+44 (0)20 7946 0958"): it is dialled only at home, so
// it is dropped before the number is parsed.
var trunkZero = regexp.MustCompile(`^(\+\d{1,3})[ \t\x{00A0}]*\(0\)[ \t\x{00A0}]*`)

// validatePhone parses the candidate (and, failing that, the candidate
// without up to two leading and three trailing space-separated chunks)
// with libphonenumber's rules and keeps the longest valid number.
func validatePhone(tb *Tables, s string) []vmatch {
	locs := chunkSeps.FindAllStringIndex(s, -1)
	// chunk boundaries: starts and ends of the space-separated pieces
	starts, ends := []int{0}, []int{}
	for _, l := range locs {
		ends = append(ends, l[0])
		starts = append(starts, l[1])
	}
	ends = append(ends, len(s))
	for i := 0; i < len(starts) && i < 3; i++ {
		for j := len(ends) - 1; j >= i && j >= len(ends)-4; j-- {
			sub := s[starts[i]:ends[j]]
			sub = strings.TrimLeft(sub, ".-–")
			off := starts[i] + (ends[j] - starts[i] - len(sub))
			sub = strings.TrimRight(sub, ".-–(")
			if score := tb.phoneScore(sub); score > 0 {
				return []vmatch{{off, off + len(sub), score}}
			}
		}
	}
	return nil
}

// phoneScore returns 0 when s is not a valid number, else a base score:
// international form high; formatted US form, and a national form
// grouped the way its country writes it, medium; bare digits and other
// national forms low (they need a phone label).
func (tb *Tables) phoneScore(s string) float64 {
	s = trunkZero.ReplaceAllString(s, "$1 ")
	if nd := len(nlp.DigitsOf(s)); nd < 7 || nd > 21 || !plausibleGroups(s) {
		return 0 // cheap rejections before any regex or parsing
	}
	base := phoneExt.ReplaceAllString(s, "")
	base = strings.TrimSpace(base)
	if base == "" || strings.Count(base, "(") != strings.Count(base, ")") || dateLike.MatchString(base) || quadLike.MatchString(base) {
		return 0
	}
	nd := len(nlp.DigitsOf(base))
	if nd < 7 || nd > 15 {
		return 0
	}
	formatted := strings.ContainsAny(base, " -–.()\u00a0")
	switch {
	case strings.HasPrefix(base, "+"):
		if validIn(base, "ZZ") {
			return 0.85
		}
		return 0
	case strings.HasPrefix(base, "00"):
		// "00" then a country code is how much of the world dials abroad,
		// but account and reference numbers start with zeros too: it
		// needs a phone label.
		if validIn("+"+base[2:], "ZZ") && formatted {
			return 0.6
		} else if validIn("+"+base[2:], "ZZ") {
			return 0.4
		}
		return 0
	}
	if usGrouping(base) && validIn(base, "US") {
		if formatted {
			return 0.75
		}
		return 0.35
	}
	if strings.HasPrefix(strings.TrimLeft(base, "("), "0") {
		return tb.nationalScore(base)
	}
	return 0
}

// nationalScore scores a number written in national form (leading trunk
// 0): valid in one of the listed countries and grouped the way
// libphonenumber formats that country's numbers ("06 12 34 56 78" in
// France, "0412 345 678" in Australia, "03-1234-5678" in Japan; or the
// area code apart and the rest in one run, "020-5567100"), 0.6; valid
// but grouped otherwise, 0.45, which needs a phone label.
func (tb *Tables) nationalScore(base string) float64 {
	score := 0.0
	for _, r := range tb.phoneRegions {
		n, err := phonenumbers.Parse(base, r)
		if err != nil || !phonenumbers.IsValidNumber(n) {
			continue
		}
		if nationalGrouping(base, phonenumbers.Format(n, phonenumbers.NATIONAL)) {
			return 0.6
		}
		score = 0.45
	}
	return score
}

// nationalGrouping reports whether s groups its digits as the country's
// own format does, or as its first group and the rest in one run.
func nationalGrouping(s, format string) bool {
	got, want := groupLens(s), groupLens(format)
	if slices.Equal(got, want) {
		return true
	}
	return len(got) == 2 && len(want) > 2 && got[0] == want[0]
}

func groupLens(s string) []int {
	var lens []int
	for _, g := range nlp.DigitGroups(s) {
		lens = append(lens, g.End-g.Start)
	}
	return lens
}

func validIn(s, region string) bool {
	n, err := phonenumbers.Parse(s, region)
	return err == nil && phonenumbers.IsValidNumber(n)
}

// plausibleGroups: phone numbers are not written with many one-digit
// groups ("1 1 1 1 1 1 1") or more than six groups.
func plausibleGroups(s string) bool {
	gs := nlp.DigitGroups(s)
	ones := 0
	for _, g := range gs {
		if g.End-g.Start == 1 {
			ones++
		}
	}
	return len(gs) <= 7 && ones <= 1
}

// usGrouping accepts the ways North American numbers are grouped:
// 3-3-4, 1-3-3-4, 3-7, or one run of 10 or 11 digits. "9153 6539 98" is
// a valid number by its digits but no one writes a phone that way.
func usGrouping(s string) bool {
	lens := groupLens(s)
	for _, ok := range [][]int{{3, 3, 4}, {1, 3, 3, 4}, {3, 7}, {10}, {11}, {1, 10}} {
		if slices.Equal(lens, ok) {
			return true
		}
	}
	return false
}
