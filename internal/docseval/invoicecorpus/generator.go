package invoicecorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

type generator struct {
	rng     *rand.Rand
	vendors []vendorRec
	locales map[string]locale
}

type item struct {
	desc, unit        string
	qty, price, total decimal.Decimal
}

type printedBank struct {
	iban, bic, account, routing, sortCode string
	ibanGrouped                           bool
}

// invoice is the model an invoice is printed from.
type invoice struct {
	v             vendorRec
	known         bool
	loc           locale
	amt           amountStyle
	date          dateStyle
	name          string // vendor name as printed
	number        string
	issue, due    time.Time
	po            string
	items         []item
	subtotal, tax decimal.Decimal
	shipping      decimal.Decimal
	total         decimal.Decimal
	printTax      bool
	printSubtotal bool
	reverseCharge bool
	bank          printedBank
	taxID         string // as printed
	unitCol       bool
	extra         []testdocs.Item // notes, injections, hidden text
	faintTotal    bool
}

// numberPrefix is how each corpus vendor numbers its invoices.
func numberPrefix() map[string]string {
	return map[string]string{
		"v-acme": "INV-", "v-bluesky": "BSL-", "v-northwind": "NWT/26/", "v-britcab": "BC", "v-thames": "TOS-",
		"v-globex": "GX-2026-", "v-mueller": "RE-2026-", "v-lumiere": "F2026-", "v-vandijk": "VD",
	}
}

func (g *generator) invoiceCase(i int, trap Trap, earlier []Case) (Case, error) {
	var orig *Case
	if trap == TrapDuplicate {
		orig = g.pickOriginal(earlier)
		if orig == nil {
			trap = "" // nothing to duplicate yet: a clean invoice instead
		}
	}
	inv := g.newInvoice(i, trap, orig)
	g.preTrap(inv, trap)
	layout := g.pickLayout(inv, trap)
	g.postTrap(inv, trap)
	c := Case{ID: fmt.Sprintf("inv-%04d", i), Layout: layout, Truth: inv.truth()}
	if inv.known {
		c.VendorID = inv.v.VendorID
	}
	if trap != "" {
		c.Traps = []Trap{trap}
	}
	c.Render = g.pickRender(trap)
	c.Doc = testdocs.Fixed{Pages: layoutPages(layout, inv), Meta: testdocs.Meta{Title: "Invoice " + inv.number, Creator: "airlock corpus"}}
	if c.Render.CoverSheet {
		c.Doc.Pages = append([]testdocs.FixedPage{coverSheet(inv, len(c.Doc.Pages)+1)}, c.Doc.Pages...)
	}
	if (c.Render.Mode == ModePhotoPNG || c.Render.Mode == ModePhotoJPEG) && len(c.Doc.Pages) > 1 {
		// A photo holds one page: an invoice photographed page by page
		// arrives as a PDF of the photos.
		c.Render.Mode = ModeScanPDF
	}
	return c, nil
}

// pickOriginal chooses an earlier invoice from a known vendor to send
// again.
func (g *generator) pickOriginal(earlier []Case) *Case {
	var ok []int
	for i, c := range earlier {
		if c.VendorID != "" && !containsTrap(c.Traps, TrapDuplicate) {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	return &earlier[ok[g.rng.IntN(len(ok))]]
}

func containsTrap(ts []Trap, t Trap) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func (g *generator) newInvoice(i int, trap Trap, orig *Case) *invoice {
	v := g.vendors[g.rng.IntN(len(g.vendors))]
	if orig != nil {
		for _, x := range g.vendors {
			if x.VendorID == orig.VendorID {
				v = x
			}
		}
	}
	inv := &invoice{v: v, known: true, loc: g.locales[localeFor(v.Country)]}
	inv.amt = inv.loc.amounts[g.rng.IntN(len(inv.loc.amounts))]
	inv.date = inv.loc.dates[g.rng.IntN(len(inv.loc.dates))]
	inv.name = v.Name
	// Vendors with a template are printed by their full name (the
	// template's issuer); others sometimes by an alias.
	if len(v.Aliases) > 0 && v.VendorID != "v-northwind" && v.VendorID != "v-globex" && g.rng.IntN(3) == 0 {
		inv.name = v.Aliases[0]
	}
	inv.number = fmt.Sprintf("%s%d", numberPrefix()[v.VendorID], 1000+i)
	if orig != nil {
		inv.number = *orig.Truth.InvoiceNumber
	}
	inv.issue = time.Date(2026, 3, 1+g.rng.IntN(18), 0, 0, 0, 0, time.UTC)
	inv.due = inv.issue.AddDate(0, 0, 30)
	if g.rng.IntN(5) < 3 {
		inv.po = fmt.Sprintf("PO-%05d", 10000+g.rng.IntN(89999))
	}
	inv.bank = bankOf(v)
	inv.bank.ibanGrouped = g.rng.IntN(5) > 0
	inv.taxID = v.TaxID
	inv.unitCol = inv.loc.name != "us" && g.rng.IntN(2) == 0
	g.fillItems(inv, 1+g.rng.IntN(5), 900, false)
	return inv
}

func bankOf(v vendorRec) printedBank {
	b := printedBank{iban: v.Bank.IBAN, bic: v.Bank.BIC}
	switch v.Country {
	case "US":
		b = printedBank{account: v.Bank.AccountNumber, routing: v.Bank.RoutingNumber}
	case "GB":
		b.account, b.sortCode = v.Bank.AccountNumber, v.Bank.SortCode
	}
	return b
}

// fillItems draws n line items under maxPrice and the totals that follow.
// Clean invoices stay well under the auto-approve limit.
func (g *generator) fillItems(inv *invoice, n int, maxPrice int, big bool) {
	for {
		inv.items = inv.items[:0]
		for k := 0; k < n; k++ {
			it := item{desc: inv.loc.items[g.rng.IntN(len(inv.loc.items))]}
			it.qty = decimal.NewFromInt(int64(1 + g.rng.IntN(12)))
			if g.rng.IntN(6) == 0 {
				it.qty = it.qty.Add(decimal.RequireFromString("0.5"))
			}
			cents := int64(500 + g.rng.IntN(maxPrice*100))
			it.price = decimal.New(cents, -2)
			if inv.unitCol {
				it.unit = inv.loc.units[g.rng.IntN(len(inv.loc.units))]
			}
			it.total = it.qty.Mul(it.price).Round(2)
			inv.items = append(inv.items, it)
		}
		inv.computeTotals(g.rng)
		if big == inv.total.GreaterThan(decimal.NewFromInt(AutoApproveLimit*6/5)) && (big || inv.total.LessThan(decimal.NewFromInt(7000))) {
			return
		}
	}
}

func (inv *invoice) computeTotals(rng *rand.Rand) {
	inv.subtotal = decimal.Zero
	for _, it := range inv.items {
		inv.subtotal = inv.subtotal.Add(it.total)
	}
	inv.printTax, inv.printSubtotal = true, true
	inv.reverseCharge = inv.loc.name == "nl" && rng.IntN(3) == 0
	inv.tax = inv.subtotal.Mul(inv.loc.taxRate).Round(2)
	if inv.reverseCharge {
		inv.tax = decimal.Zero
	}
	inv.shipping = decimal.Zero
	if rng.IntN(2) == 0 {
		inv.shipping = decimal.New(int64(500+rng.IntN(7000)), -2)
	}
	inv.total = inv.subtotal.Add(inv.tax).Add(inv.shipping)
}

// truth is what a perfect reading of the printed invoice gives.
func (inv *invoice) truth() result.Fields {
	s := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	d := func(x decimal.Decimal) *string { return s(x.StringFixed(2)) }
	f := result.Fields{
		VendorName: s(inv.name), InvoiceNumber: s(inv.number), InvoiceDate: s(inv.issue.Format("2006-01-02")),
		DueDate: s(inv.due.Format("2006-01-02")), Currency: s(inv.loc.currency),
		Total: d(inv.total), PONumber: s(inv.po), IBAN: s(inv.bank.iban), BIC: s(inv.bank.bic),
		AccountNumber: s(inv.bank.account), RoutingNumber: s(inv.bank.routing), SortCode: s(inv.bank.sortCode),
		VendorTaxID: s(strings.ReplaceAll(strings.ToUpper(inv.taxID), " ", "")),
		LineItems:   []result.LineItem{},
	}
	if inv.printSubtotal {
		f.Subtotal = d(inv.subtotal)
	}
	if inv.printTax {
		f.Tax = d(inv.tax)
	}
	if !inv.shipping.IsZero() {
		f.Shipping = d(inv.shipping)
	}
	for _, it := range inv.items {
		f.LineItems = append(f.LineItems, result.LineItem{Description: it.desc, Quantity: s(it.qty.String()),
			Unit: s(it.unit), UnitPrice: d(it.price), Amount: d(it.total)})
	}
	return f
}

// pickLayout chooses how the invoice is laid out.
func (g *generator) pickLayout(inv *invoice, trap Trap) string {
	switch {
	case inv.v.VendorID == "v-northwind" && inv.known && g.rng.IntN(5) > 0:
		inv.name = inv.v.Name // its template knows it by its full name
		return "northwind"
	case inv.v.VendorID == "v-globex" && inv.known && g.rng.IntN(5) > 0:
		inv.name, inv.po = inv.v.Name, "" // Globex prints no PO number
		return "globex"
	case trap == TrapFaintAmount:
		return inv.loc.name
	}
	switch r := g.rng.IntN(20); {
	case r < 3 && trap != TrapTotalMismatch:
		inv.items, inv.printSubtotal, inv.printTax, inv.shipping, inv.po = nil, false, false, decimal.Zero, ""
		inv.tax, inv.subtotal = decimal.Zero, inv.total
		return "minimal"
	case r < 6:
		big := inv.total.GreaterThan(decimal.NewFromInt(AutoApproveLimit))
		maxPrice := 40
		if big {
			maxPrice = 900
		}
		g.fillItems(inv, 20+g.rng.IntN(18), maxPrice, big)
		return "multipage"
	case inv.loc.name == "us" && r < 13:
		return "us_grid"
	}
	return inv.loc.name
}

// pickRender chooses the rendering mode: hidden-text traps need a text
// layer, the faint amount needs a scan.
func (g *generator) pickRender(trap Trap) Render {
	r := g.rng.IntN(20)
	if hiddenTrap(trap) {
		r = 0
	}
	if trap == TrapFaintAmount && r < 11 {
		r = 11 + g.rng.IntN(9)
	}
	seed := g.rng.Int64()
	switch {
	case r < 11:
		return Render{Mode: ModeTextPDF}
	case r < 14:
		return Render{Mode: ModeScanPDF, Scan: &testdocs.Scan{DPI: 200, Skew: g.skew(1), Noise: 0.05, Blur: 0.5, Seed: seed}}
	case r < 16:
		return Render{Mode: ModePhotoPNG, Scan: &testdocs.Scan{DPI: 150, Skew: g.skew(3), Noise: 0.1, Blur: 1, Darkness: 0.15, Seed: seed}}
	case r < 18:
		return Render{Mode: ModePhotoJPEG, Scan: &testdocs.Scan{DPI: 150, Skew: g.skew(3), Noise: 0.1, Blur: 1, Darkness: 0.15, JPEG: 60, Seed: seed}}
	}
	return Render{Mode: ModeFaxTIFF, CoverSheet: true, Scan: &testdocs.Scan{DPI: 200, Skew: g.skew(1.5), Noise: 0.08, Bilevel: true, Seed: seed}}
}

func (g *generator) skew(maxDeg float64) float64 { return (g.rng.Float64()*2 - 1) * maxDeg }
