package invoice

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/textnorm"
)

// DateOrder is how an all-numeric date with '/' or '-' is read.
type DateOrder int

const (
	OrderUnknown DateOrder = iota // decide from the document
	OrderDMY                      // 03/12/2026 is 3 December
	OrderMDY                      // 03/12/2026 is 12 March
)

func (o DateOrder) String() string {
	switch o {
	case OrderDMY:
		return "dmy"
	case OrderMDY:
		return "mdy"
	}
	return "unknown"
}

// dateParser holds the compiled date patterns. Immutable once built.
type dateParser struct {
	ymd, numeric, dayMonth, monthDay *regexp.Regexp
	months                           map[string]int
}

func newDateParser(lx *lexicon) *dateParser {
	m := `(` + lx.monthAlt + `)`
	return &dateParser{
		ymd:      regexp.MustCompile(`\b(\d{4})[-./](\d{1,2})[-./](\d{1,2})\b`),
		numeric:  regexp.MustCompile(`\b(\d{1,2})([./-])(\d{1,2})([./-])(\d{4}|\d{2})\b`),
		dayMonth: regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th|er|e)?\.?[\s-]*(?:de\s+)?` + m + `\.?,?[\s-]*(?:de\s+)?(\d{4})\b`),
		monthDay: regexp.MustCompile(`\b` + m + `\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b`),
		months:   lx.months,
	}
}

// parsedDate is a date as read.
type parsedDate struct {
	t time.Time
	// ambiguous: numeric day and month both <= 12 and read by the
	// document's order rather than by the digits.
	ambiguous bool
	corrected bool
}

// parse finds the first valid date in s.
func (p *dateParser) parse(s string, order DateOrder) (parsedDate, error) {
	f := textnorm.Fold(s)
	var out parsedDate
	if fixed, ok := fixOCRDate(f); ok {
		f, out.corrected = fixed, true
	}
	if fixed, ok := fixOCRTokens(f); ok {
		f, out.corrected = fixed, true
	}
	if fixed, ok := fixOCRYear(f); ok {
		f, out.corrected = fixed, true
	}
	if fixed, ok := fixOCRDayMonth(f); ok {
		f, out.corrected = fixed, true
	}
	// "4 mars.2026": OCR closed up a month name and its year with a speck.
	f = monthDot.ReplaceAllString(f, "$1 $2")
	type try func(string, DateOrder) (time.Time, bool, bool)
	for _, fn := range []try{p.tryYMD, p.tryNamed, p.tryNumeric} {
		if t, amb, ok := fn(f, order); ok {
			out.t, out.ambiguous = t, amb
			return out, nil
		}
	}
	return out, fmt.Errorf("no date in %q", textnorm.Excerpt(s, 30))
}

// ocrDateToken is a date-shaped token in folded (lower-case) text whose
// digits may include OCR's letters.
var ocrDateToken = regexp.MustCompile(`[0-9olisbz|@§]{1,4}[./-][0-9olisbz|@§]{1,2}[./-][0-9olisbz|@§]{2,4}`)

// ocrYear is a year of this century whose 0 OCR read as a 6, 8 or 9
// ("2626-03-01", "15.03.2826"): no invoice is dated six centuries on.
var ocrYear = regexp.MustCompile(`(^|[^0-9])2[689]([0-9]{2})($|[^0-9])`)

var monthDot = regexp.MustCompile(`([a-z]{3,})\.([0-9]{4})`)

// fixOCRYear repairs such years.
func fixOCRYear(s string) (string, bool) {
	out := ocrYear.ReplaceAllString(s, "${1}20${2}${3}")
	return out, out != s
}

// numericDateParts is an all-numeric date's parts: three digit groups
// joined by one kind of separator.
var numericDateParts = regexp.MustCompile(`\b(\d{1,4})([./-])(\d{1,2})([./-])(\d{2,4})\b`)

// fixOCRDayMonth repairs a day or month whose leading 0 OCR read as a 6,
// 8 or 9 ("15.83.2026", "14-93-2026", "83-15-2026": a slashed or dotted
// zero). No day or month is 60 or more, so the two-digit part has only
// the one reading; the year is fixOCRYear's.
func fixOCRDayMonth(s string) (string, bool) {
	changed := false
	out := numericDateParts.ReplaceAllStringFunc(s, func(tok string) string {
		m := numericDateParts.FindStringSubmatch(tok)
		parts := []string{m[1], m[3], m[5]}
		year := 2 // which part is the year: the four-digit one, else the last
		if len(m[1]) == 4 {
			year = 0
		}
		for i, p := range parts {
			if i != year && len(p) == 2 && strings.ContainsRune("689", rune(p[0])) {
				parts[i], changed = "0"+p[1:], true
			}
		}
		return parts[0] + m[2] + parts[1] + m[4] + parts[2]
	})
	return out, changed
}

// fixOCRDate repairs letter/digit confusions inside date-shaped tokens
// ("O3/l2/2O26"), leaving month names alone.
func fixOCRDate(s string) (string, bool) {
	changed := false
	out := ocrDateToken.ReplaceAllStringFunc(s, func(tok string) string {
		fixed, ok := fixOCRNumber(tok)
		if ok {
			changed = true
			return fixed
		}
		return tok
	})
	return out, changed
}

// fixOCRTokens repairs digit tokens next to month names ("3l," in
// "march 3l, 2026", "2o26").
func fixOCRTokens(s string) (string, bool) {
	fs := strings.Fields(s)
	changed := false
	for i, f := range fs {
		core := strings.TrimRight(f, ".,")
		if fixed, ok := fixOCRNumber(core); ok && !strings.ContainsAny(core, "./-") {
			fs[i] = fixed + f[len(core):]
			changed = true
		}
	}
	if !changed {
		return s, false
	}
	return strings.Join(fs, " "), true
}

func (p *dateParser) tryYMD(s string, _ DateOrder) (time.Time, bool, bool) {
	for _, m := range p.ymd.FindAllStringSubmatch(s, -1) {
		if t, ok := civil(atoi(m[1]), atoi(m[2]), atoi(m[3])); ok {
			return t, false, true
		}
	}
	return time.Time{}, false, false
}

func (p *dateParser) tryNamed(s string, _ DateOrder) (time.Time, bool, bool) {
	for _, m := range p.dayMonth.FindAllStringSubmatch(s, -1) {
		if t, ok := civil(atoi(m[3]), p.months[m[2]], atoi(m[1])); ok {
			return t, false, true
		}
	}
	for _, m := range p.monthDay.FindAllStringSubmatch(s, -1) {
		if t, ok := civil(atoi(m[3]), p.months[m[1]], atoi(m[2])); ok {
			return t, false, true
		}
	}
	return time.Time{}, false, false
}

func (p *dateParser) tryNumeric(s string, order DateOrder) (time.Time, bool, bool) {
	for _, m := range p.numeric.FindAllStringSubmatch(s, -1) {
		if m[2] != m[4] {
			continue // 12.03-2026 is not a date
		}
		a, b, y := atoi(m[1]), atoi(m[3]), atoi(m[5])
		if len(m[5]) == 2 {
			y += 2000
		}
		day, month, amb := numericOrder(a, b, m[2], order)
		if t, ok := civil(y, month, day); ok {
			return t, amb, true
		}
	}
	return time.Time{}, false, false
}

// numericOrder decides which of a, b is the day. Dots are day-first
// everywhere they are used; digits over 12 decide by themselves; otherwise
// the document's order decides and the reading is marked ambiguous.
func numericOrder(a, b int, sep string, order DateOrder) (day, month int, ambiguous bool) {
	switch {
	case sep == ".":
		return a, b, false
	case a > 12:
		return a, b, false
	case b > 12:
		return b, a, false
	case a == b:
		return a, b, false
	case order == OrderMDY:
		return b, a, true
	default:
		return a, b, true
	}
}

func civil(y, m, d int) (time.Time, bool) {
	if y < 1900 || y > 2200 || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != m {
		return time.Time{}, false // 31 February
	}
	return t, true
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// unambiguousOrder looks at every numeric slash/dash date in s and returns
// the order the digits prove (a first part over 12 proves DMY), or
// OrderUnknown.
func (p *dateParser) unambiguousOrder(s string) DateOrder {
	dmy, mdy := 0, 0
	for _, m := range p.numeric.FindAllStringSubmatch(s, -1) {
		if m[2] != m[4] || m[2] == "." {
			continue
		}
		a, b := atoi(m[1]), atoi(m[3])
		switch {
		case a > 12 && b <= 12:
			dmy++
		case b > 12 && a <= 12:
			mdy++
		}
	}
	switch {
	case dmy > mdy:
		return OrderDMY
	case mdy > dmy:
		return OrderMDY
	}
	return OrderUnknown
}
