package review

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// quantity is a number expression being parsed: an amount, how it was
// written, its restatement in parentheses ("thirty (30)") and its unit.
type quantity struct {
	value    float64
	restated float64
	hasParen bool
	digits   bool   // the amount (or its restatement) was written in digits
	cur      string // ISO currency code
	kind     string
	unit     string // duration unit ("day", "business day")
	per      string // "per month", "per occurrence"
}

// term is the quantity as a key term: its canonical value, and its
// magnitude and scale when the words and digits agree.
func (q *quantity) term(text string) term {
	t := term{Kind: q.kind, Value: q.canonical(), Text: text}
	if !q.hasParen || q.restated == q.value {
		t.num, t.scale, t.comparable = q.value, q.scale(), true
	}
	return t
}

// durationDays are the lengths of duration units in days, to tell which
// of two periods is longer.
var durationDays = map[string]float64{"minute": 1.0 / 1440, "hour": 1.0 / 24, "day": 1, "week": 7, "month": 30, "year": 365,
	"business day": 7.0 / 5, "working day": 7.0 / 5, "calendar day": 1}

// scale is what two quantities must share to be compared by magnitude:
// the currency or the per-unit; for durations the value is in days.
func (q *quantity) scale() string {
	s := q.kind + " " + q.cur
	if q.per != "" {
		s += " per " + q.per
	}
	return s
}

// canonical is the comparable value: words and digits that disagree
// ("twelve (18)") keep both, so they equal neither twelve nor eighteen.
func (q *quantity) canonical() string {
	num := formatNum(q.value)
	if q.hasParen && q.restated != q.value {
		num += "|" + formatNum(q.restated)
	}
	var v string
	switch q.kind {
	case KindPercent:
		v = num + "%"
	case KindMultiplier:
		v = num + "x"
	case KindDuration:
		v = num + " " + q.unit
	case KindMoney:
		v = q.cur + " " + num
	default:
		v = num
	}
	if q.per != "" {
		v += " per " + q.per
	}
	return v
}

var (
	refWords = []string{"section", "sections", "article", "articles", "clause", "clauses", "paragraph",
		"paragraphs", "exhibit", "schedule", "annex", "appendix", "subsection", "item", "rule", "rules", "no", "number"}
	monthWords = []string{"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
		"oct", "nov", "dec"}
	durationUnits = map[string]string{
		"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
		"year": "year", "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
	}
	currencyWords = map[string]string{
		"dollar": "USD", "dollars": "USD", "usd": "USD", "euro": "EUR", "euros": "EUR", "eur": "EUR",
		"pound": "GBP", "pounds": "GBP", "gbp": "GBP", "sterling": "GBP",
	}
	currencySymbols = map[string]string{"$": "USD", "€": "EUR", "£": "GBP"}
	perWords        = []string{"month", "annum", "year", "day", "week", "occurrence", "claim", "incident", "person", "hour", "user", "seat"}
)

// numberTerm parses the number expression starting at lexeme i (amount,
// restatement, unit) and reports it unless it is a bare number that is not
// a key term (a cross-reference, a date, a list marker, a number word with
// nothing to say what it counts).
func (sc *termScanner) numberTerm(i int) (term, int, bool) {
	var q quantity
	if sc.sym(i, "(") && i > 0 && sc.lx[i-1].kind == 'w' && !sc.numberWord(i-1) {
		// "thlrtv (30) days": the words were misread beyond recognition;
		// the restatement in digits still says what the term is.
		if j, ok := sc.restatedOnly(i, &q); ok {
			return sc.finish(i, j, &q)
		}
		q = quantity{}
	}
	j := sc.currencyPrefix(i, &q)
	if sc.word(j, "twice") {
		q.value, q.kind = 2, KindMultiplier
		return q.term(sc.span(i, j+1)), j + 1, true
	}
	j, ok := sc.amount(j, &q, q.cur != "")
	if !ok {
		return term{}, 0, false
	}
	for range 3 {
		if !q.hasParen && (sc.sym(j, "(") || sc.speck(j) && sc.sym(j+1, "(")) {
			at := j
			if sc.speck(j) {
				at++
			}
			if k, ok := sc.paren(at, &q); ok {
				j = k
				continue
			}
		}
		if q.kind == "" {
			if k, ok := sc.unit(j, &q); ok {
				j = k
				continue
			}
		}
		break
	}
	return sc.finish(i, j, &q)
}

// finish completes a quantity parsed from lexeme i to j: money without a
// unit, "per month" ("for each month") after money or a percentage, and the decision on a
// bare number.
func (sc *termScanner) finish(i, j int, q *quantity) (term, int, bool) {
	if q.kind == "" && q.cur != "" {
		q.kind = KindMoney
	}
	if q.kind == KindMoney || q.kind == KindPercent {
		at := j
		if sc.speck(j) {
			at++
		}
		// "per claim", and as drafters also write it, "for each claim" or
		// "each claim": the same rate.
		n := 0
		switch {
		case sc.word(at, "per") || sc.word(at, "each"):
			n = 1
		case sc.word(at, "for") && sc.word(at+1, "each"):
			n = 2
		}
		if n > 0 {
			for _, w := range perWords {
				if sc.word(at+n, w) || sc.looseWord(at+n, w) {
					q.per = w
					j = at + n + 1
					break
				}
			}
		}
	}
	if q.kind == "" {
		if !sc.bareNumber(i, j, q) {
			return term{}, 0, false
		}
		q.kind = KindNumber
	}
	return q.term(sc.span(i, j)), j, true
}

// speck reports a '.' or ',' at lexeme j that OCR made of dust: glued to
// the amount before it, and followed either by a restatement glued to it
// ("thirty.(30) days") or by a lower-case word, which no sentence starts
// with ("$1,000,000. per occurrence"). A real full stop is followed by a
// space and a capital.
func (sc *termScanner) speck(j int) bool {
	if !sc.sym(j, ".,") || j == 0 || j+1 >= len(sc.lx) || sc.lx[j].start != sc.lx[j-1].end {
		return false
	}
	next := sc.lx[j+1]
	if next.kind == 's' {
		return next.text == "(" && next.start == sc.lx[j].end
	}
	return sc.lx[j].text == "." && next.kind == 'w' && !next.upper
}

// restatedOnly parses "(30) days", "(1%)" or "(2x)" at a parenthesis,
// for a unit term whose number words could not be read.
func (sc *termScanner) restatedOnly(i int, q *quantity) (int, bool) {
	j, ok := sc.paren(i, q)
	if !ok {
		return 0, false
	}
	q.value, q.hasParen = q.restated, false
	if q.kind == "" {
		k, ok := sc.unit(j, q)
		if !ok || q.kind != KindDuration {
			return 0, false
		}
		j = k
	}
	return j, true
}

// bareNumber decides whether a number with no unit is a key term: only
// when written in digits (or restated in them) and not a cross-reference
// ("Section 7"), a date or year, or a list marker ("(1)").
func (sc *termScanner) bareNumber(i, j int, q *quantity) bool {
	if !q.digits {
		return false
	}
	if sc.word(i-1, refWords...) || sc.sym(i-1, "§") || sc.word(i-1, monthWords...) {
		return false
	}
	if !q.hasParen && q.value >= 1900 && q.value <= 2100 && q.value == float64(int(q.value)) {
		return false
	}
	if i > 0 && sc.lx[i].start == sc.lx[i-1].end && (sc.lx[i-1].kind == 'w' || sc.sym(i-1, "'")) ||
		j < len(sc.lx) && sc.lx[j].start == sc.lx[j-1].end && sc.lx[j].kind == 'w' {
		return false // glued to a word: a misread letter ("Provider'5", "5hall"), not a number
	}
	if sc.sym(i-1, "(") && sc.sym(j, ")") {
		return false
	}
	// A bare decimal with no unit ("as set out in 7.1") is a reference.
	return !strings.Contains(sc.lx[i].text, ".")
}

func (sc *termScanner) currencyPrefix(i int, q *quantity) int {
	if i < len(sc.lx) && sc.lx[i].kind == 's' {
		if c, ok := currencySymbols[sc.lx[i].text]; ok {
			q.cur = c
			return i + 1
		}
	}
	if sc.word(i, "us", "u") && sc.sym(i+1, "$") {
		q.cur = "USD"
		return i + 2
	}
	for _, code := range []string{"usd", "eur", "gbp"} {
		if sc.word(i, code) && i+1 < len(sc.lx) && (sc.lx[i+1].kind == 'n' || sc.numberWord(i+1)) {
			q.cur = strings.ToUpper(code)
			return i + 1
		}
	}
	return i
}

// amount parses digits or number words at i, with a magnitude after them
// (2 million; with a currency also 2m, 500k, 1bn).
func (sc *termScanner) amount(i int, q *quantity, money bool) (int, bool) {
	if i >= len(sc.lx) {
		return i, false
	}
	if sc.lx[i].kind == 'n' {
		q.value = parseFloat(sc.lx[i].text)
		q.digits = true
		i++
		mags := map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9}
		if money {
			mags["k"], mags["m"], mags["mm"], mags["bn"] = 1e3, 1e6, 1e6, 1e9
		}
		if i < len(sc.lx) && sc.lx[i].kind == 'w' {
			if m, ok := lookup(sc.t, mags, sc.lx[i].text); ok {
				q.value *= m
				i++
			}
		}
		return i, true
	}
	v, next, ok := sc.words(i)
	if !ok {
		return i, false
	}
	q.value = v
	return next, true
}

func (sc *termScanner) numberWord(i int) bool {
	_, ok := sc.numberValue(i)
	return ok
}

// numberValue reads lexeme i as a number word, allowing for OCR
// misreadings ("thirtv").
func (sc *termScanner) numberValue(i int) (float64, bool) {
	if i < 0 || i >= len(sc.lx) || sc.lx[i].kind != 'w' {
		return 0, false
	}
	w := sc.lx[i].text
	if v, ok := sc.t.numbers[w]; ok {
		return v, true
	}
	for _, k := range sc.t.numberWords {
		if sc.t.ocrEqual(w, k) {
			return sc.t.numbers[k], true
		}
	}
	return 0, false
}

// words parses a run of number words: "one hundred twenty-five", "one and
// one-half", "two million". A fraction word applies to the word before it.
func (sc *termScanner) words(i int) (float64, int, bool) {
	var total, current, last float64
	n := 0
	j := i
	for j < len(sc.lx) {
		switch {
		case sc.numberWord(j):
			v, _ := sc.numberValue(j)
			switch {
			case v < 1:
				if n == 0 {
					return 0, i, false
				}
				current = current - last + last*v
			case v == 100:
				current = max(current, 1) * 100
			case v >= 1000:
				total += max(current, 1) * v
				current = 0
			default:
				current += v
				last = v
			}
			n++
			j++
		case n > 0 && sc.sym(j, "-") && sc.numberWord(j+1):
			j++
		case n > 0 && sc.word(j, "and") && (sc.numberWord(j+1) || sc.word(j+1, "a") && sc.numberWord(j+2)):
			j++
		case n > 0 && sc.word(j, "a") && sc.numberWord(j+1):
			j++
		default:
			if n == 0 {
				return 0, i, false
			}
			return total + current, j, true
		}
	}
	if n == 0 {
		return 0, i, false
	}
	return total + current, j, true
}

// paren parses a restatement in parentheses: "(30)", "(1%)", "(2x)",
// "($1,000,000)", "(one million dollars)".
func (sc *termScanner) paren(i int, q *quantity) (int, bool) {
	var inner quantity
	j := sc.currencyPrefix(i+1, &inner)
	j, ok := sc.amount(j, &inner, inner.cur != "")
	if !ok && j < len(sc.lx) && sc.lx[j].kind == 'w' && sc.sym(j+1, ")") {
		// "(S)" after "five": in a restatement a digit-like letter is a digit.
		lx := sc.lx[j]
		if num, fok := forceDigits(sc.s[lx.start:lx.end]); fok && lx.end-lx.start <= 3 {
			inner.value, inner.digits = parseFloat(num), true
			j, ok = j+1, true
		}
	}
	if !ok {
		return i, false
	}
	switch {
	case sc.sym(j, "%"):
		inner.kind = KindPercent
		j++
	case sc.word(j, "x"):
		inner.kind = KindMultiplier
		j++
	case sc.word(j, "percent"):
		inner.kind = KindPercent
		j++
	default:
		if k, ok := sc.currencySuffix(j, &inner); ok {
			j = k
		}
	}
	if !sc.sym(j, ")") {
		return i, false
	}
	q.hasParen, q.restated = true, inner.value
	q.digits = q.digits || inner.digits
	if q.cur == "" {
		q.cur = inner.cur
	}
	if q.kind == "" && inner.kind != "" {
		q.kind = inner.kind
	}
	return j + 1, true
}

// unit parses what the amount counts: percent, times, a duration unit
// (with business/calendar/working), or a currency after the amount.
func (sc *termScanner) unit(i int, q *quantity) (int, bool) {
	switch {
	case sc.sym(i, "%") || sc.word(i, "percent"):
		q.kind = KindPercent
		return i + 1, true
	case sc.word(i, "per") && sc.word(i+1, "cent"):
		q.kind = KindPercent
		return i + 2, true
	case sc.word(i, "x", "times"):
		q.kind = KindMultiplier
		return i + 1, true
	}
	if k, ok := sc.currencySuffix(i, q); ok {
		q.kind = KindMoney
		return k, true
	}
	j := i
	if sc.sym(j, "-") {
		j++
	}
	qual := ""
	for _, w := range []string{"business", "calendar", "working"} {
		// One letter lost or added in these long words is still them.
		if sc.word(j, w) || j < len(sc.lx) && sc.lx[j].kind == 'w' && sc.t.distance(sc.lx[j].text, foldWord(w)) <= 1 {
			qual = w + " "
			j++
			break
		}
	}
	if j < len(sc.lx) && sc.lx[j].kind == 'w' {
		if u, ok := lookup(sc.t, durationUnits, sc.lx[j].text); ok {
			q.kind, q.unit = KindDuration, qual+u
			return j + 1, true
		}
		for _, u := range []string{"days", "years", "months", "weeks", "hours", "minutes"} {
			if sc.looseWord(j, u) {
				q.kind, q.unit = KindDuration, qual+durationUnits[u]
				return j + 1, true
			}
		}
	}
	return i, false
}

// currencySuffix parses "dollars", "U.S. dollars", "euros", "GBP".
func (sc *termScanner) currencySuffix(i int, q *quantity) (int, bool) {
	j := i
	if sc.word(j, "u") && sc.sym(j+1, ".") && sc.word(j+2, "s") {
		j += 3
		if sc.sym(j, ".") {
			j++
		}
	} else if sc.word(j, "us") {
		j++
	}
	if j < len(sc.lx) && sc.lx[j].kind == 'w' {
		if c, ok := lookup(sc.t, currencyWords, sc.lx[j].text); ok {
			if q.cur == "" {
				q.cur = c
			}
			return j + 1, true
		}
	}
	return i, false
}

// placeTerm matches a jurisdiction at lexeme i: the longest listed place
// whose words follow (punctuation between them ignored), starting with a
// capitalised word.
func (sc *termScanner) placeTerm(i int) (term, int, bool) {
	if sc.lx[i].kind != 'w' || !sc.lx[i].upper {
		return term{}, 0, false
	}
	var words []string
	var idx []int
scan:
	for j := i; j < len(sc.lx) && len(words) < sc.t.placeMaxLen; j++ {
		switch {
		case sc.lx[j].kind == 'w':
			words = append(words, sc.lx[j].text)
			idx = append(idx, j)
		case sc.sym(j, ".,&"):
		default:
			break scan
		}
	}
	for _, p := range sc.t.places {
		if len(p.words) > len(words) || !sc.sameWords(p.words, words[:len(p.words)]) {
			continue
		}
		end := idx[len(p.words)-1] + 1
		return term{Kind: KindJurisdiction, Value: p.canonical, Text: sc.span(i, end)}, end, true
	}
	return term{}, 0, false
}

// looseWord is word for the long words after a number (units, "per
// occurrence"), where OCR damage is common and a near miss cannot mean
// another term: one letter lost, added or wrong in a word of five letters
// or more ("ears", "occmrrence"), or the word with the next one run into
// it ("DAYSAFTER", "monthor").
func (sc *termScanner) looseWord(i int, w string) bool {
	if i >= len(sc.lx) || sc.lx[i].kind != 'w' {
		return false
	}
	read, fw := sc.lx[i].text, foldWord(w)
	if len(fw) >= 5 && len(read) >= 4 && sc.t.distance(read, fw) <= 1 {
		return true
	}
	return len(fw) >= 4 && len(read) >= len(fw)+2 && strings.HasPrefix(read, fw)
}

// sameWords compares a listed place with words read from the document.
// A short one-word place (Iowa, UAE) must be read exactly: a misread
// "USE" is not the USA.
func (sc *termScanner) sameWords(listed, read []string) bool {
	if len(listed) == 1 && len(listed[0]) <= 4 {
		return listed[0] == read[0]
	}
	for i := range listed {
		if !sc.t.ocrEqual(read[i], listed[i]) {
			return false
		}
	}
	return true
}

// lookup finds a lexeme (a fold key) in a table keyed by plain words,
// exactly or allowing for OCR misreadings.
func lookup[V any](t *tables, m map[string]V, folded string) (V, bool) {
	ks := slices.Sorted(maps.Keys(m)) // a misreading close to two words resolves the same way every time
	for _, exact := range []bool{true, false} {
		for _, k := range ks {
			if fk := foldWord(k); fk == folded || !exact && t.ocrEqual(folded, fk) {
				return m[k], true
			}
		}
	}
	var zero V
	return zero, false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func parseFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
