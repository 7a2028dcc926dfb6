package invoice

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// mainPage is the page with the most strong labels among the first two:
// the invoice itself rather than a fax cover sheet.
func (x *run) mainPage() *page {
	best, bestN := x.pages[0], -1
	for _, pg := range x.pages[:min(2, len(x.pages))] {
		n := 0
		for _, r := range pg.rows {
			for _, h := range x.hits[r] {
				if h.lab.field != "" && !h.lab.weak {
					n++
				}
			}
		}
		if n > bestN {
			best, bestN = pg, n
		}
	}
	return best
}

// coverPages marks fax cover sheets: pages before the main page whose
// first rows carry a cover title ("FAX", "Fax cover sheet").
func (x *run) coverPages() map[int]bool {
	out := map[int]bool{}
	for _, pg := range x.pages {
		if pg.number >= x.main.number {
			break
		}
		for _, r := range pg.rows[:min(3, len(pg.rows))] {
			f := strings.Trim(textnorm.Fold(joinWords(cells(r.words, 1.0)[0])), " :.-")
			if slices.Contains(x.lx.coverTitles, f) {
				out[pg.number] = true
			}
		}
	}
	return out
}

// coverField: the fields a fax cover sheet may give, its sender and the
// invoice it names.
func coverField(f string) bool { return f == result.FieldVendorName || f == result.FieldInvoiceNumber }

// inferVendor takes the letterhead: the most prominent cell in the top
// third of the letterhead page that is not a title, a label, a value or the
// customer's address block.
func (x *run) inferVendor() {
	pg := x.letterhead()
	excluded := x.customerCells(pg)
	type cand struct {
		ws    []word
		score float64
	}
	cs := []cand{}
	for _, r := range pg.rows {
		if r.box.YMin > pg.height*0.33 || r.inTable {
			continue
		}
		for _, c := range cells(r.words, 1.0) {
			if excluded[c[0].box] || !x.vendorLike(r, c) {
				continue
			}
			score := medianHeight(c) - r.box.YMin/200
			if x.hasLegalSuffix(joinWords(c)) {
				score += 3
			}
			cs = append(cs, cand{c, score})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].score > cs[j].score })
	// The best cell is the reading; the next ones, then the names a legal
	// footer or a sender line prints, are candidates the host may match
	// against its vendor master.
	for k, c := range cs[:min(3, len(cs))] {
		base := 0.7
		if k > 0 {
			base = 0.5
		}
		x.add(result.FieldVendorName, candidate{value: x.nameText(pg, c.ws), method: result.MethodInferred, words: c.ws, base: base})
	}
	x.footerNames(excluded)
}

func (x *run) nameText(pg *page, ws []word) string {
	name := strings.TrimSpace(joinWords(ws))
	if pg.ocr {
		name = strings.TrimRight(trimOCRJunk(name, true)+keepDot(name), " ")
	}
	return name
}

// footerNames adds the company names printed elsewhere than the
// letterhead, each the part of a cell that ends in a legal form: the
// first line of a legal footer, the first part of a sender line ("Müller
// GmbH · Hauptstr. 5 · 10115 Berlin").
func (x *run) footerNames(excluded map[extract.Box]bool) {
	seen := map[string]bool{}
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			if r.inTable || r.box.YMin < pg.height*0.33 && pg == x.letterhead() && r.height > 7 {
				continue
			}
			for _, c := range cells(r.words, 1.0) {
				if excluded[c[0].box] {
					continue
				}
				for _, seg := range splitSeparators(c) {
					t := strings.TrimSpace(joinWords(seg))
					if !x.hasLegalSuffix(t) || !x.vendorLike(r, seg) || seen[t] {
						continue
					}
					seen[t] = true
					x.add(result.FieldVendorName, candidate{value: x.nameText(pg, seg), method: result.MethodInferred, words: seg, base: 0.5, pos: 1 << 20})
				}
			}
		}
	}
}

// splitSeparators splits a cell at the separators a sender line or a
// footer sets between its parts ("·", "|", "•").
func splitSeparators(c []word) [][]word {
	var out [][]word
	var cur []word
	for _, w := range c {
		if w.text == "·" || w.text == "|" || w.text == "•" || w.text == "-" {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// letterhead is the page whose top carries the vendor's name: the first
// page that is not a fax cover sheet. The main page (most labels) can be
// a later one when OCR missed labels on the first, and the top of a
// continuation page is a table, not a letterhead.
func (x *run) letterhead() *page {
	for _, pg := range x.pages {
		if pg.number >= x.main.number {
			break
		}
		if !x.cover[pg.number] {
			return pg
		}
	}
	return x.main
}

// keepDot restores the full stop of a name ending in an abbreviation
// ("Northwind Traders Inc."), which trimOCRJunk takes off.
func keepDot(name string) string {
	if strings.HasSuffix(name, ".") && !strings.HasSuffix(name, "..") {
		return "."
	}
	return ""
}

func (x *run) vendorLike(r *row, c []word) bool {
	t := joinWords(c)
	if len(c) == 1 && strings.HasSuffix(t, ":") {
		return false // a label OCR misspelled ("Rechnungsempfinger:"), never a name
	}
	f := strings.Trim(textnorm.Fold(t), " :.,")
	for _, title := range x.lx.titles {
		if f == title || strings.HasPrefix(f, title+" ") && len(strings.Fields(f)) <= 3 {
			return false
		}
	}
	letters, digits := 0, 0
	for _, ch := range t {
		switch {
		case unicode.IsLetter(ch):
			letters++
		case unicode.IsDigit(ch):
			digits++
		}
	}
	if letters < 3 || digits > letters/2 || len([]rune(t)) > result.MaxTextRunes {
		return false
	}
	b := boxOf(c)
	for _, h := range x.hits[r] {
		hb := boxOf(r.slice(r.fmap[h.start], r.fmap[h.end]))
		if hb.XMax >= b.XMin && hb.XMin <= b.XMax {
			return false
		}
	}
	return true
}

// customerCells marks the cells of customer address blocks ("Bill To:"
// and the lines under it), keyed by their first word's box.
func (x *run) customerCells(pg *page) map[extract.Box]bool {
	out := map[extract.Box]bool{}
	for ri, r := range pg.rows {
		for _, c := range cells(r.words, 1.0) {
			f := strings.TrimSpace(textnorm.Fold(joinWords(c)))
			if !x.isCustomerMarker(f) {
				continue
			}
			out[c[0].box] = true
			b := boxOf(c)
			bottom := r.box.YMax
			for k := ri; k < len(pg.rows) && k <= ri+5; k++ {
				if pg.rows[k].box.YMin-bottom > 3*r.height {
					break // the block ended: a gap of three lines
				}
				bottom = max(bottom, pg.rows[k].box.YMax)
				for _, c2 := range cells(pg.rows[k].words, 1.0) {
					if bb := boxOf(c2); bb.XMin >= b.XMin-10 && bb.XMin <= b.XMin+250 && (k > ri || bb.XMin >= b.XMin) {
						out[c2[0].box] = true
					}
				}
			}
		}
	}
	return out
}

func (x *run) isCustomerMarker(f string) bool {
	for _, m := range x.lx.customerBlocks {
		if strings.HasSuffix(m, ":") {
			if strings.HasPrefix(f, m) {
				return true
			}
			continue
		}
		if f == m || strings.HasPrefix(f, m+":") || f == m+" :" {
			return true
		}
	}
	return false
}

func (x *run) hasLegalSuffix(s string) bool {
	fs := strings.Fields(textnorm.Fold(s))
	if len(fs) < 2 {
		return false
	}
	last := strings.Trim(fs[len(fs)-1], ",")
	for _, l := range x.lx.legalSuffixes {
		if last == l {
			return true
		}
	}
	return false
}

func medianHeight(ws []word) float64 {
	hs := make([]float64, len(ws))
	for i, w := range ws {
		hs[i] = w.height()
	}
	sort.Float64s(hs)
	return hs[len(hs)/2]
}

// inferCurrency reads the currency from the markers printed with the
// chosen amounts, when no label or template gave it.
func (x *run) inferCurrency(amounts []*candidate) {
	count := map[string]int{}
	best := map[string][]word{} // the most confidently read marker per code
	byCode := map[string]bool{} // some marker was the ISO code itself
	for _, c := range amounts {
		if c == nil || c.amt == nil || c.amt.currency == "" {
			continue
		}
		code := c.amt.currency
		count[code]++
		byCode[code] = byCode[code] || strings.Contains(joinWords(c.words), code)
		if b, ok := best[code]; !ok || minConf(c.words) > minConf(b) {
			best[code] = c.words
		}
	}
	code, n := "", 0
	for k, v := range count {
		if v > n || v == n && k < code {
			code, n = k, v
		}
	}
	if code == "" {
		return
	}
	// A printed ISO code says the currency outright; a symbol nearly so
	// ("$" is also other dollars).
	base := 0.85
	if byCode[code] {
		base = 0.93
	}
	x.add(result.FieldCurrency, candidate{value: code, method: result.MethodInferred, words: best[code], base: base})
}

// decideLocale sets the decimal hint and the date order: the template's
// options first, then what the digits prove, then the locale words.
func (x *run) decideLocale(tpl *Template, hint DateOrder) {
	all := x.allText()
	x.dollar = strings.Contains(all, "$")
	if tpl != nil && tpl.decimal != 0 {
		x.decHint = tpl.decimal
	} else {
		x.decHint = x.inferDecimal()
	}
	switch {
	case tpl != nil && tpl.order != OrderUnknown:
		x.order = tpl.order
	case hint != OrderUnknown:
		x.order = hint
	default:
		if o := x.dp.unambiguousOrder(all); o != OrderUnknown {
			x.order = o
		} else {
			x.order, x.orderWeak = x.localeOrder(textnorm.Fold(all)), true
		}
	}
}

// localeOrder: day-first for European invoices (comma decimals, EU
// words), month-first otherwise.
func (x *run) localeOrder(folded string) DateOrder {
	score := 0
	if x.decHint == ',' {
		score += 2
	}
	for _, w := range x.lx.dayFirst {
		if containsWord(folded, w) {
			score++
		}
	}
	for _, w := range x.lx.monthFirst {
		if containsWord(folded, w) {
			score--
		}
	}
	if strings.Contains(folded, "€") || strings.Contains(folded, "£") {
		score += 2
	}
	if strings.Contains(folded, "$") {
		score -= 2
	}
	if score > 0 {
		return OrderDMY
	}
	return OrderMDY
}

func containsWord(s, w string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], w)
		if k < 0 {
			return false
		}
		at := i + k
		before := at == 0 || !isWordByte(s[at-1])
		after := at+len(w) >= len(s) || !isWordByte(s[at+len(w)])
		if before && after {
			return true
		}
		i = at + 1
	}
}

func isWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// inferDecimal counts amounts whose last separator is followed by exactly
// two digits: "1.234,56" votes ',', "1,234.56" votes '.'.
func (x *run) inferDecimal() rune {
	dot, comma := 0, 0
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			for _, w := range r.words {
				t := strings.TrimRight(w.text, "€$£ ")
				if len(t) < 4 || !isDigits(t[len(t)-2:]) {
					continue
				}
				switch t[len(t)-3] {
				case '.':
					dot++
				case ',':
					comma++
				}
			}
		}
	}
	switch {
	case comma > dot:
		return ','
	case dot > comma:
		return '.'
	}
	return 0
}

func (x *run) allText() string {
	var b strings.Builder
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			b.WriteString(r.text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
