package invoice

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// usInvoice is a US invoice: letterhead, labels left of right-aligned
// values, a table, totals, bank details.
func usInvoice() []tx {
	return []tx{
		{x: 72, y: 60, text: "Acme Corporation", size: 16},
		{x: 540, y: 60, text: "INVOICE", size: 20, right: true},
		{x: 72, y: 110, text: "Bill To:"},
		{x: 72, y: 124, text: "Contoso Ltd"},
		{x: 340, y: 110, text: "Invoice #:"}, {x: 540, y: 110, text: "INV-0042", right: true},
		{x: 340, y: 125, text: "Invoice Date:"}, {x: 540, y: 125, text: "March 12, 2026", right: true},
		{x: 340, y: 140, text: "Due Date:"}, {x: 540, y: 140, text: "04/11/2026", right: true},
		{x: 340, y: 155, text: "PO Number:"}, {x: 540, y: 155, text: "PO-7781", right: true},
		{x: 72, y: 250, text: "Description"}, {x: 360, y: 250, text: "Qty", right: true},
		{x: 460, y: 250, text: "Unit Price", right: true}, {x: 540, y: 250, text: "Amount", right: true},
		{x: 72, y: 270, text: "Steel brackets"}, {x: 360, y: 270, text: "10", right: true},
		{x: 460, y: 270, text: "60.00", right: true}, {x: 540, y: 270, text: "600.00", right: true},
		{x: 72, y: 286, text: "Consulting services"}, {x: 360, y: 286, text: "2.5", right: true},
		{x: 460, y: 286, text: "160.00", right: true}, {x: 540, y: 286, text: "400.00", right: true},
		{x: 360, y: 320, text: "Subtotal"}, {x: 540, y: 320, text: "$1,000.00", right: true},
		{x: 360, y: 335, text: "Sales Tax (8.25%)"}, {x: 540, y: 335, text: "$82.50", right: true},
		{x: 360, y: 350, text: "Shipping"}, {x: 540, y: 350, text: "$17.50", right: true},
		{x: 360, y: 365, text: "Total Due"}, {x: 540, y: 365, text: "$1,100.00", right: true},
		{x: 72, y: 560, text: "Routing Number: 021000021"},
		{x: 72, y: 574, text: "Account Number: 4830012345"},
		{x: 72, y: 765, text: "EIN: 12-3456789"},
	}
}

func TestExtractUSInvoice(t *testing.T) {
	runs := usInvoice()
	doc := textDoc(runs)
	res := mustExtract(t, doc, Options{Renders: map[int]*hidden.Render{1: inkFor(doc.Pages[0], runs, nil)}})
	want := map[string]string{
		result.FieldVendorName: "Acme Corporation", result.FieldInvoiceNumber: "INV-0042",
		result.FieldInvoiceDate: "2026-03-12", result.FieldDueDate: "2026-04-11", result.FieldPONumber: "PO-7781",
		result.FieldCurrency: "USD", result.FieldSubtotal: "1000.00", result.FieldTax: "82.50",
		result.FieldShipping: "17.50", result.FieldTotal: "1100.00", result.FieldRoutingNumber: "021000021",
		result.FieldAccountNumber: "4830012345", result.FieldVendorTaxID: "12-3456789",
		result.FieldIBAN: "<nil>", result.FieldBIC: "<nil>", result.FieldSortCode: "<nil>",
	}
	for f, v := range want {
		if got := field(res, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	if n := len(res.Fields.LineItems); n != 2 || val(res.Fields.LineItems[1].Quantity) != "2.5" || val(res.Fields.LineItems[1].Amount) != "400.00" {
		t.Errorf("line items %+v", res.Fields.LineItems)
	}
	if s := res.FieldSources[result.FieldTotal]; s.Method != result.MethodLabel || s.Confidence < 0.9 || s.Page != 1 {
		t.Errorf("total source %+v", s)
	}
	if s := res.FieldSources[result.FieldVendorName]; s.Method != result.MethodInferred {
		t.Errorf("vendor source %+v", s)
	}
	if !res.Pages[0].InkChecked || len(res.HiddenText) != 0 || len(res.Injection) != 0 {
		t.Errorf("pages %+v hidden %+v injection %+v", res.Pages, res.HiddenText, res.Injection)
	}
}

func TestExtractLabelsAboveValues(t *testing.T) {
	doc := textDoc([]tx{
		{x: 72, y: 72, text: "Blue Sky Logistics LLC", size: 14},
		{x: 72, y: 105, text: "Invoice Number", size: 8}, {x: 200, y: 105, text: "Date", size: 8}, {x: 330, y: 105, text: "Due", size: 8},
		{x: 72, y: 119, text: "BSL-1001"}, {x: 200, y: 119, text: "2026-03-12"}, {x: 330, y: 119, text: "2026-04-11"},
		{x: 420, y: 240, text: "Total", size: 9},
		{x: 540, y: 258, text: "USD 1,234.56", size: 14, right: true},
	})
	res := mustExtract(t, doc, Options{})
	for f, v := range map[string]string{result.FieldInvoiceNumber: "BSL-1001", result.FieldInvoiceDate: "2026-03-12",
		result.FieldDueDate: "2026-04-11", result.FieldTotal: "1234.56", result.FieldCurrency: "USD"} {
		if got := field(res, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	// A page without an ink render is geometry-checked only, and says so.
	if res.Pages[0].InkChecked {
		t.Error("InkChecked without a render")
	}
}

func TestExtractEuropeanFormats(t *testing.T) {
	tests := []struct {
		name  string
		runs  []tx
		want  map[string]string
		issue map[string]string
	}{
		{"German", []tx{
			{x: 72, y: 60, text: "Müller Maschinenbau GmbH", size: 16},
			{x: 340, y: 110, text: "Rechnungsnummer:"}, {x: 540, y: 110, text: "RE-2026-17", right: true},
			{x: 340, y: 125, text: "Rechnungsdatum:"}, {x: 540, y: 125, text: "03.04.2026", right: true},
			{x: 360, y: 300, text: "Zwischensumme"}, {x: 540, y: 300, text: "1.234,00 €", right: true},
			{x: 360, y: 315, text: "MwSt. 19 %"}, {x: 540, y: 315, text: "234,46 €", right: true},
			{x: 360, y: 330, text: "Gesamtbetrag"}, {x: 540, y: 330, text: "1.468,46 €", right: true},
			{x: 72, y: 560, text: "IBAN: DE89 3704 0044 0532 0130 00"}, {x: 72, y: 574, text: "BIC: COBADEFFXXX"},
			{x: 72, y: 765, text: "USt-IdNr.: DE123456789"},
		}, map[string]string{result.FieldInvoiceDate: "2026-04-03", result.FieldSubtotal: "1234.00", result.FieldTax: "234.46",
			result.FieldTotal: "1468.46", result.FieldCurrency: "EUR", result.FieldIBAN: "DE89370400440532013000",
			result.FieldBIC: "COBADEFFXXX", result.FieldVendorTaxID: "DE123456789", result.FieldInvoiceNumber: "RE-2026-17"}, nil},
		{"French with no-break and thin spaces", []tx{
			{x: 72, y: 60, text: "Lumière Conseil SARL", size: 16},
			{x: 340, y: 110, text: "N° de facture :"}, {x: 540, y: 110, text: "F2026-8", right: true},
			{x: 340, y: 125, text: "Date de facture :"}, {x: 540, y: 125, text: "03/04/2026", right: true},
			{x: 360, y: 300, text: "Total HT"}, {x: 540, y: 300, text: "1\u2009234,00\u00a0€", right: true},
			{x: 360, y: 315, text: "TVA 20 %"}, {x: 540, y: 315, text: "246,80 €", right: true},
			{x: 360, y: 330, text: "Total TTC"}, {x: 540, y: 330, text: "1 480,80 €", right: true},
		}, map[string]string{result.FieldInvoiceDate: "2026-04-03", result.FieldSubtotal: "1234.00",
			result.FieldTax: "246.80", result.FieldTotal: "1480.80", result.FieldInvoiceNumber: "F2026-8"},
			map[string]string{result.FieldInvoiceDate: result.IssueAmbiguousDate}},
		{"Dutch reverse charge", []tx{
			{x: 72, y: 60, text: "Van Dijk Logistiek B.V.", size: 16},
			{x: 340, y: 110, text: "Factuurnummer:"}, {x: 540, y: 110, text: "VD1009", right: true},
			{x: 340, y: 125, text: "Factuurdatum:"}, {x: 540, y: 125, text: "12-03-2026", right: true},
			{x: 360, y: 300, text: "Subtotaal"}, {x: 540, y: 300, text: "€ 1.000,00", right: true},
			{x: 360, y: 315, text: "BTW verlegd 0%"}, {x: 540, y: 315, text: "€ 0,00", right: true},
			{x: 360, y: 330, text: "Totaal"}, {x: 540, y: 330, text: "€ 1.000,00", right: true},
			{x: 72, y: 765, text: "BTW-nummer: NL123456789B01"},
		}, map[string]string{result.FieldInvoiceDate: "2026-03-12", result.FieldTax: "0.00", result.FieldTotal: "1000.00",
			result.FieldVendorTaxID: "NL123456789B01", result.FieldCurrency: "EUR"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustExtract(t, textDoc(tt.runs), Options{})
			for f, v := range tt.want {
				if got := field(res, f); got != v {
					t.Errorf("%s = %q, want %q", f, got, v)
				}
			}
			for f, is := range tt.issue {
				if !hasIssue(res.FieldSources[f], is) {
					t.Errorf("%s: issues %v, want %s", f, res.FieldSources[f].Issues, is)
				}
			}
		})
	}
}

func TestDateOrderFollowsTheLocale(t *testing.T) {
	mk := func(total string) *extract.Document {
		return textDoc([]tx{
			{x: 340, y: 110, text: "Invoice Date:"}, {x: 540, y: 110, text: "03/04/2026", right: true},
			{x: 360, y: 330, text: "Total"}, {x: 540, y: 330, text: total, right: true},
		})
	}
	if got := field(mustExtract(t, mk("$100.00"), Options{}), result.FieldInvoiceDate); got != "2026-03-04" {
		t.Errorf("dollar invoice: %s, want month first", got)
	}
	if got := field(mustExtract(t, mk("£100.00"), Options{}), result.FieldInvoiceDate); got != "2026-04-03" {
		t.Errorf("sterling invoice: %s, want day first", got)
	}
	if got := field(mustExtract(t, mk("£100.00"), Options{DateOrder: OrderMDY}), result.FieldInvoiceDate); got != "2026-03-04" {
		t.Errorf("job hint: %s, want month first", got)
	}
}

func TestCustomerTaxIDIsNotTheVendors(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{
		{x: 72, y: 110, text: "Customer VAT No: GB999999973"},
		{x: 72, y: 765, text: "VAT Reg No: GB 123 4567 89"},
	}), Options{})
	if got := field(res, result.FieldVendorTaxID); got != "GB123456789" {
		t.Errorf("vendor tax id %q", got)
	}
}

func TestFaxCoverSheetDoesNotSupplyTheInvoiceDate(t *testing.T) {
	cover := []tx{
		{x: 72, y: 80, text: "FAX", size: 28},
		{x: 72, y: 140, text: "To: Contoso Ltd"}, {x: 72, y: 160, text: "From: Acme Corporation"},
		{x: 72, y: 180, text: "Date: 03/20/2026"}, {x: 72, y: 220, text: "Re: Invoice INV-0042"},
	}
	inv := usInvoice()
	res := mustExtract(t, textDoc(cover, inv), Options{})
	if got := field(res, result.FieldInvoiceDate); got != "2026-03-12" {
		t.Errorf("invoice date %s, want the invoice page's", got)
	}
	if got := field(res, result.FieldVendorName); got != "Acme Corporation" {
		t.Errorf("vendor %q", got)
	}
	if got := field(res, result.FieldTotal); got != "1100.00" || res.FieldSources[result.FieldTotal].Page != 2 {
		t.Errorf("total %s on page %d", got, res.FieldSources[result.FieldTotal].Page)
	}
}

func TestMultiPageTableWithTotalsOnTheLastPage(t *testing.T) {
	header := []tx{{x: 72, y: 100, text: "Description"}, {x: 360, y: 100, text: "Qty", right: true},
		{x: 460, y: 100, text: "Unit Price", right: true}, {x: 540, y: 100, text: "Amount", right: true}}
	p1 := append([]tx{{x: 72, y: 60, text: "Acme Corporation", size: 16}, {x: 340, y: 80, text: "Invoice #: INV-9"}}, header...)
	p2 := append([]tx{{x: 72, y: 50, text: "Acme Corporation — Invoice #: INV-9 (continued)"}}, header...)
	for i := 0; i < 3; i++ {
		y := 120 + float64(i)*16
		row := []tx{{x: 72, y: y, text: "Widget"}, {x: 360, y: y, text: "1", right: true},
			{x: 460, y: y, text: "10.00", right: true}, {x: 540, y: y, text: "10.00", right: true}}
		p1, p2 = append(p1, row...), append(p2, row...)
	}
	p1 = append(p1, tx{x: 306, y: 770, text: "Page 1 of 2"})
	p2 = append(p2, tx{x: 360, y: 200, text: "Subtotal"}, tx{x: 540, y: 200, text: "$60.00", right: true},
		tx{x: 360, y: 215, text: "Total"}, tx{x: 540, y: 215, text: "$60.00", right: true}, tx{x: 306, y: 770, text: "Page 2 of 2"})
	res := mustExtract(t, textDoc(p1, p2), Options{})
	if n := len(res.Fields.LineItems); n != 6 {
		t.Fatalf("%d line items, want 6: %+v", n, res.Fields.LineItems)
	}
	if got := field(res, result.FieldTotal); got != "60.00" || res.FieldSources[result.FieldTotal].Page != 2 {
		t.Errorf("total %s on page %d", got, res.FieldSources[result.FieldTotal].Page)
	}
	if got := field(res, result.FieldInvoiceNumber); got != "INV-9" {
		t.Errorf("invoice number %q", got)
	}
}

func TestEmptyAndHugeDocumentsAreClassified(t *testing.T) {
	if _, err := Extract(&extract.Document{}, Options{}); err == nil {
		t.Error("empty document accepted")
	}
	big := &extract.Document{Pages: make([]extract.Page, result.MaxPages+1)}
	if _, err := Extract(big, Options{}); err == nil {
		t.Error("over the page limit accepted")
	}
}

func TestTextPages(t *testing.T) {
	doc := textDoc(nil, nil, nil)
	doc.Pages[1].Method = extract.MethodOCR
	if got := TextPages(doc); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("TextPages = %v, want [1 3]", got)
	}
}
