package invoice

import (
	"slices"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Labels, tables and vendor evidence the first corpus did not have, as
// invoicecorpus2 draws them.

// TestLabelsInOtherLanguages: Spanish and Italian invoices, with their
// dates, purchase orders and tax ids.
func TestLabelsInOtherLanguages(t *testing.T) {
	es := []tx{
		{x: 72, y: 60, text: "Pérez Ibáñez Suministros S.L.", size: 14}, {x: 540, y: 60, text: "FACTURA", size: 16, right: true},
		{x: 325, y: 90, text: "Número de factura:"}, {x: 540, y: 90, text: "FAC-2026-0760", right: true},
		{x: 325, y: 104, text: "Fecha:"}, {x: 540, y: 104, text: "25 de marzo de 2026", right: true},
		{x: 325, y: 118, text: "Vencimiento:"}, {x: 540, y: 118, text: "24/04/2026", right: true},
		{x: 325, y: 132, text: "Su pedido:"}, {x: 540, y: 132, text: "HL/26/0309", right: true},
		{x: 335, y: 300, text: "Base imponible"}, {x: 540, y: 300, text: "1.000,00 €", right: true},
		{x: 335, y: 315, text: "IVA (21%)"}, {x: 540, y: 315, text: "210,00 €", right: true},
		{x: 335, y: 330, text: "Total factura"}, {x: 540, y: 330, text: "1.210,00 €", right: true},
		{x: 72, y: 765, text: "N.I.F.: ESB84512396"},
	}
	wantFields(t, mustExtract(t, textDoc(es), Options{}), map[string]string{result.FieldVendorName: "Pérez Ibáñez Suministros S.L.",
		result.FieldInvoiceNumber: "FAC-2026-0760", result.FieldInvoiceDate: "2026-03-25", result.FieldDueDate: "2026-04-24",
		result.FieldPONumber: "HL/26/0309", result.FieldSubtotal: "1000.00", result.FieldTax: "210.00", result.FieldTotal: "1210.00",
		result.FieldVendorTaxID: "ESB84512396"})
	it := []tx{
		{x: 72, y: 60, text: "Caffè Nerino S.r.l.", size: 14}, {x: 540, y: 60, text: "FATTURA", size: 16, right: true},
		{x: 325, y: 90, text: "Fattura n."}, {x: 540, y: 90, text: "412/2026", right: true},
		{x: 325, y: 104, text: "Data documento"}, {x: 540, y: 104, text: "5 marzo 2026", right: true},
		{x: 325, y: 118, text: "Scadenza pagamento"}, {x: 540, y: 118, text: "04/04/2026", right: true},
		{x: 325, y: 132, text: "Rif. ordine"}, {x: 540, y: 132, text: "A7734", right: true},
		{x: 335, y: 300, text: "Imponibile"}, {x: 540, y: 300, text: "€ 100,00", right: true},
		{x: 335, y: 315, text: "IVA 22%"}, {x: 540, y: 315, text: "€ 22,00", right: true},
		{x: 335, y: 330, text: "Totale documento"}, {x: 540, y: 330, text: "€ 122,00", right: true},
		{x: 72, y: 765, text: "Partita IVA 04821930967"},
	}
	wantFields(t, mustExtract(t, textDoc(it), Options{}), map[string]string{result.FieldInvoiceNumber: "412/2026",
		result.FieldInvoiceDate: "2026-03-05", result.FieldDueDate: "2026-04-04", result.FieldPONumber: "A7734",
		result.FieldTotal: "122.00", result.FieldTax: "22.00", result.FieldVendorTaxID: "04821930967"})
}

// TestCustomerWordAfterLabel: "N° TVA client" and "NIF cliente" name the
// customer's number, not the vendor's.
func TestCustomerWordAfterLabel(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{
		{x: 72, y: 110, text: "N° TVA client GB318664205"},
		{x: 72, y: 765, text: "Numéro de TVA: FR 47 512336781"},
	}), Options{})
	wantFields(t, res, map[string]string{result.FieldVendorTaxID: "FR47512336781"})
	res = mustExtract(t, textDoc([]tx{{x: 72, y: 110, text: "NIF cliente GB318664205"}}), Options{})
	if got := field(res, result.FieldVendorTaxID); got != "<nil>" {
		t.Errorf("customer's NIF read as the vendor's: %q", got)
	}
}

// TestTaxIDByShape: a Swiss UID after "MWST" (a tax amount's label) and
// an id under a footer label the lexicon does not know are read by their
// shape, below any labelled reading; the customer's is not.
func TestTaxIDByShape(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{
		{x: 340, y: 300, text: "MwSt. 8.1%"}, {x: 540, y: 300, text: "CHF 81.00", right: true},
		{x: 72, y: 765, text: "MWST CHE-114.927.538 MWST", size: 7},
	}), Options{})
	wantFields(t, res, map[string]string{result.FieldVendorTaxID: "CHE-114.927.538", result.FieldTax: "81.00"})
	res = mustExtract(t, textDoc([]tx{
		{x: 72, y: 110, text: "Bill To:"}, {x: 72, y: 124, text: "Contoso Ltd"}, {x: 72, y: 138, text: "GB318664205"},
		{x: 380, y: 760, text: "Reg. VAT", size: 7}, {x: 380, y: 769, text: "ATU58229147", size: 7},
	}), Options{})
	wantFields(t, res, map[string]string{result.FieldVendorTaxID: "ATU58229147"})
	if s := res.FieldSources[result.FieldVendorTaxID]; s.Method != result.MethodInferred {
		t.Errorf("source %+v, want inferred", s)
	}
}

// table is a line-item table under a header at y, one row per line.
func table(y float64, header []tx, rows ...[]tx) []tx {
	out := slices.Clone(header)
	for i := range out {
		out[i].y = y
	}
	for k, r := range rows {
		for _, c := range r {
			c.y = y + 18 + float64(k)*15
			out = append(out, c)
		}
	}
	return out
}

func item(desc, qty, price, amount string) []tx {
	return []tx{{x: 72, text: desc}, {x: 360, text: qty, right: true}, {x: 460, text: price, right: true}, {x: 540, text: amount, right: true}}
}

var itemHeader = []tx{{x: 72, text: "Description"}, {x: 360, text: "Qty", right: true}, {x: 460, text: "Unit Price", right: true}, {x: 540, text: "Amount", right: true}}

// TestTableRows: a running total carried between pages is no item; a
// description's second line that happens to hold a label word ("incl.
// delivery") does not end the table.
func TestTableRows(t *testing.T) {
	runs := table(200, itemHeader,
		item("Steel brackets", "10", "60.00", "600.00"),
		[]tx{{x: 72, text: "incl. delivery to site", size: 8}},
		item("Consulting services", "2", "200.00", "400.00"),
		[]tx{{x: 72, text: "Carried forward"}, {x: 540, text: "1,000.00", right: true}})
	res := mustExtract(t, textDoc(runs), Options{})
	ls := res.Fields.LineItems
	if len(ls) != 2 || ls[0].Description != "Steel brackets incl. delivery to site" || val(ls[1].Amount) != "400.00" {
		t.Errorf("lines %+v", ls)
	}
	if got := field(res, result.FieldShipping); got != "<nil>" {
		t.Errorf("shipping %q from a description", got)
	}
}

// TestQuantityRunIntoTheUnitColumn: "5 Satz" set closer than a cell gap
// under "Menge" and "Einheit" is a quantity and a unit; "Quantity Unit"
// over "Price" is two columns, not a "Unit Price".
func TestQuantityRunIntoTheUnitColumn(t *testing.T) {
	hdr := []tx{{x: 72, text: "Bezeichnung"}, {x: 300, text: "Menge", right: true}, {x: 306, text: "Einheit"},
		{x: 460, text: "Preis", right: true}, {x: 540, text: "Betrag", right: true}}
	runs := table(200, hdr, []tx{{x: 72, text: "Zange Knipex 87 01"}, {x: 300, text: "5", right: true}, {x: 305, text: "Satz"},
		{x: 460, text: "451,80", right: true}, {x: 540, text: "2.259,00", right: true}})
	ls := mustExtract(t, textDoc(runs), Options{}).Fields.LineItems
	if len(ls) != 1 || val(ls[0].Quantity) != "5" || val(ls[0].Unit) != "Satz" || val(ls[0].UnitPrice) != "451.80" {
		t.Errorf("lines %+v", ls)
	}
	hdr = []tx{{x: 72, text: "Item"}, {x: 265, text: "Quantity Unit"}, {x: 415, text: "Price"}, {x: 540, text: "Total", right: true}}
	runs = table(200, hdr, []tx{{x: 72, text: "Courier to site"}, {x: 289, text: "10 pack"}, {x: 415, text: "50.98"},
		{x: 540, text: "509.80", right: true}})
	ls = mustExtract(t, textDoc(runs), Options{}).Fields.LineItems
	if len(ls) != 1 || val(ls[0].Quantity) != "10" || val(ls[0].Unit) != "pack" || val(ls[0].UnitPrice) != "50.98" {
		t.Errorf("lines %+v", ls)
	}
}

// TestPaymentTermsAreNoAmounts: "Net 30" is terms, not a net amount; a
// weakly labelled shipping that breaks a balanced invoice is dropped.
func TestPaymentTermsAreNoAmounts(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{
		{x: 360, y: 300, text: "Net"}, {x: 540, y: 300, text: "$1,000.00", right: true},
		{x: 360, y: 315, text: "Tax"}, {x: 540, y: 315, text: "$80.00", right: true},
		{x: 360, y: 330, text: "Total"}, {x: 540, y: 330, text: "$1,080.00", right: true},
		{x: 72, y: 360, text: "Terms: Net 30."},
		{x: 72, y: 380, text: "Transport 45.00"},
	}), Options{})
	wantFields(t, res, map[string]string{result.FieldSubtotal: "1000.00", result.FieldShipping: "<nil>", result.FieldTotal: "1080.00"})
}

// TestDateShapes: dates with month names between dashes, and Spanish
// dates with "de".
func TestDateShapes(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"22-Mar-2026": "2026-03-22", "05-Apr-2026": "2026-04-05",
		"25 de marzo de 2026": "2026-03-25", "5. März 2026": "2026-03-05", "3 aprile 2026": "2026-04-03"} {
		d, err := e.dp.parse(in, OrderDMY)
		if err != nil || d.t.Format("2006-01-02") != want {
			t.Errorf("%q: %v %v, want %s", in, d.t, err, want)
		}
	}
}

// TestCandidates: the result offers the other readings of the vendor's
// name and tax id (letterhead cells, a legal footer, ids by shape), never
// the picked value again.
func TestCandidates(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{
		{x: 72, y: 60, text: "LUMIÈRE", size: 22},
		{x: 400, y: 60, text: "Maison de lumière", size: 11},
		{x: 72, y: 110, text: "Facturé à"}, {x: 72, y: 124, text: "Contoso Ltd"},
		{x: 340, y: 110, text: "Facture n°:"}, {x: 540, y: 110, text: "F-26/0630", right: true},
		{x: 72, y: 760, text: "Société Lumière d'Azur SAS", size: 7}, {x: 250, y: 760, text: "N° TVA", size: 7},
		{x: 250, y: 769, text: "FR 47 512336781", size: 7},
		{x: 400, y: 760, text: "IE6388047V", size: 7},
	}), Options{})
	names := res.Candidates[result.FieldVendorName]
	if got := field(res, result.FieldVendorName); got != "LUMIÈRE" || len(names) < 2 || names[0].Value != "Maison de lumière" ||
		!slices.ContainsFunc(names, func(c result.Candidate) bool { return c.Value == "Société Lumière d'Azur SAS" }) {
		t.Errorf("vendor %q, candidates %+v", got, names)
	}
	ids := res.Candidates[result.FieldVendorTaxID]
	if got := field(res, result.FieldVendorTaxID); got != "FR47512336781" || len(ids) != 1 || ids[0].Value != "IE6388047V" {
		t.Errorf("tax id %q, candidates %+v", got, ids)
	}
	for _, c := range slices.Concat(names, ids) {
		if c.Page != 1 || c.Confidence <= 0 || c.Method == "" {
			t.Errorf("candidate %+v", c)
		}
	}
}
