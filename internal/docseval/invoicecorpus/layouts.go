package invoicecorpus

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// customer is the corpus tenant as printed in address blocks.
func customer() []string {
	return []string{"Contoso Ltd", "500 Market Street", "Springfield, IL 62704"}
}

// page is a FixedPage under construction.
type page struct{ testdocs.FixedPage }

func (p *page) text(x, y float64, s string, size float64, bold bool, align testdocs.Align) {
	p.Items = append(p.Items, testdocs.Item{X: x, Y: y, Text: s, Size: size, Bold: bold, Align: align})
}

func (p *page) left(x, y float64, s string, size float64) {
	p.text(x, y, s, size, false, testdocs.Left)
}
func (p *page) right(x, y float64, s string, size float64) {
	p.text(x, y, s, size, false, testdocs.Right)
}

func (p *page) rule(x1, y1, x2, y2 float64) {
	p.Rules = append(p.Rules, testdocs.Rule{X1: x1, Y1: y1, X2: x2, Y2: y2})
}

// layoutPages prints the invoice in the named layout; extra items
// (notes, injections) go on the last page.
func layoutPages(layout string, inv *invoice) []testdocs.FixedPage {
	var pages []*page
	switch layout {
	case "minimal":
		pages = minimal(inv)
	case "northwind":
		pages = northwind(inv)
	case "globex":
		pages = globex(inv)
	case "multipage":
		pages = standard(inv, false, 16)
	case "us_grid":
		pages = standard(inv, true, 16)
	default:
		pages = standard(inv, false, 16)
	}
	last := pages[len(pages)-1]
	last.Items = append(last.Items, inv.extra...)
	out := make([]testdocs.FixedPage, len(pages))
	for i, p := range pages {
		out[i] = p.FixedPage
	}
	return out
}

// standard is the common layout: letterhead, meta (labels left of values,
// or a grid of labels above values), bill-to, line-item table, totals,
// bank details and footer; long tables run over pages of perPage rows with
// the header repeated and the totals on the last page.
func standard(inv *invoice, grid bool, perPage int) []*page {
	w := inv.loc.w
	n := max(1, (len(inv.items)+perPage-1)/perPage)
	var pages []*page
	for k := 0; k < n; k++ {
		p := &page{}
		y := 250.0
		if k == 0 {
			letterhead(p, inv)
			if grid {
				metaGrid(p, inv)
			} else {
				metaLeft(p, inv)
			}
		} else {
			p.left(72, 50, inv.name, 10)
			p.left(300, 50, fmt.Sprintf("%s %s (%s)", w.number, inv.number, w.cont), 9)
			y = 100
		}
		if n > 1 {
			p.text(306, 770, fmt.Sprintf(w.pageOf, k+1, n), 8, false, testdocs.Center)
		}
		rows := inv.items[k*perPage : min(len(inv.items), (k+1)*perPage)]
		y = table(p, inv, rows, y)
		if k == n-1 {
			y = totals(p, inv, y+24, w.subtotal, w.tax, w.shipping, w.total)
			payment(p, inv, max(y+30, 560))
			footer(p, inv)
		}
		pages = append(pages, p)
	}
	return pages
}

func letterhead(p *page, inv *invoice) {
	p.text(72, 60, inv.name, 16, true, testdocs.Left)
	if inv.v.Address != "" {
		p.left(72, 75, inv.v.Address, 9)
	}
	p.text(540, 60, inv.loc.w.title, 20, true, testdocs.Right)
}

func (inv *invoice) dueText() string { return fmtDate(inv.due, inv.date) }

func metaLeft(p *page, inv *invoice) {
	w := inv.loc.w
	rows := [][2]string{{w.number, inv.number}, {w.date, fmtDate(inv.issue, inv.date)}, {w.due, inv.dueText()}}
	if inv.po != "" {
		rows = append(rows, [2]string{w.po, inv.po})
	}
	for i, r := range rows {
		y := 110 + float64(i)*15
		p.text(340, y, r[0], 10, true, testdocs.Left)
		p.right(540, y, r[1], 10)
	}
	billTo(p, inv, 110)
}

func metaGrid(p *page, inv *invoice) {
	labels := []string{"Invoice Number", "Invoice Date", "Due Date"}
	values := []string{inv.number, fmtDate(inv.issue, inv.date), inv.dueText()}
	if inv.po != "" {
		labels, values = append(labels, "PO Number"), append(values, inv.po)
	}
	for i := range labels {
		x := 72 + float64(i)*125
		p.text(x, 105, labels[i], 8, true, testdocs.Left)
		p.left(x, 119, values[i], 10)
	}
	billTo(p, inv, 160)
}

func billTo(p *page, inv *invoice, y float64) {
	p.text(72, y, inv.loc.w.billTo, 10, true, testdocs.Left)
	for i, l := range customer() {
		p.left(72, y+14*float64(i+1), l, 10)
	}
}

// table prints the header and rows from y; it returns the last row's y.
func table(p *page, inv *invoice, rows []item, y float64) float64 {
	w := inv.loc.w
	qtyX, priceX, amtX := 360.0, 460.0, 540.0
	if inv.unitCol {
		qtyX = 320
	}
	p.text(72, y, w.desc, 10, true, testdocs.Left)
	p.text(qtyX, y, w.qty, 10, true, testdocs.Right)
	if inv.unitCol {
		p.text(335, y, w.unit, 10, true, testdocs.Left)
	}
	p.text(priceX, y, w.price, 10, true, testdocs.Right)
	p.text(amtX, y, w.amount, 10, true, testdocs.Right)
	p.rule(72, y+4, 540, y+4)
	for i, it := range rows {
		ry := y + 20 + float64(i)*16
		p.left(72, ry, it.desc, 10)
		p.right(qtyX, ry, qtyText(it.qty, inv.amt), 10)
		if inv.unitCol {
			p.left(335, ry, it.unit, 10)
		}
		p.right(priceX, ry, money(it.price, inv.amt, false), 10)
		p.right(amtX, ry, money(it.total, inv.amt, false), 10)
	}
	return y + 4 + float64(len(rows))*16
}

// qtyText prints a quantity with the locale's decimal separator.
func qtyText(q decimal.Decimal, st amountStyle) string {
	s := q.String()
	switch st {
	case styleDE, styleNL, styleFRNBSP, styleFRThin:
		return replaceDot(s)
	}
	return s
}

func replaceDot(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '.' {
			b[i] = ','
		}
	}
	return string(b)
}

// totals prints the totals block; it returns the y after it.
func totals(p *page, inv *invoice, y float64, sub, tax, ship, total string) float64 {
	type line struct {
		label string
		v     decimal.Decimal
		bold  bool
	}
	var ls []line
	if inv.printSubtotal {
		ls = append(ls, line{sub, inv.subtotal, false})
	}
	if inv.printTax {
		if inv.reverseCharge {
			tax = "BTW verlegd 0%"
		}
		ls = append(ls, line{tax, inv.tax, false})
	}
	if !inv.shipping.IsZero() {
		ls = append(ls, line{ship, inv.shipping, false})
	}
	ls = append(ls, line{total, inv.total, true})
	for i, l := range ls {
		ly := y + float64(i)*15
		p.text(360, ly, l.label, 10, l.bold, testdocs.Left)
		p.text(540, ly, money(l.v, inv.amt, true), 10, l.bold, testdocs.Right)
		if l.bold && inv.faintTotal {
			it := &p.Items[len(p.Items)-1]
			it.Gray = 0.75
		}
	}
	return y + float64(len(ls))*15
}

// payment prints the bank details the locale uses.
func payment(p *page, inv *invoice, y float64) {
	w, b := inv.loc.w, inv.bank
	p.text(72, y, w.payment, 10, true, testdocs.Left)
	var ls []string
	if b.routing != "" {
		ls = append(ls, w.routing+" "+b.routing)
	}
	if b.sortCode != "" {
		ls = append(ls, w.sortCode+" "+b.sortCode)
	}
	if b.account != "" {
		ls = append(ls, w.account+" "+b.account)
	}
	if b.iban != "" {
		iban := b.iban
		if b.ibanGrouped {
			iban = groupIBAN(iban)
		}
		ls = append(ls, w.iban+" "+iban)
	}
	if b.bic != "" {
		ls = append(ls, w.bic+" "+b.bic)
	}
	for i, l := range ls {
		p.left(72, y+14*float64(i+1), l, 10)
	}
}

func footer(p *page, inv *invoice) {
	if inv.taxID != "" {
		p.left(72, 765, inv.loc.w.taxID+" "+printedTaxID(inv), 9)
	}
	p.left(72, 777, inv.loc.w.thanks, 9)
}

// printedTaxID spaces UK VAT numbers the way they are usually printed.
func printedTaxID(inv *invoice) string {
	t := inv.taxID
	if len(t) == 11 && t[:2] == "GB" && inv.number[len(inv.number)-1]%2 == 0 {
		return "GB " + t[2:5] + " " + t[5:9] + " " + t[9:]
	}
	return t
}

// minimal is a bare invoice: no table, labels above values, one total.
func minimal(inv *invoice) []*page {
	p := &page{}
	p.text(72, 72, inv.name, 14, true, testdocs.Left)
	p.text(72, 100, "Invoice "+inv.number, 12, true, testdocs.Left)
	p.text(72, 140, "Date", 8, true, testdocs.Left)
	p.left(72, 153, fmtDate(inv.issue, inv.date), 10)
	p.text(220, 140, "Due", 8, true, testdocs.Left)
	p.left(220, 153, inv.dueText(), 10)
	p.left(72, 200, "For services rendered as agreed.", 10)
	p.text(420, 240, "Total", 9, true, testdocs.Left)
	p.text(540, 258, money(inv.total, inv.amt, true), 14, true, testdocs.Right)
	payment(p, inv, 320)
	footer(p, inv)
	return []*page{p}
}

// northwind is Northwind Traders' own "statement of charges" wording,
// which only its template reads fully.
func northwind(inv *invoice) []*page {
	p := &page{}
	p.text(72, 60, inv.name, 16, true, testdocs.Left)
	p.left(72, 75, inv.v.Address, 9)
	p.text(540, 60, "Statement of charges", 14, true, testdocs.Right)
	p.left(340, 110, "Ref. "+inv.number, 10)
	p.left(340, 125, "Issued "+fmtDate(inv.issue, dateUSDash), 10)
	p.left(340, 140, "Settle by "+fmtDate(inv.due, dateUSDash), 10)
	if inv.po != "" {
		p.left(340, 155, "Your PO "+inv.po, 10)
	}
	billTo(p, inv, 110)
	saved := inv.loc.w
	inv.loc.w.desc, inv.loc.w.qty, inv.loc.w.price, inv.loc.w.amount = "Item", "Qty", "Rate", "Amount"
	y := table(p, inv, inv.items, 250)
	inv.loc.w = saved
	y = totals(p, inv, y+24, "Goods", "Sales tax", "Carriage", "Please remit")
	p.left(72, max(y+30, 560), fmt.Sprintf("Payment: ABA %s, Acct %s", inv.bank.routing, inv.bank.account), 10)
	p.left(72, 765, "EIN "+inv.taxID, 9)
	return []*page{p}
}

// globex is Globex GmbH's "Beleg" wording.
func globex(inv *invoice) []*page {
	p := &page{}
	letterhead(p, inv)
	p.left(340, 110, "Beleg-Nr. "+inv.number, 10)
	p.left(340, 125, "Belegdatum "+fmtDate(inv.issue, dateDEDots), 10)
	p.left(340, 140, "Zahlbar bis "+fmtDate(inv.due, dateDEDots), 10)
	billTo(p, inv, 110)
	p.text(60, 250, "Pos", 10, true, testdocs.Left)
	for i := range inv.items {
		p.left(60, 270+float64(i)*16, fmt.Sprint(i+1), 10)
	}
	saved := inv.loc.w
	inv.loc.w.desc = "Bezeichnung"
	y := table(p, inv, inv.items, 250)
	inv.loc.w = saved
	// The Pos column sits left of the description: shift descriptions.
	for i := range p.Items {
		if it := &p.Items[i]; it.X == 72 && it.Y >= 250 && it.Y < y+2 {
			it.X = 90
		}
	}
	inv.printSubtotal = true
	y = totals(p, inv, y+24, "Warenwert", "MwSt 19 %", "Fracht", "Endsumme")
	p.left(72, max(y+30, 560), "IBAN "+groupIBAN(inv.bank.iban), 10)
	p.left(330, max(y+30, 560), "BIC "+inv.bank.bic, 10)
	p.left(72, 765, "USt-IdNr. "+inv.taxID, 9)
	return []*page{p}
}

// coverSheet is a fax cover page.
func coverSheet(inv *invoice, pages int) testdocs.FixedPage {
	p := &page{}
	p.text(72, 80, "FAX", 28, true, testdocs.Left)
	p.left(72, 140, "To: "+customer()[0]+", Accounts Payable", 11)
	p.left(72, 160, "From: "+inv.name, 11)
	p.left(72, 180, "Date: "+fmtDate(inv.issue.AddDate(0, 0, 1), inv.date), 11)
	p.left(72, 200, fmt.Sprintf("Pages: %d", pages), 11)
	p.left(72, 220, "Re: Invoice "+inv.number, 11)
	return p.FixedPage
}
