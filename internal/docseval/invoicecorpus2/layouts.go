package invoicecorpus2

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	ic "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
)

// Layouts lists the layouts a case may be drawn in.
func Layouts() []string {
	return []string{"sidebyside", "tight", "centred", "metatable", "twocol", "footer", "din", "letter", "caption"}
}

// pickLayout chooses the layout; some invoices run to several pages.
func (w *writer) pickLayout(in *inv, trap ic.Trap) string {
	ls := Layouts()
	l := ls[w.rng.IntN(len(ls))]
	if in.v.lang == "de" && w.chance(0.4) {
		l = "din"
	}
	if trap == ic.TrapFaintAmount && l == "caption" {
		l = "sidebyside" // the caption repeats the total in black
	}
	if trap != ic.TrapFaintAmount && trap != ic.TrapTotalMismatch && w.chance(0.15) {
		big := trap == ic.TrapHighValue
		maxPrice := 30
		if big {
			maxPrice = 1500
		}
		w.fillLines(in, 22+w.rng.IntN(16), maxPrice, big)
	}
	return l
}

// footerLayout: layouts that print the vendor's address, bank and tax id
// in a legal footer instead of the body.
func footerLayout(l string) bool { return l == "footer" || l == "din" }

// draw prints the invoice in a layout.
func (w *writer) draw(layout string, in *inv) (*document, error) {
	d := &document{w: 595, h: 842, face: []face{helvetica, helvetica, times, courier}[w.rng.IntN(4)]}
	if in.v.country == "US" {
		d.w, d.h = 612, 792
	}
	if !winAnsi(in.name) || w.chance(0.1) {
		d.face = gosans
	}
	f := frame{w: d.w, h: d.h, l: 50, r: d.w - 50}
	perPage := 18
	chunks := [][]line{in.lines}
	if len(in.lines) > perPage {
		chunks = nil
		for k := 0; k < len(in.lines); k += perPage {
			chunks = append(chunks, in.lines[k:min(k+perPage, len(in.lines))])
		}
	}
	grid := w.chance(0.3)
	carry := w.chance(0.5)
	running := decimal.Zero
	for k, chunk := range chunks {
		p := d.page()
		y := 90.0
		if k == 0 {
			var err error
			if y, err = w.header(layout, p, in, f); err != nil {
				return nil, err
			}
		} else {
			p.put(f.l, 50, in.name, 9, false, alignLeft)
			p.put(f.r, 50, fmt.Sprintf("%s %s", in.l.number, in.number), 9, false, alignRight)
			if carry {
				p.put(f.l, 75, in.wd.broughtFwd, 9, false, alignLeft)
				p.put(f.r, 75, in.num(running), 9, false, alignRight)
				y = 100
			}
		}
		if len(chunks) > 1 {
			p.put(d.w/2, d.h-28, fmt.Sprintf(in.wd.pageOf, k+1, len(chunks)), 7.5, false, alignCentre)
		}
		y = table(p, in, f, chunk, k*perPage, y, grid)
		for _, ln := range chunk {
			running = running.Add(ln.amount)
		}
		if k < len(chunks)-1 {
			if carry {
				p.put(f.r-200, y+6, in.wd.carried, 9, false, alignLeft)
				p.put(f.r, y+6, in.num(running), 9, false, alignRight)
			}
			continue
		}
		w.closing(layout, p, in, f, y)
	}
	last := d.pages[len(d.pages)-1]
	last.texts = append(last.texts, in.notes...)
	placeNotes(d)
	return d, nil
}

// closing prints totals, terms, bank details and the tax id (or the
// legal footer) on the last page.
func (w *writer) closing(layout string, p *sheet, in *inv, f frame, y float64) {
	lx := f.r - 210
	if w.chance(0.3) {
		lx = f.l + (f.r-f.l)/2
	}
	y = totals(p, in, lx, f.r, y+16)
	p.put(f.l, y+14, in.terms, 8.5, false, alignLeft)
	if footerLayout(layout) {
		legalFooter(p, in, f)
		return
	}
	by := max(y+40, f.h-190)
	by = bankBlock(p, in, f.l, by)
	if t := in.taxLine(); t != "" {
		p.put(f.l, f.h-48, t, 8, false, alignLeft)
	}
	if layout == "letter" {
		p.put(f.l, by+20, "Accounts Department", 9, false, alignLeft)
	}
}

// legalFooter prints three columns at the foot of the page: who, bank,
// tax id (its label above it).
func legalFooter(p *sheet, in *inv, f frame) {
	y := f.h - 78
	p.line(f.l, y-10, f.r, y-10)
	cw := (f.r - f.l) / 3
	col1 := append([]string{in.name}, in.v.address...)
	var col2 []string
	if in.printBank {
		col2 = append([]string{in.l.bank}, in.bankLines(true)...)
	}
	var col3 []string
	if in.taxID != "" {
		col3 = []string{in.l.taxID, in.taxID}
	}
	if in.v.lang == "de" || in.v.lang == "de_ch" {
		col3 = append(col3, "Geschäftsführer: A. Brandt")
	}
	for k, col := range [][]string{col1, col2, col3} {
		for i, s := range col {
			p.put(f.l+float64(k)*cw, y+float64(i)*9, s, 7, false, alignLeft)
		}
	}
}

// header prints a layout's first-page head and returns where the table
// starts.
func (w *writer) header(layout string, p *sheet, in *inv, f frame) (float64, error) {
	switch layout {
	case "sidebyside":
		return w.sideBySide(p, in, f), nil
	case "tight":
		return w.tight(p, in, f), nil
	case "centred":
		return w.centred(p, in, f), nil
	case "metatable":
		return w.metaTable(p, in, f), nil
	case "twocol":
		return w.twoCol(p, in, f), nil
	case "footer":
		return w.footerHead(p, in, f), nil
	case "din":
		return w.din(p, in, f), nil
	case "letter":
		return w.letter(p, in, f), nil
	case "caption":
		return w.caption(p, in, f), nil
	}
	return 0, fmt.Errorf("unknown layout %q", layout)
}

// metaRight prints label/value pairs, labels at lx and values
// right-aligned at vx.
func metaRight(p *sheet, in *inv, lx, vx, y float64, withColon bool) float64 {
	for _, m := range in.metaPairs() {
		p.put(lx, y, colon(m.label, withColon), 9.5, true, alignLeft)
		p.put(vx, y, m.value, 9.5, false, alignRight)
		y += 14
	}
	return y
}

// sideBySide: the name with its address set beside it, level with it.
func (w *writer) sideBySide(p *sheet, in *inv, f frame) float64 {
	size := 15.0
	if len([]rune(in.name)) > 28 {
		size = 12
	}
	p.put(f.l, 60, in.name, size, true, alignLeft)
	ax := f.l + measure().width(in.name, size, true) + 14
	lines := append([]string(nil), in.v.address...)
	lines = append(lines, "Tel. +"+fmt.Sprint(20+len(in.name))+" 555 0100")
	for i, l := range lines {
		p.put(ax, 51+float64(i)*9, l, 7.5, false, alignLeft)
	}
	p.put(f.r, 112, in.l.title, 16, true, alignRight)
	y := metaRight(p, in, f.r-230, f.r, 135, w.chance(0.5))
	by := billTo(p, in, f.l, 112, in.l.billTo, 9.5)
	return max(y, by) + 24
}

// tight: a large name with the address just under it, tighter than a
// line apart.
func (w *writer) tight(p *sheet, in *inv, f frame) float64 {
	p.put(f.l, 62, in.name, 20, true, alignLeft)
	gap := 6.5 + w.rng.Float64()*2
	p.put(f.l, 62+gap, strings.Join(in.v.address, ", "), 7.5, false, alignLeft)
	p.put(f.l, 62+gap+9, "accounts@"+strings.ToLower(strings.Fields(asciiWord(in.name))[0])+".example", 7.5, false, alignLeft)
	p.put(f.r, 62, in.l.title, 14, true, alignRight)
	y := 120.0
	withColon := w.chance(0.5)
	for _, m := range in.metaPairs() {
		p.put(f.l, y, colon(m.label, withColon), 9.5, false, alignLeft)
		p.put(f.l+120, y, m.value, 9.5, true, alignLeft)
		y += 14
	}
	by := billTo(p, in, f.w/2+20, 120, in.l.billTo, 9.5)
	return max(y, by) + 24
}

// asciiWord keeps letters a mail domain could hold.
func asciiWord(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r == ' ' {
			b.WriteRune(r)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "billing"
	}
	return b.String()
}

// centred: name and address centred over a rule, "label: value" pairs in
// two columns under the title.
func (w *writer) centred(p *sheet, in *inv, f frame) float64 {
	mid := f.w / 2
	p.put(mid, 58, in.name, 17, true, alignCentre)
	p.put(mid, 72, strings.Join(in.v.address, " · "), 8.5, false, alignCentre)
	p.line(f.l, 80, f.r, 80)
	p.put(mid, 106, in.l.title, 13, true, alignCentre)
	ps := in.metaPairs()
	left, right := ps[:min(3, len(ps))], ps[min(3, len(ps)):]
	y := 135.0
	for i, m := range left {
		p.put(f.l, y+float64(i)*14, colon(m.label, true)+" "+m.value, 9.5, false, alignLeft)
	}
	for i, m := range right {
		p.put(mid+30, y+float64(i)*14, colon(m.label, true)+" "+m.value, 9.5, false, alignLeft)
	}
	by := billTo(p, in, f.l, y+float64(len(left))*14+14, in.l.billTo, 9.5)
	return by + 20
}

// metaTable: the letterhead right-aligned, the fields in a ruled table
// with small labels above centred values.
func (w *writer) metaTable(p *sheet, in *inv, f frame) float64 {
	p.put(f.r, 56, in.name, 14, true, alignRight)
	for i, l := range in.v.address {
		p.put(f.r, 68+float64(i)*9, l, 8, false, alignRight)
	}
	p.put(f.l, 62, in.l.title, 24, true, alignLeft)
	ps := in.metaPairs()
	cw := (f.r - f.l) / float64(len(ps))
	p.line(f.l, 116, f.r, 116)
	p.line(f.l, 132, f.r, 132)
	p.line(f.l, 150, f.r, 150)
	for i, m := range ps {
		cx := f.l + cw*(float64(i)+0.5)
		p.put(cx, 127, m.label, 7.5, true, alignCentre)
		p.put(cx, 144, m.value, 9.5, false, alignCentre)
		if i > 0 {
			p.line(f.l+cw*float64(i), 116, f.l+cw*float64(i), 150)
		}
	}
	by := billTo(p, in, f.l, 178, in.l.billTo, 9.5)
	return by + 20
}

// twoCol: vendor and customer blocks side by side under a centred title,
// the fields in one row.
func (w *writer) twoCol(p *sheet, in *inv, f frame) float64 {
	p.put(f.w/2, 50, in.l.title, 18, true, alignCentre)
	p.put(f.l, 85, in.name, 11, true, alignLeft)
	y := 85.0
	for _, l := range in.v.address {
		y += 12
		p.put(f.l, y, l, 9, false, alignLeft)
	}
	if t := in.taxLine(); t != "" {
		y += 12
		p.put(f.l, y, t, 9, false, alignLeft)
	}
	by := billTo(p, in, f.w/2+10, 85, in.l.billTo, 9.5)
	row := max(y, by) + 30
	x := f.l
	for _, m := range in.metaPairs() {
		lw := measure().width(m.label, 8.5, true)
		vw := measure().width(m.value, 8.5, false)
		if x > f.l && x+lw+5+vw > f.r {
			x, row = f.l, row+14 // the row is full: wrap
		}
		p.put(x, row, m.label, 8.5, true, alignLeft)
		p.put(x+lw+5, row, m.value, 8.5, false, alignLeft)
		x += lw + 5 + vw + 22
	}
	return row + 30
}

// footerHead: a big name, the fields right, the address only in the
// legal footer.
func (w *writer) footerHead(p *sheet, in *inv, f frame) float64 {
	size := 22.0
	if len([]rune(in.name)) > 24 {
		size = 15
	}
	p.put(f.l, 62, in.name, size, true, alignLeft)
	p.put(f.r, 62, in.l.title, 12, true, alignRight)
	y := metaRight(p, in, f.r-220, f.r, 95, true)
	by := billTo(p, in, f.l, 110, in.l.billTo, 9.5)
	return max(y, by) + 24
}

// din: a DIN 5008 letter: the sender line over the window address, an
// information block beside it, a subject line.
func (w *writer) din(p *sheet, in *inv, f frame) float64 {
	p.put(f.r, 55, in.name, 15, true, alignRight)
	for i, l := range in.v.address {
		p.put(f.r, 68+float64(i)*9, l, 8, false, alignRight)
	}
	p.put(f.l, 133, strings.Join(append([]string{in.name}, in.v.address...), " · "), 6.5, false, alignLeft)
	p.line(f.l, 136, f.l+240, 136)
	billTo(p, in, f.l, 152, "", 10)
	y := 150.0
	for _, m := range in.metaPairs() {
		p.put(f.w-220, y, m.label, 8.5, false, alignLeft)
		p.put(f.w-130, y, m.value, 8.5, false, alignLeft)
		y += 12
	}
	p.put(f.l, 262, in.l.title+" "+in.number, 11, true, alignLeft)
	ly := 286.0
	for _, l := range in.wd.letter {
		p.put(f.l, ly, l, 9.5, false, alignLeft)
		ly += 13
	}
	return ly + 14
}

// letter: a memo with From:, To: and the fields as lines.
func (w *writer) letter(p *sheet, in *inv, f frame) float64 {
	p.put(f.l, 70, "From:", 10, true, alignLeft)
	p.put(f.l+60, 70, in.name, 10, false, alignLeft)
	for i, l := range in.v.address {
		p.put(f.l+60, 83+float64(i)*12, l, 9, false, alignLeft)
	}
	p.put(f.l, 125, "To:", 10, true, alignLeft)
	billTo(p, in, f.l+60, 125, "", 10)
	y := 200.0
	for _, m := range in.metaPairs() {
		p.put(f.l, y, colon(m.label, true), 10, true, alignLeft)
		p.put(f.l+130, y, m.value, 10, false, alignLeft)
		y += 14
	}
	p.line(f.l, y, f.r, y)
	return y + 22
}

// caption: small capital captions above values, a large title, the
// company small in the corner.
func (w *writer) caption(p *sheet, in *inv, f frame) float64 {
	p.put(f.l, 40, in.name, 10.5, true, alignLeft)
	p.put(f.l, 52, strings.Join(in.v.address, ", "), 7.5, false, alignLeft)
	p.put(f.l, 95, strings.ToUpper(in.l.title), 30, true, alignLeft)
	ps := in.metaPairs()
	cw := (f.r - f.l) / float64(len(ps))
	for i, m := range ps {
		x := f.l + cw*float64(i)
		p.put(x, 128, strings.ToUpper(m.label), 6.5, true, alignLeft)
		p.put(x, 141, m.value, 9.5, false, alignLeft)
	}
	billTo(p, in, f.l, 175, strings.ToUpper(in.l.billTo), 9.5)
	p.put(f.r, 175, strings.ToUpper(in.l.total), 6.5, true, alignRight)
	p.put(f.r, 196, in.amt(in.printedTot), 18, true, alignRight)
	return 260
}
