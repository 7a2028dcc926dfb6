package reviewcorpus

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The generator's own reading of numbers: it finds the key terms of a
// standard text to change them, and spells the new values. It is kept
// apart from the review package's extractor on purpose.

var (
	units = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

	numWordRE = `(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|and|half)`
	// reCounted matches "twelve (12)", "one percent (1%)", "two times (2x)",
	// with the unit of a period after it ("days", "business days").
	reCounted = regexp.MustCompile(`(?i)\b(` + numWordRE + `(?:[- ]` + numWordRE + `)*)( percent| times)? \((\d+(?:\.\d+)?)(%|x)?\)((?: business)? (?:days?|months?|years?)\b)?`)
	// reDollars matches "$1,000,000".
	reDollars = regexp.MustCompile(`\$(\d{1,3}(?:,\d{3})+)`)
)

// spell writes a value in words as contracts do: "twenty-four", "one
// hundred twenty", "one and one-half", "one-half".
func spell(v float64) string {
	whole := math.Floor(v)
	frac := v - whole
	if frac == 0.5 {
		if whole == 0 {
			return "one-half"
		}
		return spell(whole) + " and one-half"
	}
	n := int(whole)
	switch {
	case n < 20:
		return units[n]
	case n < 100:
		if n%10 == 0 {
			return tens[n/10]
		}
		return tens[n/10] + "-" + units[n%10]
	case n < 1000:
		s := units[n/100] + " hundred"
		if n%100 != 0 {
			s += " " + spell(float64(n%100))
		}
		return s
	}
	return strconv.Itoa(n)
}

func digits(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// commas writes 1000000 as 1,000,000.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// numericSpot is a key term of a text the generator can change.
type numericSpot struct {
	start, end int
	text       string
	kind       string // "counted" or "money"
	value      float64
	unit       string // " percent", " times" or ""
	suffix     string // "%", "x" or ""
	words      string
	period     string // " days", " business days", ... when the number counts time
}

func numericSpots(s string) []numericSpot {
	var out []numericSpot
	for _, m := range reCounted.FindAllStringSubmatchIndex(s, -1) {
		v, _ := strconv.ParseFloat(s[m[6]:m[7]], 64)
		sp := numericSpot{start: m[0], end: m[1], text: s[m[0]:m[1]], kind: "counted", value: v, words: s[m[2]:m[3]]}
		if m[4] >= 0 {
			sp.unit = s[m[4]:m[5]]
		}
		if m[8] >= 0 {
			sp.suffix = s[m[8]:m[9]]
		}
		if m[10] >= 0 {
			sp.period = s[m[10]:m[11]]
		}
		out = append(out, sp)
	}
	for _, m := range reDollars.FindAllStringSubmatchIndex(s, -1) {
		v, _ := strconv.ParseFloat(strings.ReplaceAll(s[m[2]:m[3]], ",", ""), 64)
		out = append(out, numericSpot{start: m[0], end: m[1], text: s[m[0]:m[1]], kind: "money", value: v})
	}
	return out
}
