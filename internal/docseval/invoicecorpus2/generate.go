package invoicecorpus2

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	ic "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Split is a part of the corpus: its vendors and its seeds.
type Split string

const (
	// SplitTune is what the extractor is tuned against.
	SplitTune Split = "tune"
	// SplitHeldOut is only scored, never tuned against: other vendors,
	// other names, other seeds.
	SplitHeldOut Split = "heldout"
)

// Splits lists the splits.
func Splits() []Split { return []Split{SplitTune, SplitHeldOut} }

// ParseSplit reads a split's name.
func ParseSplit(s string) (Split, error) {
	for _, x := range Splits() {
		if string(x) == s {
			return x, nil
		}
	}
	return "", fmt.Errorf("unknown split %q: want tune or heldout", s)
}

// AsOf is the day the corpus is judged on.
func AsOf() time.Time { return time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC) }

// AutoApproveLimit is the tenant's limit, in every currency but the two
// that count in larger numbers.
const AutoApproveLimit = 15000

// Limits are the tenant's auto-approve limits by currency (the rest take
// AutoApproveLimit).
func Limits() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{"DKK": decimal.NewFromInt(110000), "SEK": decimal.NewFromInt(160000), "PLN": decimal.NewFromInt(60000)}
}

// VendorMaster is the tenant's vendor master, as its ERP exports it.
func VendorMaster() []byte { return masterJSON() }

// Case is one invoice of the corpus.
type Case struct {
	ID       string
	Split    Split
	Layout   string
	VendorID string // "" for a supplier the master does not have
	Mode     ic.Mode
	Scan     *testdocs.Scan
	Truth    result.Fields
	Traps    []ic.Trap
	// CopyOf names the case this one is a byte-for-byte copy of (the
	// same file sent again): not a duplicate invoice, the same one.
	CopyOf string
	// DuplicateOf names the earlier case whose invoice number a
	// duplicate trap reuses.
	DuplicateOf string
	doc         *document
}

// Scored is the case as invoicecorpus.Eval scores it.
func (c *Case) Scored() ic.Case {
	return ic.Case{ID: c.ID, Layout: c.Layout, VendorID: c.VendorID, Render: ic.Render{Mode: c.Mode, Scan: c.Scan},
		Truth: c.Truth, Traps: c.Traps}
}

// Corpus is one split's invoices in the order they are checked.
type Corpus struct {
	Split Split
	Seed  int64
	Cases []Case
}

// Scored returns every case as invoicecorpus.Eval scores it.
func (c *Corpus) Scored() []ic.Case {
	out := make([]ic.Case, len(c.Cases))
	for i := range c.Cases {
		out[i] = c.Cases[i].Scored()
	}
	return out
}

// Seeds are the seeds each split is drawn from by default.
func Seeds(s Split) []int64 {
	if s == SplitHeldOut {
		return []int64{9001, 9002}
	}
	return []int64{7001, 7002}
}

// Generate writes n invoices of a split from a seed.
func Generate(s Split, seed int64, n int) (*Corpus, error) {
	return generate(s, seed, n, map[string]bool{})
}

// generate draws a corpus; used holds the vendor+number pairs already
// issued, so no two invoices share a number by chance.
func generate(s Split, seed int64, n int, used map[string]bool) (*Corpus, error) {
	if _, err := ParseSplit(string(s)); err != nil {
		return nil, err
	}
	vs := tuneVendors()
	if s == SplitHeldOut {
		vs = heldOutVendors()
	}
	w := &writer{rng: rand.New(rand.NewPCG(uint64(seed), 0xc0ffee_0b5e55ed)), split: s, vendors: vs, lang: wordings(), used: used}
	c := &Corpus{Split: s, Seed: seed}
	for i, trap := range w.plan(n) {
		cs, err := w.invoiceCase(fmt.Sprintf("%s-%d-%03d", s, seed, i), trap, c.Cases)
		if err != nil {
			return nil, fmt.Errorf("invoice %d: %w", i, err)
		}
		c.Cases = append(c.Cases, cs)
	}
	return c, nil
}

// copyTrap marks, in a plan, an exact copy of an earlier invoice (a clean
// case: sending the same file again is not a second invoice).
const copyTrap ic.Trap = "copy"

// plan: of every 26 invoices 11 are clean, one is an exact copy of an
// earlier one, and 14 carry one trap each (visible injection twice).
func (w *writer) plan(n int) []ic.Trap {
	var out []ic.Trap
	for len(out) < n {
		block := make([]ic.Trap, 11, 26)
		block = append(block, ic.Traps()...)
		block = append(block, ic.TrapVisibleInjection)
		w.rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		if len(out) > 0 {
			block[w.rng.IntN(len(block))] = copyTrap
		}
		out = append(out, block...)
	}
	return out[:n]
}

// writer draws invoices.
type writer struct {
	rng     *rand.Rand
	split   Split
	vendors []vendor
	lang    map[string]wording
	used    map[string]bool
}

func (w *writer) pick(ss []string) string { return ss[w.rng.IntN(len(ss))] }

func (w *writer) chance(p float64) bool { return w.rng.Float64() < p }

// line is one line item.
type line struct {
	code, desc, desc2, unit string
	qty, price, amount      decimal.Decimal
	date                    time.Time
}

// inv is the invoice a layout prints.
type inv struct {
	v           vendor
	known       bool
	wd          wording
	l           labels
	money       moneyFmt
	date        dateFmt
	name        string // the vendor's name as printed
	number      string
	issue, due  time.Time
	printDue    bool
	po          string
	customerNo  string
	lines       []line
	subtotal    decimal.Decimal
	rate        decimal.Decimal
	ratePrinted string
	tax         decimal.Decimal
	shipping    decimal.Decimal
	total       decimal.Decimal
	printedTot  decimal.Decimal // the total as printed (a mismatch trap changes it)
	bank        vendor          // the bank details printed (a changed one for the bank trap)
	printBank   bool
	taxID       string // as printed, "" when not printed
	terms       string
	notes       []text // extra text on the last page (injections, hidden text)
	faintTotal  bool
	unitCol     bool
	vatCol      bool
	codeCol     bool
	dateCol     bool
	customerVAT bool // the customer's own VAT number is printed in its block
}

func (in *inv) fmtDate(t time.Time) string { return in.date(t, in.wd) }

func (in *inv) amt(d decimal.Decimal) string { return in.money.cur(d) }

func (in *inv) num(d decimal.Decimal) string { return in.money.num(d) }

// qty prints a quantity the way the language does.
func (in *inv) qty(q decimal.Decimal) string {
	s := q.String()
	if in.money.dec == "," {
		s = strings.ReplaceAll(s, ".", ",")
	}
	return s
}

// labels are the wordings one invoice uses, drawn once.
type labels struct {
	title, number, date, due, po, customerNo    string
	subtotal, tax, shipping, total              string
	taxID, account, routing, sortCode, bank     string
	billTo, desc, qty, unit, price, amount, pos string
}

func (w *writer) labels(wd wording, ratePrinted string) labels {
	p := func(ls []string) string {
		if len(ls) == 0 {
			return ""
		}
		l := w.pick(ls)
		if strings.Contains(l, "%s") {
			l = fmt.Sprintf(l, ratePrinted+"%")
		}
		return l
	}
	return labels{title: p(wd.titles), number: p(wd.number), date: p(wd.date), due: p(wd.due), po: p(wd.po),
		customerNo: p(wd.customerNo), subtotal: p(wd.subtotal), tax: p(wd.tax), shipping: p(wd.shipping), total: p(wd.total),
		taxID: p(wd.taxID), account: p(wd.account), routing: p(wd.routing), sortCode: p(wd.sortCode), bank: p(wd.bank),
		billTo: p(wd.billTo), desc: p(wd.desc), qty: p(wd.qty), unit: p(wd.unit), price: p(wd.price), amount: p(wd.amount), pos: p(wd.pos)}
}

func (w *writer) invoiceCase(id string, trap ic.Trap, earlier []Case) (Case, error) {
	if trap == copyTrap {
		if c, ok := w.copyOf(earlier); ok {
			c.ID, c.CopyOf = id, c.ID
			return c, nil
		}
		trap = ""
	}
	var orig *Case
	if trap == ic.TrapDuplicate {
		if orig = w.original(earlier); orig == nil {
			trap = ""
		}
	}
	in := w.newInvoice(trap, orig)
	layout := w.pickLayout(in, trap)
	w.plant(in, trap)
	c := Case{ID: id, Split: w.split, Layout: layout, Truth: in.truth()}
	if in.known {
		c.VendorID = in.v.id
	}
	if trap != "" {
		c.Traps = []ic.Trap{trap}
	}
	if orig != nil {
		c.DuplicateOf = orig.ID
	}
	c.Mode, c.Scan = w.pickMode(in, trap)
	d, err := w.draw(layout, in)
	if err != nil {
		return Case{}, err
	}
	d.title = in.l.title + " " + in.number
	c.doc = d
	if (c.Mode == ic.ModePhotoPNG || c.Mode == ic.ModePhotoJPEG) && len(d.pages) > 1 {
		c.Mode = ic.ModeScanPDF // a photo is one page
	}
	return c, nil
}

// copyOf picks an earlier clean invoice to send again unchanged.
func (w *writer) copyOf(earlier []Case) (Case, bool) {
	var ok []int
	for i, c := range earlier {
		if len(c.Traps) == 0 && c.CopyOf == "" && c.VendorID != "" {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return Case{}, false
	}
	return earlier[ok[w.rng.IntN(len(ok))]], true
}

func (w *writer) original(earlier []Case) *Case {
	var ok []int
	for i, c := range earlier {
		if c.VendorID != "" && c.CopyOf == "" && !hasTrap(c.Traps, ic.TrapDuplicate) {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	return &earlier[ok[w.rng.IntN(len(ok))]]
}

func hasTrap(ts []ic.Trap, t ic.Trap) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// number draws an invoice number the supplier has not used yet.
func (w *writer) number(v vendor) string {
	for {
		n := w.numbering(v)
		if k := v.name + "\x00" + n; !w.used[k] {
			w.used[k] = true
			return n
		}
	}
}

// numbering is how each supplier numbers its invoices.
func (w *writer) numbering(v vendor) string {
	n := 100 + w.rng.IntN(899)
	switch v.country {
	case "US":
		return fmt.Sprintf("%d", 20260000+n*7)
	case "GB", "IE":
		return fmt.Sprintf("SI-%05d", 10000+n)
	case "DE", "AT", "CH":
		return fmt.Sprintf("RE%d-%02d", 2603000+n, w.rng.IntN(40))
	case "FR", "BE":
		return fmt.Sprintf("F-26/%04d", n)
	case "NL":
		return fmt.Sprintf("2026.%04d", n)
	case "ES":
		return fmt.Sprintf("FAC-2026-%04d", n)
	case "IT":
		return fmt.Sprintf("%d/2026", n)
	}
	return fmt.Sprintf("INV/2026/%05d", n)
}

func (w *writer) poNumber(v vendor) string {
	switch w.rng.IntN(5) {
	case 0:
		return fmt.Sprintf("45%08d", w.rng.IntN(100000000))
	case 1:
		return fmt.Sprintf("HL/26/%04d", w.rng.IntN(10000))
	case 2:
		return fmt.Sprintf("PO-%d", 30000+w.rng.IntN(60000))
	case 3:
		return fmt.Sprintf("A%d", 7000+w.rng.IntN(3000))
	}
	return fmt.Sprintf("HLP-%d-%03d", 2026, w.rng.IntN(1000))
}

func (w *writer) newInvoice(trap ic.Trap, orig *Case) *inv {
	v := w.vendors[w.rng.IntN(len(w.vendors))]
	if orig != nil {
		for _, x := range w.vendors {
			if x.id == orig.VendorID {
				v = x
			}
		}
	}
	known := true
	if trap == ic.TrapUnknownVendor {
		names := unknownNames(w.split)
		v = names[w.rng.IntN(len(names))]
		v.taxID, v.iban, v.bic, v.account, v.routing, v.sortCode = w.inventBank(v)
		known = false
	}
	wd := w.lang[v.lang]
	in := &inv{v: v, known: known, wd: wd, name: v.name, bank: v, printBank: true, taxID: v.taxID}
	fmts := moneyFmts(v.lang, v.cur)
	in.money = fmts[w.rng.IntN(len(fmts))]
	dfs := dateFmts(v.lang)
	in.date = dfs[w.rng.IntN(len(dfs))]
	in.number = w.number(v)
	if orig != nil {
		in.number = *orig.Truth.InvoiceNumber
	}
	in.issue = time.Date(2026, 3, 2+w.rng.IntN(24), 0, 0, 0, 0, time.UTC)
	in.due = in.issue.AddDate(0, 0, []int{14, 30, 30, 45}[w.rng.IntN(4)])
	in.printDue = w.chance(0.85)
	if in.printDue && in.due.Before(AsOf()) {
		in.due = AsOf().AddDate(0, 0, 10)
	}
	if !in.printDue && known && in.issue.AddDate(0, 0, v.terms).Before(AsOf()) {
		in.issue = AsOf().AddDate(0, 0, -v.terms+5) // the master's terms must not make it past due
	}
	if w.chance(0.6) {
		in.po = w.poNumber(v)
	}
	if w.chance(0.4) {
		in.customerNo = fmt.Sprintf("%s%d", []string{"C-", "K", "", "CL"}[w.rng.IntN(4)], 10000+w.rng.IntN(80000))
	}
	in.rate, in.ratePrinted = taxRate(v.country)
	in.l = w.labels(wd, in.ratePrinted)
	in.unitCol = w.chance(0.35)
	in.vatCol = v.country != "US" && w.chance(0.2)
	in.codeCol = w.chance(0.2)
	in.dateCol = !in.codeCol && w.chance(0.1)
	in.customerVAT = v.country != "US" && w.chance(0.3)
	in.terms = w.pick(wd.terms)
	w.fillLines(in, 1+w.rng.IntN(6), 600, false)
	return in
}

// inventBank gives an unknown supplier a tax id and bank details.
func (w *writer) inventBank(v vendor) (taxID, iban_, bic, account, routing, sort string) {
	d := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + w.rng.IntN(10)))
		}
		return b.String()
	}
	switch v.country {
	case "US":
		return d(2) + "-" + d(7), "", "", "3" + d(9), aba(d(8)), ""
	case "DE":
		return "DE" + d(9), iban("DE", d(18)), "COBADEFFXXX", "", "", ""
	case "FR":
		return "FR" + d(11), iban("FR", d(23)), "CRLYFRPP", "", "", ""
	case "ES":
		return "ESB" + d(8), iban("ES", d(20)), "BBVAESMM", "", "", ""
	}
	return "NO" + d(9) + "MVA", iban("NO", d(11)), "DNBANOKK", "", "", ""
}

// fillLines draws n lines under maxPrice; big says the total must exceed
// the approve limit, otherwise it stays well under it.
func (w *writer) fillLines(in *inv, n, maxPrice int, big bool) {
	limit := decimal.NewFromInt(AutoApproveLimit)
	if l, ok := Limits()[in.v.cur]; ok {
		limit = l
	}
	scale := decimal.NewFromInt(1)
	if l, ok := Limits()[in.v.cur]; ok {
		scale = l.Div(decimal.NewFromInt(AutoApproveLimit)).Round(0)
	}
	for tries := 0; ; tries++ {
		in.lines = in.lines[:0]
		for k := 0; k < n; k++ {
			ln := line{desc: w.pick(in.wd.items), unit: w.pick(in.wd.units), date: in.issue.AddDate(0, 0, -k-1)}
			ln.code = fmt.Sprintf("%s-%04d", strings.ToUpper(in.v.country), 1000+w.rng.IntN(9000))
			ln.qty = decimal.NewFromInt(int64(1 + w.rng.IntN(20)))
			if w.chance(0.15) {
				ln.qty = ln.qty.Add(decimal.RequireFromString("0.5"))
			}
			ln.price = decimal.New(int64(150+w.rng.IntN(maxPrice*100)), -2).Mul(scale)
			ln.amount = ln.qty.Mul(ln.price).Round(2)
			if w.chance(0.08) {
				ln.desc2 = []string{"incl. delivery to site", "as per quote", "batch 2026-03"}[w.rng.IntN(3)]
			}
			in.lines = append(in.lines, ln)
		}
		in.totals(w.chance(0.4), w)
		over := in.total.GreaterThan(limit)
		if big && over || !big && in.total.LessThan(limit.Mul(decimal.RequireFromString("0.6"))) || tries > 200 {
			return
		}
	}
}

func (in *inv) totals(shipping bool, w *writer) {
	in.subtotal = decimal.Zero
	for _, l := range in.lines {
		in.subtotal = in.subtotal.Add(l.amount)
	}
	in.tax = in.subtotal.Mul(in.rate).Round(2)
	in.shipping = decimal.Zero
	if shipping {
		in.shipping = decimal.New(int64(800+w.rng.IntN(9000)), -2)
	}
	in.total = in.subtotal.Add(in.tax).Add(in.shipping)
	in.printedTot = in.total
}

// truth is what a perfect reading of the printed invoice gives.
func (in *inv) truth() result.Fields {
	s := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	d := func(x decimal.Decimal) *string { return s(x.StringFixed(2)) }
	f := result.Fields{VendorName: s(in.name), InvoiceNumber: s(in.number), InvoiceDate: s(in.issue.Format(time.DateOnly)),
		Currency: s(in.v.cur), Subtotal: d(in.subtotal), Tax: d(in.tax), Total: d(in.printedTot), PONumber: s(in.po),
		LineItems: []result.LineItem{}}
	if in.printDue {
		f.DueDate = s(in.due.Format(time.DateOnly))
	}
	if !in.shipping.IsZero() {
		f.Shipping = d(in.shipping)
	}
	if in.taxID != "" {
		f.VendorTaxID = s(strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(in.taxID, " MWST"), " ", "")))
	}
	if in.printBank {
		b := in.bank
		f.IBAN, f.BIC, f.AccountNumber, f.RoutingNumber = s(b.iban), s(b.bic), s(b.account), s(b.routing)
		f.SortCode = s(b.sortCode)
	}
	for _, l := range in.lines {
		desc := l.desc
		if l.desc2 != "" {
			desc += " " + l.desc2
		}
		it := result.LineItem{Description: desc, Quantity: s(l.qty.String()), UnitPrice: d(l.price), Amount: d(l.amount)}
		if in.unitCol {
			it.Unit = s(l.unit)
		}
		f.LineItems = append(f.LineItems, it)
	}
	return f
}

// pickMode chooses how the invoice reaches the tenant: hidden-text traps
// need a text layer, the faint total a scan.
func (w *writer) pickMode(in *inv, trap ic.Trap) (ic.Mode, *testdocs.Scan) {
	r := w.rng.IntN(24)
	switch {
	case hiddenTrap(trap), in.v.textOnly:
		r = 0
	case trap == ic.TrapFaintAmount:
		r = 14 + w.rng.IntN(10)
	}
	seed := w.rng.Int64()
	skew := func(deg float64) float64 { return (w.rng.Float64()*2 - 1) * deg }
	switch {
	case r < 14:
		return ic.ModeTextPDF, nil
	case r < 18:
		return ic.ModeScanPDF, &testdocs.Scan{DPI: 300, Skew: skew(0.6), Noise: 0.03, Blur: 0.4, Seed: seed}
	case r < 21:
		return ic.ModePhotoJPEG, &testdocs.Scan{DPI: 170, Skew: skew(2), Noise: 0.06, Blur: 0.8, Darkness: 0.1, JPEG: 70, Seed: seed}
	}
	return ic.ModeFaxTIFF, &testdocs.Scan{DPI: 200, Skew: skew(1), Noise: 0.05, Bilevel: true, Seed: seed}
}

func hiddenTrap(t ic.Trap) bool {
	switch t {
	case ic.TrapHiddenWhite, ic.TrapHiddenNearWhite, ic.TrapHiddenTiny, ic.TrapHiddenOffPage, ic.TrapHiddenUnderImage:
		return true
	}
	return false
}
