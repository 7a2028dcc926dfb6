package invoice

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// amount is one printed amount as read.
type amount struct {
	value    decimal.Decimal
	frac     int    // fraction digits printed after a decimal separator
	hasSep   bool   // a decimal separator was printed
	currency string // ISO code from a symbol or code next to it, "" if none
	// implausible: the separators cannot be a well-formed amount
	// ("9.000.00", "12,34.56"); value is the best reading, never to be
	// trusted.
	implausible bool
	// ambiguous: "1,234" with no document format to say whether the comma
	// groups or separates decimals.
	ambiguous bool
	corrected bool // OCR letters were read as digits
}

// sepClass is a separator between digit groups.
const (
	sepDot   = '.'
	sepComma = ','
	sepSpace = ' ' // spaces of every width, and apostrophes (1'234.50)
)

// ocrDigit maps letters OCR confuses with digits in a numeric context.
func ocrDigit(r rune) (rune, bool) {
	switch r {
	case 'O', 'o':
		return '0', true
	case 'l', 'I', '|', 'i', '!':
		return '1', true
	case 'S', 's':
		return '5', true
	case 'B', 'b':
		return '8', true
	case 'Z', 'z':
		return '2', true
	case '@': // a blurred or broken-stroke 0 (seen: "GB6@ BARC", "@11000015")
		return '0', true
	case '§': // a broken 5 (seen: "-§ 503,42 €")
		return '5', true
	}
	return r, false
}

func isGroupSpace(r rune) bool {
	switch r {
	case ' ', '\u00a0', '\u2009', '\u202f', '\u2007', '\'', '’':
		return true
	}
	return false
}

// fixOCRNumber repairs OCR letter/digit confusions in s when s is numeric
// in context: it has a real digit and nothing but digits, separators and
// confusable letters. It reports whether anything changed.
func fixOCRNumber(s string) (string, bool) {
	digits, letters := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' || r == ',' || r == '-' || r == '/' || isGroupSpace(r):
		default:
			if _, ok := ocrDigit(r); !ok {
				return s, false
			}
			letters++
		}
	}
	if digits == 0 || letters == 0 || letters > digits {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		d, _ := ocrDigit(r)
		b.WriteRune(d)
	}
	return b.String(), true
}

// parseAmount reads a printed amount: currency symbol or code before or
// after, sign or parentheses, grouping by '.', ',', spaces (NBSP, thin) or
// apostrophes, and a decimal '.' or ','. hint is the document's decimal
// separator when known (0 when not), used only where the digits cannot
// decide. It fails only when s is not an amount at all; separators that
// make no sense give a value marked implausible, never an error, so the
// caller can report it with a low confidence instead of dropping it.
func parseAmount(s string, hint rune, lx *lexicon, sDollar bool) (amount, error) {
	var a amount
	s = strings.TrimSpace(s)
	s, a.currency, a.corrected = stripCurrency(s, lx, sDollar)
	s, neg := stripSign(s)
	s = strings.TrimRight(s, ".:;")
	if strings.HasSuffix(s, ",-") || strings.HasSuffix(s, ",—") {
		s = strings.TrimSuffix(strings.TrimSuffix(s, ",-"), ",—") + ",00"
	}
	if fixed, ok := fixOCRNumber(s); ok {
		s, a.corrected = fixed, true
	}
	groups, seps, err := splitGroups(s)
	if err != nil {
		return a, err
	}
	if err := a.interpret(groups, seps, hint); err != nil {
		return a, err
	}
	if neg {
		a.value = a.value.Neg()
	}
	return a, nil
}

// stripCurrency removes one currency marker from either end. With
// sDollar (a document that prints '$'), a leading 'S' directly before a
// digit is OCR's reading of '$'; elsewhere it is a 5 and left to the
// digit repair.
func stripCurrency(s string, lx *lexicon, sDollar bool) (rest, code string, corrected bool) {
	for _, sym := range lx.symbols {
		if strings.HasPrefix(s, sym.text) {
			return strings.TrimSpace(s[len(sym.text):]), sym.code, false
		}
		if strings.HasSuffix(s, sym.text) {
			return strings.TrimSpace(s[:len(s)-len(sym.text)]), sym.code, false
		}
	}
	if len(s) > 3 {
		if c := s[:3]; lx.codes[c] && !isLetterByte(s[3]) {
			return strings.TrimSpace(s[3:]), c, false
		}
		if c := s[len(s)-3:]; lx.codes[c] && !isLetterByte(s[len(s)-4]) {
			return strings.TrimSpace(s[:len(s)-3]), c, false
		}
	}
	if sDollar && len(s) > 1 && s[0] == 'S' && s[1] >= '0' && s[1] <= '9' {
		return s[1:], "USD", true
	}
	return s, "", false
}

func isLetterByte(b byte) bool { return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }

func stripSign(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")"):
		return strings.TrimSpace(s[1 : len(s)-1]), true
	case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "−"):
		_, n := utf8.DecodeRuneInString(s)
		return strings.TrimSpace(s[n:]), true
	case strings.HasSuffix(s, "-") && !strings.HasSuffix(s, ",-"):
		return strings.TrimSpace(s[:len(s)-1]), true
	}
	return s, false
}

var errNotAmount = errors.New("not an amount")

// splitGroups splits s into digit groups and the separator class between
// consecutive groups. A run of separators counts once ('.' or ',' wins
// over spaces; '.' and ',' in one run is not an amount). A leading
// separator gives an empty first group (".50"); a trailing one is dropped.
func splitGroups(s string) (groups []string, seps []rune, err error) {
	var cur []rune
	var pend rune // separator class seen since the last digit, 0 = none
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			if pend != 0 {
				if len(groups) == 0 && len(cur) == 0 {
					groups = append(groups, "")
				}
				seps = append(seps, pend)
				pend = 0
			}
			cur = append(cur, r)
		case r == '.' || r == ',' || isGroupSpace(r):
			c := rune(sepSpace)
			if r == '.' || r == ',' {
				c = r
			}
			if len(cur) > 0 {
				groups = append(groups, string(cur))
				cur = nil
			}
			switch {
			case pend == 0 || pend == sepSpace:
				pend = c
			case c == sepSpace:
			default:
				return nil, nil, errNotAmount // ".,", ".."
			}
			if len(groups) == 0 && pend == sepSpace {
				pend = 0 // leading blanks
			}
		default:
			return nil, nil, errNotAmount
		}
	}
	if len(cur) > 0 {
		groups = append(groups, string(cur))
	}
	if len(groups) == 0 || (len(groups) == 1 && groups[0] == "") {
		return nil, nil, errNotAmount
	}
	return groups, seps, nil
}

// interpret decides which separator (if any) is the decimal one and
// checks the grouping.
func (a *amount) interpret(groups []string, seps []rune, hint rune) error {
	dec := decimalSep(groups, seps, hint, &a.ambiguous)
	intGroups, intSeps := groups, seps
	frac := ""
	if dec != 0 {
		frac = groups[len(groups)-1]
		intGroups, intSeps = groups[:len(groups)-1], seps[:len(seps)-1]
		a.hasSep, a.frac = true, len(frac)
		if len(frac) > 4 {
			a.implausible = true
		}
	}
	if !groupingOK(intGroups, intSeps, dec) {
		a.implausible = true
	}
	num := strings.Join(intGroups, "")
	if num == "" {
		num = "0"
	}
	if frac != "" {
		num += "." + frac
	}
	v, err := decimal.NewFromString(num)
	if err != nil {
		return errNotAmount
	}
	a.value = v
	return nil
}

// decimalSep returns the decimal separator of a grouped number, or 0.
func decimalSep(groups []string, seps []rune, hint rune, ambiguous *bool) rune {
	if len(seps) == 0 {
		return 0
	}
	last := seps[len(seps)-1]
	if last == sepSpace {
		return 0
	}
	if len(groups[len(groups)-1]) != 3 {
		return last
	}
	// Three digits after the last '.' or ',': grouping unless the
	// document says this character is its decimal separator.
	for _, s := range seps[:len(seps)-1] {
		if s != sepSpace && s != last {
			return last // "1.234,567": the other character groups
		}
		if s == last {
			return 0 // "1,234,567"
		}
	}
	switch hint {
	case last:
		return last
	case 0:
		*ambiguous = true
	}
	return 0
}

// groupingOK checks the integer part: groups of three after the first,
// one grouping character throughout, never the decimal character.
func groupingOK(groups []string, seps []rune, dec rune) bool {
	if len(groups) <= 1 {
		return true
	}
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return false
	}
	for i, s := range seps {
		if s == dec || s != seps[0] || len(groups[i+1]) != 3 {
			return false
		}
	}
	return true
}

// amountish reports whether a word can be part of a printed amount:
// digits, separators, signs, parentheses, OCR-confusable letters next to
// digits, or a currency marker.
func amountish(w string, lx *lexicon) bool {
	if w == "" {
		return false
	}
	if lx.isCurrencyToken(w) {
		return true
	}
	rest, _, _ := stripCurrency(strings.Trim(w, "():"), lx, true)
	rest = strings.TrimLeft(rest, "-−")
	rest = strings.TrimRight(rest, "-.:;")
	if rest == "" {
		return false
	}
	if fixed, ok := fixOCRNumber(rest); ok {
		rest = fixed
	}
	hasDigit := false
	for _, r := range rest {
		switch {
		case unicode.IsDigit(r):
			hasDigit = true
		case r == '.' || r == ',' || isGroupSpace(r):
		default:
			return false
		}
	}
	return hasDigit
}
