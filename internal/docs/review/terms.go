package review

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kinds of key terms.
const (
	KindDuration     = "duration"     // thirty (30) days, 12 months, 5 business days
	KindMoney        = "money"        // $1,000,000, USD 2 million, two million dollars
	KindPercent      = "percent"      // 1.5%, one percent (1%) per month
	KindMultiplier   = "multiplier"   // two times (2x), 1.5x, twice
	KindNumber       = "number"       // three (3) arbitrators, 10 (a count with no unit)
	KindJurisdiction = "jurisdiction" // New York, England and Wales, Delaware
)

// term is one key term found in a text. Value is canonical (equal values
// mean the same term whatever the wording: "thirty (30) days" and "30
// days" are both "30 day"); Text is the text as written.
type term struct {
	Kind, Value, Text string
	// num and scale compare two terms of a kind by magnitude (a duration's
	// num is in days): comparable only when the words and digits of the
	// term agree.
	num        float64
	scale      string
	comparable bool
}

// magnitude is a comparable term's size: a duration in days.
func (t term) magnitude() float64 {
	if t.Kind != KindDuration {
		return t.num
	}
	_, unit, _ := strings.Cut(t.Value, " ")
	unit, _, _ = strings.Cut(unit, " per ")
	if d, ok := durationDays[unit]; ok {
		return t.num * d
	}
	return t.num
}

// lexeme is one unit of the key-term scanner: a word (Text is its fold
// key), a number (Text is its digits, separators removed) or a symbol.
type lexeme struct {
	kind       byte // 'w', 'n' or 's'
	text       string
	start, end int // byte offsets in the scanned text
	upper      bool
}

// lexTerms splits a cleaned text into lexemes. A run mixing digits and
// letters is a number when the letters are ones OCR puts for digits (l2,
// 3O), a number and a word when the letters are a unit or ordinal suffix
// (2x, 12th, 500k, or "30days" with the space lost), and otherwise a word.
func lexTerms(s string) []lexeme {
	var out []lexeme
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ' ':
			i += n
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := alnumEnd(s, i)
			if n := len(out); n > 0 && out[n-1].kind == 's' && currencySymbols[out[n-1].text] != "" {
				// After "$" letters are digits misread: "$l,OOO,OOO".
				if k, num, ok := moneyRun(s, i); ok {
					out = append(out, lexeme{kind: 'n', text: num, start: i, end: k})
					i = k
					continue
				}
			}
			out = append(out, classifyRun(s, i, j)...)
			i = j
		default:
			out = append(out, lexeme{kind: 's', text: string(r), start: i, end: i + n})
			i += n
		}
	}
	return mergeSplitWords(s, out)
}

// mergeSplitWords joins two adjacent words that OCR split out of one
// key-term word ("mo nths", "fi ve") when neither half is such a word.
func mergeSplitWords(s string, lx []lexeme) []lexeme {
	t := getTables()
	out := lx[:0:0]
	for i := 0; i < len(lx); i++ {
		// OCR splits off a short piece ("mo nths", "busines s"); trying
		// only those keeps this cheap.
		if i+1 < len(lx) && lx[i].kind == 'w' && lx[i+1].kind == 'w' && lx[i+1].start == lx[i].end+1 &&
			min(len(lx[i].text), len(lx[i+1].text)) <= 3 &&
			!t.termWords[lx[i].text] && !t.termWords[lx[i+1].text] {
			joined := foldWord(s[lx[i].start:lx[i+1].end])
			if t.isTermWord(joined) {
				out = append(out, lexeme{kind: 'w', text: joined, start: lx[i].start, end: lx[i+1].end, upper: lx[i].upper})
				i++
				continue
			}
		}
		out = append(out, lx[i])
	}
	return out
}

// alnumEnd returns the end of the run of letters and digits at i, with a
// ',' or '.' between digits and an apostrophe between letters kept in it.
func alnumEnd(s string, i int) int {
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			j += n
			continue
		}
		if (r == ',' || r == '.' || r == '\'') && j > i && j+1 < len(s) {
			prev, _ := utf8.DecodeLastRuneInString(s[:j])
			next, _ := utf8.DecodeRuneInString(s[j+1:])
			if r != '\'' && isDigitish(prev) && isDigitish(next) && (unicode.IsDigit(prev) || unicode.IsDigit(next)) || r == '\'' && unicode.IsLetter(prev) && contraction(s[j+1:]) {
				j += n
				continue
			}
		}
		break
	}
	return j
}

// moneyRun reads the amount after a currency symbol, taking the letters
// OCR puts for digits as digits.
func moneyRun(s string, i int) (int, string, bool) {
	j := i
	for j < len(s) && (isDigitish(rune(s[j])) || (s[j] == ',' || s[j] == '.') && j+1 < len(s) && isDigitish(rune(s[j+1]))) {
		j++
	}
	num, ok := forceDigits(s[i:j])
	return j, num, ok
}

// forceDigits reads a short run of digits and digit-like letters ("S",
// "l,OOO") as a number, where the context says it is one.
func forceDigits(raw string) (string, bool) {
	if raw == "" {
		return "", false
	}
	var b strings.Builder
	for _, r := range raw {
		switch {
		case unicode.IsDigit(r) || r == ',' || r == '.':
		case strings.ContainsRune("oO", r):
			r = '0'
		case strings.ContainsRune("lIi|", r):
			r = '1'
		case strings.ContainsRune("sS", r):
			r = '5'
		case strings.ContainsRune("bB", r):
			r = '8'
		default:
			return "", false
		}
		b.WriteRune(r)
	}
	return parseDigits(b.String())
}

// contraction reports an apostrophe's ending ("party's", "don't"); after
// any other apostrophe ("days'prior" with the space lost) the word ends.
func contraction(rest string) bool {
	n := 0
	for n < len(rest) && n < 3 && unicode.IsLetter(rune(rest[n])) {
		n++
	}
	if n == 0 || n == 3 || n < len(rest) && unicode.IsLetter(rune(rest[n])) {
		return false
	}
	switch strings.ToLower(rest[:n]) {
	case "s", "t", "d", "ll", "re", "ve", "m":
		return true
	}
	return false
}

func isDigitish(r rune) bool { return unicode.IsDigit(r) || strings.ContainsRune("oOlIsSbB", r) }

func classifyRun(s string, i, j int) []lexeme {
	raw := s[i:j]
	upper := unicode.IsUpper([]rune(raw)[0])
	p := strings.ToLower(raw)
	if !hasDigit(p) {
		return []lexeme{{kind: 'w', text: foldWord(raw), start: i, end: j, upper: upper}}
	}
	if d, ok := digitFix(p); ok {
		if num, ok := parseDigits(d); ok {
			return []lexeme{{kind: 'n', text: num, start: i, end: j}}
		}
	}
	k := 0
	for k < len(p) && (p[k] >= '0' && p[k] <= '9' || p[k] == ',' || p[k] == '.') {
		k++
	}
	if k > 0 && (numericLike(strings.ReplaceAll(p, ",", "")) || getTables().termWords[foldPlain(p[k:])]) {
		if num, ok := parseDigits(p[:k]); ok {
			return []lexeme{
				{kind: 'n', text: num, start: i, end: i + k},
				{kind: 'w', text: p[k:], start: i + k, end: j},
			}
		}
	}
	return []lexeme{{kind: 'w', text: foldWord(raw), start: i, end: j, upper: upper}}
}

// parseDigits canonicalises "1,000,000" to "1000000" and "1.50" to "1.5";
// it rejects anything else.
func parseDigits(p string) (string, bool) {
	if reThousands.MatchString(p) {
		// 1,000,000 or, misread, 1.000,000: every separator groups thousands.
		p = strings.NewReplacer(",", "", ".", "").Replace(p)
	}
	p = strings.ReplaceAll(p, ",", "")
	v, err := strconv.ParseFloat(p, 64)
	if err != nil || strings.Count(p, ".") > 1 {
		return "", false
	}
	return formatNum(v), true
}

var reThousands = regexp.MustCompile(`^\d{1,3}(?:[.,]\d{3})+$`)

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// extractTerms returns the key terms of a cleaned text in order.
func extractTerms(s string) []term {
	t := getTables()
	lx := lexTerms(s)
	sc := &termScanner{s: s, lx: lx, t: t}
	var out []term
	for i := 0; i < len(lx); {
		if tm, next, ok := sc.numberTerm(i); ok {
			out = append(out, tm)
			i = next
			continue
		}
		if tm, next, ok := sc.placeTerm(i); ok {
			out = append(out, tm)
			i = next
			continue
		}
		i++
	}
	return out
}

type termScanner struct {
	s  string
	lx []lexeme
	t  *tables
}

// word reports whether lexeme i is one of the words, allowing for OCR
// misreadings (see tables.ocrEqual).
func (sc *termScanner) word(i int, set ...string) bool {
	if i < 0 || i >= len(sc.lx) || sc.lx[i].kind != 'w' {
		return false
	}
	for _, w := range set {
		if sc.t.ocrEqual(sc.lx[i].text, foldWord(w)) {
			return true
		}
	}
	return false
}

func (sc *termScanner) sym(i int, set string) bool {
	return i >= 0 && i < len(sc.lx) && sc.lx[i].kind == 's' && strings.Contains(set, sc.lx[i].text)
}

func (sc *termScanner) span(i, j int) string {
	txt := sc.s[sc.lx[i].start:sc.lx[j-1].end]
	txt, _ = truncateRunes(txt, 80)
	return txt
}
