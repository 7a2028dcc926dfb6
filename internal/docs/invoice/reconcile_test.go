package invoice

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// table3 is a table of three lines summing to 9,000.00.
func table3() []tx {
	return []tx{
		{x: 72, y: 250, text: "Description"}, {x: 360, y: 250, text: "Qty", right: true},
		{x: 460, y: 250, text: "Unit Price", right: true}, {x: 540, y: 250, text: "Amount", right: true},
		{x: 72, y: 270, text: "Pump"}, {x: 360, y: 270, text: "1", right: true}, {x: 460, y: 270, text: "4,500.00", right: true}, {x: 540, y: 270, text: "4,500.00", right: true},
		{x: 72, y: 286, text: "Valves"}, {x: 360, y: 286, text: "2", right: true}, {x: 460, y: 286, text: "1,500.00", right: true}, {x: 540, y: 286, text: "3,000.00", right: true},
		{x: 72, y: 302, text: "Fitting"}, {x: 360, y: 302, text: "1", right: true}, {x: 460, y: 302, text: "1,500.00", right: true}, {x: 540, y: 302, text: "1,500.00", right: true},
	}
}

func TestImplausibleAmountsAreNeverTrusted(t *testing.T) {
	tests := []struct {
		name        string
		total       string
		conf        float64 // OCR confidence of the total; 0 = text layer
		want        string
		method      string
		implausible bool
		maxConf     float64
	}{
		{"well-formed", "$9,000.00", 0, "9000.00", result.MethodLabel, false, 1},
		{"grouping read as decimal", "$9.000.00", 0, "9000.00", result.MethodInferred, true, 0.3},
		{"separators lost, lines say 9000.00", "$900000", 0, "9000.00", result.MethodInferred, true, 0.3},
		{"separators lost, nothing agrees", "$700000", 0, "700000", result.MethodLabel, true, 0.3},
		{"grouping lost only", "$9000.00", 0, "9000.00", result.MethodLabel, false, 1},
		{"faint print read with low confidence", "$9,000.00", 35, "9000.00", result.MethodLabel, false, 0.4},
		{"zero read as O", "$9,O00.00", 88, "9000.00", result.MethodLabel, false, 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := append(table3(), tx{x: 360, y: 330, text: "Total"}, tx{x: 540, y: 330, text: tt.total, right: true, conf: tt.conf})
			res := mustExtract(t, textDoc(runs), Options{})
			src := res.FieldSources[result.FieldTotal]
			if got := field(res, result.FieldTotal); got != tt.want || src.Method != tt.method {
				t.Fatalf("total %q by %s, want %q by %s", got, src.Method, tt.want, tt.method)
			}
			if hasIssue(src, result.IssueImplausibleSeparators) != tt.implausible || src.Confidence > tt.maxConf {
				t.Fatalf("source %+v", src)
			}
		})
	}
}

func TestLostSeparatorInALineIsRepairedButMarked(t *testing.T) {
	runs := table3()
	runs[10] = tx{x: 460, y: 286, text: "150000", right: true} // unit price 1,500.00 lost its separators
	runs = append(runs, tx{x: 360, y: 330, text: "Total"}, tx{x: 540, y: 330, text: "$9,000.00", right: true})
	res := mustExtract(t, textDoc(runs), Options{})
	if got := val(res.Fields.LineItems[1].UnitPrice); got != "1500.00" {
		t.Errorf("unit price %q", got)
	}
	if src := res.FieldSources[result.FieldLineItems]; !hasIssue(src, result.IssueImplausibleSeparators) || src.Confidence > 0.3 {
		t.Errorf("line items source %+v", src)
	}
}

func TestOCRRepairsAreRecorded(t *testing.T) {
	runs := []tx{
		{x: 340, y: 110, text: "Invoice No:"}, {x: 540, y: 110, text: "INV-1O06", right: true, conf: 85},
		{x: 340, y: 125, text: "PO Number:"}, {x: 540, y: 125, text: "PO-974B9", right: true, conf: 85},
		{x: 72, y: 560, text: "IBAN:"}, {x: 110, y: 560, text: "GB29 NWBK 60l6 1331 9268 19", conf: 84},
		{x: 72, y: 580, text: "VAT Reg No:"}, {x: 150, y: 580, text: "GB9B7654321", conf: 84},
		{x: 72, y: 600, text: "BTW-nummer:"}, {x: 150, y: 600, text: "NL123456789B01", conf: 90},
		{x: 360, y: 330, text: "Total"}, {x: 540, y: 330, text: "£1,2O0.00", right: true, conf: 90},
	}
	for i := range runs {
		if runs[i].conf == 0 {
			runs[i].conf = 95
		}
	}
	doc := textDoc(runs)
	for i := range doc.Pages {
		doc.Pages[i].Method = "ocr"
	}
	res := mustExtract(t, doc, Options{})
	want := map[string]string{result.FieldInvoiceNumber: "INV-1006", result.FieldPONumber: "PO-97489",
		result.FieldIBAN: "GB29NWBK60161331926819", result.FieldTotal: "1200.00"}
	for f, v := range want {
		if got := field(res, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
		if !hasIssue(res.FieldSources[f], result.IssueOCRCorrected) {
			t.Errorf("%s: repair not recorded: %+v", f, res.FieldSources[f])
		}
	}
	// The first tax id on the page wins; the NL one keeps its B.
	if got := field(res, result.FieldVendorTaxID); got != "GB987654321" {
		t.Errorf("tax id %q", got)
	}
}

func TestNearMissesAreNotRepaired(t *testing.T) {
	runs := []tx{
		{x: 340, y: 110, text: "Invoice No:"}, {x: 540, y: 110, text: "VD1009", right: true},
		{x: 72, y: 580, text: "BTW-nummer:"}, {x: 150, y: 580, text: "NL123456789B01"},
		{x: 72, y: 560, text: "IBAN: GB29 NWBK 6016 1331 9268 18"}, // one digit off: fails mod-97
	}
	res := mustExtract(t, textDoc(runs), Options{})
	if got := field(res, result.FieldInvoiceNumber); got != "VD1009" {
		t.Errorf("invoice number %q", got)
	}
	if got := field(res, result.FieldVendorTaxID); got != "NL123456789B01" {
		t.Errorf("tax id %q", got)
	}
	if src := res.FieldSources[result.FieldIBAN]; field(res, result.FieldIBAN) != "GB29NWBK60161331926818" || !hasIssue(src, result.IssueChecksumFailed) {
		t.Errorf("IBAN %q %+v: want it as read, marked", field(res, result.FieldIBAN), src)
	}
}

func TestUnreadableBankValueIsReported(t *testing.T) {
	res := mustExtract(t, textDoc([]tx{{x: 72, y: 560, text: "IBAN: (see attached letter)"}}), Options{})
	src, ok := res.FieldSources[result.FieldIBAN]
	if field(res, result.FieldIBAN) != "<nil>" || !ok || !hasIssue(src, result.IssueValueUnreadable) {
		t.Fatalf("iban %q source %+v", field(res, result.FieldIBAN), src)
	}
}
