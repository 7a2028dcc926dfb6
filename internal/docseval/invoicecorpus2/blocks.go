package invoicecorpus2

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// frame is a page's size and margins.
type frame struct{ w, h, l, r float64 }

// customer is the tenant as suppliers print it, by where they write from.
func customer(country string) []string {
	if country == "US" {
		return []string{"Haverford & Lyle Partners LLP", "2200 Chestnut Street, Floor 9", "Philadelphia, PA 19103"}
	}
	return []string{"Haverford & Lyle Partners LLP", "18 Tanner Row", "York YO1 6JB", "United Kingdom"}
}

// customerVATLabel is how a language labels the customer's own VAT
// number in its address block.
func customerVATLabel(lang string) string {
	return map[string]string{"en_gb": "Customer VAT No.", "en_eu": "Your VAT no.", "de": "Ihre USt-IdNr.", "de_ch": "Ihre UID",
		"fr": "N° TVA client", "nl": "Uw btw-nummer", "es": "NIF cliente", "it": "P.IVA cliente"}[lang]
}

// pair is a label and its value.
type pair struct{ label, value string }

// metaPairs are the invoice's identifying fields in the order a writer
// lists them.
func (in *inv) metaPairs() []pair {
	ps := []pair{{in.l.number, in.number}, {in.l.date, in.fmtDate(in.issue)}}
	if in.printDue {
		ps = append(ps, pair{in.l.due, in.fmtDate(in.due)})
	}
	if in.customerNo != "" {
		ps = append(ps, pair{in.l.customerNo, in.customerNo})
	}
	if in.po != "" {
		ps = append(ps, pair{in.l.po, in.po})
	}
	return ps
}

// colon adds the colon some writers put after labels.
func colon(s string, with bool) string {
	if with && !strings.HasSuffix(s, ":") {
		return s + ":"
	}
	return s
}

// billTo prints the customer block; label "" prints none (a window
// envelope's address has no label).
func billTo(p *sheet, in *inv, x, y float64, label string, size float64) float64 {
	if label != "" {
		p.put(x, y, label, size-1, true, alignLeft)
		y += size + 3
	}
	for _, l := range customer(in.v.country) {
		p.put(x, y, l, size, false, alignLeft)
		y += size + 3
	}
	if in.customerVAT {
		p.put(x, y, customerVATLabel(in.v.lang)+" GB318664205", size-1, false, alignLeft)
		y += size + 3
	}
	return y
}

// col is one column of the line-item table.
type col struct {
	kind   string // desc, qty, unit, price, amount, pos, code, date, vat
	header string
	x      float64 // left edge for left-aligned columns, right edge otherwise
	right  bool
}

// columns lays out the table's columns between the margins.
func (in *inv) columns(f frame) []col {
	l, r := f.l, f.r
	var cs []col
	descX := l
	switch {
	case in.codeCol:
		cs = append(cs, col{kind: "code", header: map[bool]string{true: "Art.-Nr.", false: "Code"}[in.v.lang == "de"], x: l})
		descX = l + 72
	case in.dateCol:
		cs = append(cs, col{kind: "date", header: in.wd.day, x: l})
		descX = l + 78
	case in.l.pos != "" && strings.HasPrefix(in.v.lang, "de"):
		cs = append(cs, col{kind: "pos", header: in.l.pos, x: l})
		descX = l + 32
	}
	cs = append(cs, col{kind: "desc", header: in.l.desc, x: descX})
	qx := r - 215
	if in.unitCol {
		cs = append(cs, col{kind: "qty", header: in.l.qty, x: qx - 30, right: true}, col{kind: "unit", header: in.l.unit, x: qx - 22})
	} else {
		cs = append(cs, col{kind: "qty", header: in.l.qty, x: qx, right: true})
	}
	cs = append(cs, col{kind: "price", header: in.l.price, x: r - 110, right: true})
	if in.vatCol {
		cs = append(cs, col{kind: "vat", header: map[bool]string{true: "USt.", false: "VAT"}[in.v.lang == "de"], x: r - 82, right: true})
	}
	return append(cs, col{kind: "amount", header: in.l.amount, x: r, right: true})
}

// table prints the header and the lines from y; it returns the y under
// the last line.
func table(p *sheet, in *inv, f frame, lines []line, first int, y float64, grid bool) float64 {
	cs := in.columns(f)
	for _, c := range cs {
		p.put(c.x, y, c.header, 9, true, map[bool]align{true: alignRight, false: alignLeft}[c.right])
	}
	p.line(f.l, y+4, f.r, y+4)
	y += 18
	for k, ln := range lines {
		for _, c := range cs {
			if s := in.cell(c.kind, ln, first+k+1); s != "" {
				p.put(c.x, y, s, 9, false, map[bool]align{true: alignRight, false: alignLeft}[c.right])
			}
		}
		if ln.desc2 != "" {
			y += 11
			p.put(cs[descCol(cs)].x, y, ln.desc2, 8, false, alignLeft)
		}
		if grid {
			p.line(f.l, y+5, f.r, y+5)
		}
		y += 15
	}
	return y
}

func descCol(cs []col) int {
	for i, c := range cs {
		if c.kind == "desc" {
			return i
		}
	}
	return 0
}

func (in *inv) cell(kind string, ln line, n int) string {
	switch kind {
	case "desc":
		return ln.desc
	case "qty":
		return in.qty(ln.qty)
	case "unit":
		if in.unitCol {
			return ln.unit
		}
	case "price":
		return in.num(ln.price)
	case "amount":
		return in.num(ln.amount)
	case "pos":
		return fmt.Sprint(n)
	case "code":
		return ln.code
	case "date":
		return ln.date.Format("02.01.")
	case "vat":
		return in.ratePrinted + "%"
	}
	return ""
}

// totals prints the totals block, labels at lx (left-aligned) and values
// right-aligned at vx; it returns the y under it.
func totals(p *sheet, in *inv, lx, vx, y float64) float64 {
	type row struct {
		label string
		v     decimal.Decimal
		bold  bool
	}
	rows := []row{{in.l.subtotal, in.subtotal, false}, {in.l.tax, in.tax, false}}
	if !in.shipping.IsZero() {
		rows = append(rows, row{in.l.shipping, in.shipping, false})
	}
	rows = append(rows, row{in.l.total, in.printedTot, true})
	for _, r := range rows {
		p.put(lx, y, r.label, 9.5, r.bold, alignLeft)
		t := p.put(vx, y, in.amt(r.v), 9.5, r.bold, alignRight)
		if r.bold && in.faintTotal {
			t.gray = 0.72
		}
		y += 15
	}
	return y
}

// bankLines are the printed bank details, one per line.
func (in *inv) bankLines(withLabels bool) []string {
	b := in.bank
	lab := func(l, v string) string {
		if withLabels {
			return l + " " + v
		}
		return v
	}
	var out []string
	if b.routing != "" {
		out = append(out, lab(colon(in.l.routing, true), b.routing))
	}
	if b.sortCode != "" {
		out = append(out, lab(colon(in.l.sortCode, true), b.sortCode))
	}
	if b.account != "" {
		out = append(out, lab(colon(in.l.account, true), b.account))
	}
	if b.iban != "" {
		out = append(out, "IBAN "+spaced(b.iban))
	}
	if b.bic != "" {
		out = append(out, "BIC "+b.bic)
	}
	return out
}

// spaced groups an IBAN in fours.
func spaced(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// bankBlock prints the bank details under a heading.
func bankBlock(p *sheet, in *inv, x, y float64) float64 {
	if !in.printBank {
		return y
	}
	p.put(x, y, in.l.bank, 9, true, alignLeft)
	for _, l := range in.bankLines(true) {
		y += 12
		p.put(x, y, l, 9, false, alignLeft)
	}
	return y + 12
}

// taxLine is the vendor's tax id with its label.
func (in *inv) taxLine() string {
	if in.taxID == "" {
		return ""
	}
	return colon(in.l.taxID, in.v.lang != "de_ch") + " " + in.taxID
}
