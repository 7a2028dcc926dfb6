package invoice

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// hit is one label found on a row.
type hit struct {
	lab        *label
	start, end int  // folded byte range of the label
	value      int  // folded byte where its value may start
	customer   bool // the label is about the customer ("Customer VAT No")
}

// findHits returns the labels on a row, longest first where they overlap,
// in reading order.
func (lx *lexicon) findHits(r *row) []hit {
	var all []hit
	for _, l := range lx.labels {
		for _, m := range l.re.FindAllStringIndex(r.folded, -1) {
			cs, ce := r.cellOf(m[0])
			if m[1] > ce {
				continue // "Date      Due": two labels, not "date due"
			}
			if h, ok := lx.accept(r, l, m[0], m[1]); ok {
				after := ""
				if h.value < ce {
					after = r.folded[h.value:ce]
				}
				h.customer = lx.customerBefore(r.folded[cs:m[0]]) || lx.customerAfter(after)
				if h.customer && l.field != "" && h.value < ce {
					h.value = lx.skipCustomerWord(r.folded, h.value, ce)
				}
				all = append(all, h)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].lab.size != all[j].lab.size {
			return all[i].lab.size > all[j].lab.size
		}
		return !all[i].lab.weak && all[j].lab.weak
	})
	var kept []hit
	for _, h := range all {
		overlaps := false
		for _, k := range kept {
			if h.start < k.end && k.start < h.end {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, h)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	return kept
}

// accept applies the boundary rules to a raw match: a label starts at a
// word start; a label ending in a letter is not followed by a letter
// unless the print switches case there ("InvoiceRE-1050": OCR lost the
// space), nor, for identifiers, by a digit, '-' or '/' ("PO-7781" is a
// value, not a label). It then skips the ':', '.', '#' that follow.
func (lx *lexicon) accept(r *row, l *label, s, e int) (hit, bool) {
	f := r.folded
	if s > 0 {
		prev, _ := utf8.DecodeLastRuneInString(f[:s])
		if unicode.IsLetter(prev) || unicode.IsDigit(prev) {
			return hit{}, false
		}
	}
	if e < len(f) && unicode.IsLetter(l.last) {
		next, _ := utf8.DecodeRuneInString(f[e:])
		if unicode.IsLetter(next) && !caseBreak(r.text, r.fmap[e]) && !gluedValue(l.kind, f[e:]) {
			return hit{}, false
		}
		if (next == '-' || next == '/' || unicode.IsDigit(next)) && l.kind != kindAmount && l.kind != kindDate {
			return hit{}, false
		}
	}
	v, colon := e, false
	for v < len(f) && strings.ContainsRune(" :.#", rune(f[v])) {
		colon = colon || f[v] == ':'
		v++
	}
	if l.colon && !colon {
		return hit{}, false
	}
	return hit{lab: l, start: s, end: e, value: v}, true
}

// gluedValue: text after a bank label that begins like its value, so
// "IBANDE89 3704..." and "BICCOBADEFFXXX" are a label and a value that
// OCR ran together (all capitals: no case change to see it by).
func gluedValue(kind, f string) bool {
	switch kind {
	case kindIBAN:
		return len(f) >= 4 && f[0] >= 'a' && f[0] <= 'z' && f[1] >= 'a' && f[1] <= 'z' && checkDigitsLike(strings.ToUpper(f[2:4]))
	case kindBIC:
		w, _, _ := strings.Cut(f, " ")
		return (len(w) == 8 || len(w) == 11) && isUpperAlnum(strings.ToUpper(w))
	}
	return false
}

// caseBreak: in the original text, a lower-case letter is followed by a
// capital at byte off.
func caseBreak(text string, off int) bool {
	if off <= 0 || off >= len(text) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(text[:off])
	next, _ := utf8.DecodeRuneInString(text[off:])
	return unicode.IsLower(prev) && unicode.IsUpper(next)
}

// customerBefore reports whether the text before a label in its cell
// ends with a customer word ("Customer", "Your", "Ihre").
func (lx *lexicon) customerBefore(before string) bool {
	before = strings.TrimRight(before, " :.-")
	for _, p := range lx.customerPrefixes {
		if strings.HasSuffix(before, p) {
			rest := before[:len(before)-len(p)]
			if r, _ := utf8.DecodeLastRuneInString(rest); rest == "" || !unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// customerAfter reports whether the text after a label in its cell
// starts with a customer word ("N° TVA client", "NIF cliente").
func (lx *lexicon) customerAfter(after string) bool {
	after = strings.TrimLeft(after, " :.-")
	for _, w := range lx.customerSuffixes {
		if strings.HasPrefix(after, w) {
			rest := after[len(w):]
			if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// skipCustomerWord moves a customer label's value past the customer word
// that follows it.
func (lx *lexicon) skipCustomerWord(f string, v, end int) int {
	for _, w := range lx.customerSuffixes {
		if strings.HasPrefix(f[v:end], w) {
			v += len(w)
			for v < end && strings.ContainsRune(" :.", rune(f[v])) {
				v++
			}
			return v
		}
	}
	return v
}

// isCarryRow: a row whose first cell carries a running total between
// pages ("Carried forward", "Übertrag", "Transport"): not an item, and no
// label's value.
func (x *run) isCarryRow(r *row) bool {
	f := strings.Trim(textnorm.Fold(joinWords(cells(r.words, 1.0)[0])), " :.-")
	for _, c := range x.lx.carryForward {
		if f == c || strings.HasPrefix(f, c+" ") && strings.IndexFunc(f[len(c):], unicode.IsLetter) < 0 {
			return true
		}
	}
	return false
}

// candidate is one reading of a field.
type candidate struct {
	value  string
	method string
	weak   bool
	words  []word
	issues []string
	amt    *amount
	rate   *decimal.Decimal // a tax label's printed rate in percent ("VAT 20%"), nil if none
	pos    int              // document order
	base   float64          // reliability when not the method's usual one; 0 = methodBase
	// confirmed: the invoice's arithmetic ties this amount to the others.
	confirmed bool
}

// labelCandidates reads every label's value on a page: on the same line
// after the label, else in the rows just below it (labels above values).
func (x *run) labelCandidates(pg *page, pos *int) {
	for ri, r := range pg.rows {
		if r.inTable || x.isCarryRow(r) {
			continue
		}
		hits := x.hits[r]
		for hi, h := range hits {
			*pos++
			if h.lab.field == "" || h.customer || x.cover[pg.number] && !coverField(h.lab.field) {
				continue
			}
			end := len(r.folded)
			if hi+1 < len(hits) {
				end = hits[hi+1].start
			}
			region := r.slice(r.fmap[h.value], r.fmap[end])
			var p parsed
			var ok bool
			switch {
			case len(region) > 0 && h.lab.kind == kindTaxID && !h.lab.weak && x.farCell(r, h, region):
				// A tax id's label at the top of a footer column, beside
				// other columns: its value is the one under it, not the
				// next column's text.
				if p, ok = x.below(pg, ri, hits, hi); ok && alignedUnder(r, h, p.words) {
					break
				}
				p, ok = x.parseValue(h.lab.kind, region)
			case len(region) > 0:
				p, ok = x.parseValue(h.lab.kind, region)
			case !h.lab.weak:
				p, ok = x.below(pg, ri, hits, hi)
			}
			if ok && h.lab.weak && h.lab.kind == kindAmount && !moneyShaped(p.amt) {
				ok = false // "Net 30" is payment terms, not a net amount
			}
			if h.lab.field == result.FieldTax && len(region) > 0 {
				if id, isID := x.taxIDShaped(region); isID {
					x.add(result.FieldVendorTaxID, candidate{value: id.value, method: result.MethodLabel, words: id.words, issues: id.issues, pos: *pos})
					continue // "MWST CHE-114.927.538": a tax id, not a tax amount
				}
			}
			switch {
			case ok:
				c := candidate{value: p.value, method: result.MethodLabel, weak: h.lab.weak,
					words: p.words, issues: p.issues, amt: p.amt, pos: *pos}
				if h.lab.field == result.FieldTax {
					c.rate = taxRate(joinWords(r.slice(r.fmap[h.start], r.fmap[end])))
				}
				x.add(h.lab.field, c)
			case bankField(h.lab.field) && !h.lab.weak:
				if _, seen := x.unread[h.lab.field]; !seen {
					x.unread[h.lab.field] = pg.number
				}
			}
		}
	}
}

// farCell: the region after a label starts in another cell, more than
// four text heights away.
func (x *run) farCell(r *row, h hit, region []word) bool {
	lw := r.slice(r.fmap[h.start], r.fmap[h.end])
	if len(lw) == 0 {
		return false
	}
	last := lw[len(lw)-1]
	return region[0].box.XMin-last.box.XMax > 4*max(last.height(), region[0].height())
}

// alignedUnder: the value's first word starts under the label's start.
func alignedUnder(r *row, h hit, ws []word) bool {
	lw := r.slice(r.fmap[h.start], r.fmap[h.end])
	if len(lw) == 0 || len(ws) == 0 {
		return false
	}
	d := ws[0].box.XMin - lw[0].box.XMin
	return d > -5 && d < 30
}

// moneyShaped: an amount printed as money, with two decimals, grouping or
// a currency marker.
func moneyShaped(a *amount) bool {
	return a != nil && (a.hasSep && a.frac == 2 || a.currency != "")
}

// taxIDShaped reads a region that starts with a VAT number rather than an
// amount: a known tax id format, or a country code glued to a run of
// digits ("CHE-114.927.538", "ATU58229147").
func (x *run) taxIDShaped(ws []word) (parsed, bool) {
	t := strings.Trim(ws[0].text, ":,;()")
	if len(t) < 8 || !isUpperAlnum(strings.ToUpper(t[:2])) || t[0] < 'A' || t[0] > 'Z' || t[1] < 'A' || t[1] > 'Z' {
		return parsed{}, false
	}
	p, ok := x.parseTaxID(ws[:1])
	if !ok || countDigits(p.value) < 8 {
		return parsed{}, false
	}
	return p, true
}

// below looks for a label's value in the next rows, within the label's
// column: bounded by the neighbouring labels on its row.
func (x *run) below(pg *page, ri int, hits []hit, hi int) (parsed, bool) {
	r := pg.rows[ri]
	h := hits[hi]
	lb := boxOf(r.slice(r.fmap[h.start], r.fmap[h.end]))
	left, right := lb.XMin-15, lb.XMax+200
	if hi > 0 {
		p := hits[hi-1]
		left = max(left, boxOf(r.slice(r.fmap[p.start], r.fmap[p.end])).XMax+2)
	}
	if hi+1 < len(hits) {
		n := hits[hi+1]
		right = boxOf(r.slice(r.fmap[n.start], r.fmap[n.end])).XMin - 2
	}
	for k := ri + 1; k < len(pg.rows) && k <= ri+3; k++ {
		nr := pg.rows[k]
		if nr.box.YMin-r.box.YMax > 3*r.height || nr.inTable {
			break
		}
		var ws []word
		for _, w := range nr.words {
			if c := w.xCenter(); c >= left && c <= right {
				ws = append(ws, w)
			}
		}
		if len(ws) == 0 {
			continue
		}
		if x.labelInSpan(nr, left, right) {
			break // the next label of a stack, not a value
		}
		return x.parseValue(h.lab.kind, ws)
	}
	return parsed{}, false
}

func (x *run) labelInSpan(r *row, left, right float64) bool {
	for _, h := range x.hits[r] {
		if h.lab.field == "" {
			continue
		}
		ws := r.slice(r.fmap[h.start], r.fmap[h.end])
		if len(ws) == 0 {
			continue
		}
		b := boxOf(ws)
		if b.XMax >= left && b.XMin <= right {
			return true
		}
	}
	return false
}

// bankField: fields whose absence after a printed label must not pass
// silently (a changed account the extractor could not read).
func bankField(f string) bool {
	switch f {
	case result.FieldIBAN, result.FieldAccountNumber, result.FieldRoutingNumber, result.FieldSortCode:
		return true
	}
	return false
}

func (x *run) add(field string, c candidate) {
	x.cands[field] = append(x.cands[field], c)
}
