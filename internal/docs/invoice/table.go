package invoice

import (
	"strings"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// column is one column of a line-item table, spanning its header words.
type column struct {
	kind       string
	xMin, xMax float64
}

// line is one line item as read.
type line struct {
	desc       []string
	qty, unit  string
	price, amt *amount
	words      []word // all of the line's words
	numWords   []word // its quantity, unit price and amount words
	moneyWords []word // its unit price and amount words
	issues     []string
	top        float64
}

// headerColumns reads a row as a table header: at least a description and
// an amount column and a quantity or unit price column, with header words
// making up most of the row.
func (x *run) headerColumns(r *row) ([]column, bool) {
	var cols []column
	matched := 0
	for i := 0; i < len(r.words); {
		n, col := x.headerAt(r.words, i)
		if n == 0 {
			n, col = 1, colOther
		} else {
			matched += n
		}
		b := boxOf(r.words[i : i+n])
		cols = append(cols, column{kind: col, xMin: b.XMin, xMax: b.XMax})
		i += n
	}
	has := map[string]bool{}
	for _, c := range cols {
		has[c.kind] = true
	}
	ok := has[colDescription] && has[colAmount] && (has[colQuantity] || has[colUnitPrice]) &&
		float64(matched) >= 0.6*float64(len(r.words))
	return cols, ok
}

// headerAt matches the longest header phrase starting at word i,
// comparing without spaces ("UnitPrice" is "Unit Price" after OCR lost
// the space).
func (x *run) headerAt(ws []word, i int) (int, string) {
	for n := min(3, len(ws)-i); n >= 1; n-- {
		var b strings.Builder
		split := false
		for k, w := range ws[i : i+n] {
			b.WriteString(textnorm.Compact(w.text))
			split = split || k > 0 && newCell(ws[i+k-1], w, cellGap) // "Unit | Price" are two columns
		}
		if split {
			continue
		}
		got := b.String()
		for _, h := range x.lx.headers {
			if got == h.compact {
				return n, h.col
			}
		}
	}
	return 0, ""
}

// tables reads every line-item table in the document, in order. A table
// that runs to the bottom of a page without reaching its totals continues
// on the next page, with or without a repeated header.
func (x *run) tables() []line {
	var out []line
	var open []column
	for _, pg := range x.pages {
		start := 0
		cols := open
		for ri, r := range pg.rows {
			if c, ok := x.headerColumns(r); ok {
				cols, start = c, ri+1
				r.inTable = true
				break
			}
		}
		if cols == nil {
			continue
		}
		lines, stopped := x.tableRows(pg, start, cols)
		if pg.ocr {
			harmonizeUnits(lines)
			snapUnits(lines, x.lx.units)
		}
		out = append(out, lines...)
		open = nil
		if !stopped {
			open = cols
		}
	}
	return out
}

// tableRows reads the rows after a header until a totals row, another
// header or a large gap. It reports whether the table was closed.
func (x *run) tableRows(pg *page, start int, cols []column) ([]line, bool) {
	var out []line
	prevBottom := -1.0
	if start > 0 {
		prevBottom = pg.rows[start-1].box.YMax
	}
	for k := start; k < len(pg.rows); k++ {
		r := pg.rows[k]
		if _, isHeader := x.headerColumns(r); isHeader && k > start {
			return out, true
		}
		if prevBottom >= 0 && r.box.YMin-prevBottom > 4*r.height && len(out) > 0 {
			return out, true
		}
		if x.isCarryRow(r) {
			r.inTable = true // a running total between pages, not an item
			continue
		}
		ln, hasAmount := x.readLine(r, cols)
		switch {
		case x.isTotalsRow(r) && ln.qty == "" && ln.price == nil && (hasAmount || len(ln.desc) == 0):
			return out, true
		case hasAmount && (len(ln.desc) > 0 || ln.qty != ""):
			out = append(out, ln)
		case len(out) > 0 && len(ln.desc) > 0 && ln.qty == "" && r.box.YMin-prevBottom < 1.6*r.height:
			last := &out[len(out)-1]
			last.desc = append(last.desc, ln.desc...)
			last.words = append(last.words, ln.words...)
		default:
			continue // a row inside the table region that is not an item
		}
		r.inTable = true
		prevBottom = r.box.YMax
	}
	return out, false
}

func (x *run) isTotalsRow(r *row) bool {
	for _, h := range x.hits[r] {
		switch h.lab.field {
		case result.FieldSubtotal, result.FieldTax, result.FieldShipping, result.FieldTotal:
			return true
		}
	}
	return false
}

// readLine assigns a row's cells to columns and parses them.
func (x *run) readLine(r *row, cols []column) (line, bool) {
	byCol := map[string][]word{}
	for _, c := range cells(r.words, 0.8) {
		k := assignColumn(cols, c)
		byCol[cols[k].kind] = append(byCol[cols[k].kind], c...)
	}
	ln := line{words: r.words, top: r.box.YMin}
	if ws := byCol[colDescription]; len(ws) > 0 {
		if d := trimOCRJunk(joinWords(ws), r.words[0].conf < 1); d != "" {
			ln.desc = []string{d}
		}
	}
	if len(byCol[colQuantity]) == 0 && len(byCol[colUnit]) > 1 {
		// "5 Satz" set closer than a cell gap: the quantity ran into the
		// unit column.
		if _, err := parseAmount(byCol[colUnit][0].text, x.decHint, x.lx, false); err == nil && isQtyText(byCol[colUnit][0].text) {
			byCol[colQuantity], byCol[colUnit] = byCol[colUnit][:1], byCol[colUnit][1:]
		}
	}
	ln.moneyWords = append(append(ln.moneyWords, byCol[colUnitPrice]...), byCol[colAmount]...)
	ln.numWords = append(append(ln.numWords, byCol[colQuantity]...), ln.moneyWords...)
	if ws := byCol[colQuantity]; len(ws) > 0 {
		ln.qty, ln.unit = x.parseQty(ws, &ln.issues)
	}
	if ws := byCol[colUnit]; len(ws) > 0 {
		ln.unit = joinWords(ws)
	}
	if ws := byCol[colUnitPrice]; len(ws) > 0 {
		if a, _, ok := x.findAmount(ws, false); ok {
			ln.price = &a
			ln.issues = append(ln.issues, amountIssues(a)...)
		}
	}
	ws := byCol[colAmount]
	if len(ws) == 0 {
		return ln, false
	}
	a, _, ok := x.findAmount(ws, false)
	if !ok {
		return ln, false
	}
	ln.amt = &a
	ln.issues = append(ln.issues, amountIssues(a)...)
	return ln, true
}

// isQtyText: digits with at most one decimal separator.
func isQtyText(s string) bool {
	seps := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r == '.' || r == ',':
			seps++
		default:
			return false
		}
	}
	return seps <= 1 && s != ""
}

// assignColumn picks the column a cell overlaps most, else the nearest.
func assignColumn(cols []column, c []word) int {
	b := boxOf(c)
	best, bestOv := -1, 0.0
	for i, col := range cols {
		ov := min(b.XMax, col.xMax+4) - max(b.XMin, col.xMin-4)
		if ov > bestOv {
			best, bestOv = i, ov
		}
	}
	if best >= 0 {
		return best
	}
	bestD := 0.0
	for i, col := range cols {
		d := max(col.xMin-b.XMax, b.XMin-col.xMax, 0)
		if best < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// parseQty reads "2", "1.5", "2,5" or "10 pcs" (unit after the number).
// The column is numeric, so OCR's look-alikes are digits here even on
// their own ("l" is 1).
func (x *run) parseQty(ws []word, issues *[]string) (qty, unit string) {
	first := strings.TrimSpace(ws[0].text)
	num, rest := first, ""
	if fixed, ok := fixColumnDigits(first); ok {
		num = fixed
		*issues = appendOnce(*issues, result.IssueOCRCorrected)
	} else if i := strings.IndexFunc(first, func(r rune) bool { return r > '9' }); i > 0 {
		num, rest = first[:i], first[i:]
	}
	a, err := parseAmount(num, x.decHint, x.lx, false)
	if err != nil || a.implausible || a.currency != "" {
		return "", ""
	}
	units := []string{}
	if rest != "" {
		units = append(units, rest)
	}
	for _, w := range ws[1:] {
		units = append(units, w.text)
	}
	return a.value.String(), strings.Join(units, " ")
}

// harmonizeUnits repairs units OCR read with a speck or a stray digit in
// front ("om", "=m", "4h", "ohrs") when what follows is a unit the same
// table prints on at least two other lines: a table uses few units.
func harmonizeUnits(lines []line) {
	count := map[string]int{}
	for _, ln := range lines {
		count[strings.ToLower(ln.unit)]++
	}
	for i := range lines {
		u := strings.ToLower(lines[i].unit)
		if u == "" || count[u] >= 2 {
			continue
		}
		for cut := 1; cut <= 2 && cut < len(u); cut++ {
			tail := u[cut:]
			if count[tail] >= 2 && !strings.ContainsFunc(tail, unicode.IsDigit) {
				lines[i].unit = commonSpelling(lines, tail)
				lines[i].issues = appendOnce(lines[i].issues, result.IssueOCRCorrected)
				break
			}
		}
	}
}

// snapUnits cleans the units harmonizeUnits left alone: a unit of no
// letters ("9", "5%": a speck or a stray digit in the unit column) is
// dropped; one with specks around its letters ("==m", "5h") is its
// letters when they are a unit; one wrong letter ("en" among "ea"s,
// "wur") is the unit the table prints on another line, or a known unit
// of three letters or more; a speck letter in front ("Sm") goes when the
// rest is a known unit. Anything else stays as read.
func snapUnits(lines []line, known map[string]bool) {
	count := map[string]int{}
	for _, ln := range lines {
		count[strings.ToLower(ln.unit)]++
	}
	for i := range lines {
		u := lines[i].unit
		lu := strings.ToLower(u)
		if u == "" || known[lu] || count[lu] >= 2 {
			continue
		}
		fixed, ok := snapUnit(u, lines, count, known)
		if ok {
			lines[i].unit = fixed
			lines[i].issues = appendOnce(lines[i].issues, result.IssueOCRCorrected)
		}
	}
}

func snapUnit(u string, lines []line, count map[string]int, known map[string]bool) (string, bool) {
	letters := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) {
			return r
		}
		return -1
	}, u)
	ll := strings.ToLower(letters)
	switch {
	case letters == "":
		return "", true
	case known[ll] || count[ll] >= 1 && ll != strings.ToLower(u):
		return spelling(lines, ll, letters), true
	}
	var near []string
	for v, n := range count {
		if n >= 1 && v != ll && oneLetterOff(ll, v) {
			near = append(near, v)
		}
	}
	if len(near) == 0 && len(ll) >= 3 {
		for v := range known {
			if oneLetterOff(ll, v) {
				near = append(near, v)
			}
		}
	}
	if len(near) == 1 {
		return spelling(lines, near[0], likeCase(letters, near[0])), true
	}
	if r := []rune(ll); len(r) >= 2 && known[string(r[1:])] {
		return spelling(lines, string(r[1:]), string([]rune(letters)[1:])), true
	}
	return "", false
}

// spelling is how the table prints unit u (lower case) on another line,
// else fallback.
func spelling(lines []line, u, fallback string) string {
	for _, ln := range lines {
		if strings.ToLower(ln.unit) == u {
			return ln.unit
		}
	}
	return fallback
}

// likeCase writes v (lower case) capitalised when read was.
func likeCase(read, v string) string {
	r := []rune(read)
	if len(r) > 0 && unicode.IsUpper(r[0]) {
		rv := []rune(v)
		rv[0] = unicode.ToUpper(rv[0])
		return string(rv)
	}
	return v
}

// oneLetterOff: a and b differ in exactly one letter, same length, at
// least two letters.
func oneLetterOff(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) || len(ra) < 2 {
		return false
	}
	diff := 0
	for i := range ra {
		if ra[i] != rb[i] {
			diff++
		}
	}
	return diff == 1
}

// commonSpelling is how the table prints unit u (any case).
func commonSpelling(lines []line, u string) string { return spelling(lines, u, u) }

// trimOCRJunk drops the specks OCR reads at the edges of a text cell
// ("‘Schrauben", "__Dichtungssatz", "Montagearbeiten:", "visit.");
// brackets that close or open a word stay. Text-layer cells are kept as
// printed.
func trimOCRJunk(s string, ocr bool) string {
	if !ocr {
		return s
	}
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '(' })
	return strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ')' })
}

// fixColumnDigits reads a token of digits, separators and look-alikes
// in a numeric column as digits; it fails on anything else.
func fixColumnDigits(s string) (string, bool) {
	changed := false
	out := []rune(s)
	for i, r := range out {
		switch d, ok := ocrDigit(r); {
		case r >= '0' && r <= '9', r == '.', r == ',':
		case ok:
			out[i], changed = d, true
		default:
			return s, false
		}
	}
	return string(out), changed
}

// inferQty fills the quantity of a line whose quantity OCR lost (a
// lone digit is the word tesseract drops most) from its amount and unit
// price, when the quotient is a quantity as invoices print them (at most
// two decimals, the fewest that fit) and multiplies back to the amount
// within one minor unit. Only money read as printed anchors it; the line
// is marked as repaired.
func inferQty(ln *line, cent decimal.Decimal) {
	if ln.qty != "" || ln.price == nil || ln.amt == nil || suspect(ln.price) || suspect(ln.amt) ||
		ln.price.value.LessThan(decimal.NewFromInt(1)) || !ln.amt.value.IsPositive() {
		return
	}
	for places := int32(0); places <= 2; places++ {
		q := ln.amt.value.DivRound(ln.price.value, places+2).Round(places)
		if q.IsPositive() && q.Mul(ln.price.value).Sub(ln.amt.value).Abs().LessThanOrEqual(cent) {
			ln.qty = q.String()
			ln.issues = appendOnce(ln.issues, result.IssueOCRCorrected)
			return
		}
	}
}

// checkLine compares quantity x unit price with the amount, allowing one
// minor unit for rounding.
func checkLine(ln *line) {
	if !multipliesOut(ln) {
		ln.issues = appendOnce(ln.issues, result.IssueLineMismatch)
	}
}

// multipliesOut: quantity x unit price is the amount within one minor
// unit, or the line lacks one of them (nothing to check).
func multipliesOut(ln *line) bool {
	if ln.qty == "" || ln.price == nil || ln.amt == nil {
		return true
	}
	q, err := decimal.NewFromString(ln.qty)
	if err != nil {
		return true
	}
	return q.Mul(ln.price.value).Sub(ln.amt.value).Abs().LessThanOrEqual(decimal.New(1, -2))
}
