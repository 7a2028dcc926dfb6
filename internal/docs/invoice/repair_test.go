package invoice

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// scanned reads runs as one OCR page, every word at confidence 90 (what
// tesseract gives a misread slashed zero: it is sure of it).
func scanned(runs []tx) *extract.Document {
	for i := range runs {
		runs[i].conf = 90
	}
	return &extract.Document{Pages: []extract.Page{mkPage(1, extract.MethodOCR, runs...)}}
}

// table3With is table3 with line k's amount read as amt, and totals
// rows (label, value) after it.
func table3With(k int, amt string, totals ...string) []tx {
	runs := table3()
	if k >= 0 {
		runs[4+4*k+3].text = amt
	}
	for i := 0; i+1 < len(totals); i += 2 {
		y := 330 + float64(i)*8
		runs = append(runs, tx{x: 300, y: y, text: totals[i]}, tx{x: 540, y: y, text: totals[i+1], right: true})
	}
	return runs
}

func TestLineDigitRepairNeedsBothEquations(t *testing.T) {
	tests := []struct {
		name     string
		doc      *extract.Document
		want     string // line 2's amount as extracted
		repaired bool
	}{
		{"slashed zero read as 8, lines and totals agree once repaired",
			scanned(table3With(1, "3,080.00", "Subtotal", "9,000.00", "Total", "$9,000.00")), "3000.00", true},
		{"a printed wrong amount the subtotal includes: quantity x price alone is not enough",
			scanned(table3With(1, "3,080.00", "Subtotal", "9,080.00", "Total", "$9,080.00")), "3080.00", false},
		{"totals that do not balance confirm nothing",
			scanned(table3With(1, "3,080.00", "Subtotal", "9,000.00", "Total", "$9,800.00")), "3080.00", false},
		{"a text layer is as printed",
			textDoc(table3With(1, "3,080.00", "Subtotal", "9,000.00", "Total", "$9,000.00")), "3080.00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustExtract(t, tt.doc, Options{})
			if got := val(res.Fields.LineItems[1].Amount); got != tt.want {
				t.Fatalf("line 2 amount %q, want %q", got, tt.want)
			}
			src := res.FieldSources[result.FieldLineItems]
			if hasIssue(src, result.IssueOCRCorrected) != tt.repaired {
				t.Fatalf("line items source %+v: repaired should be %v", src, tt.repaired)
			}
			if tt.repaired && src.Confidence < 0.6 {
				t.Fatalf("a repair both equations confirm stays approvable: %+v", src)
			}
		})
	}
}

func TestTwoMisreadLinesRepairedTogether(t *testing.T) {
	runs := table3With(1, "3,080.00", "Subtotal", "9,000.00", "Total", "$9,000.00")
	runs[15].text = "1,508.00" // line 3's amount 1,500.00 read with a slashed zero as 8
	res := mustExtract(t, scanned(runs), Options{})
	for i, want := range []string{"4500.00", "3000.00", "1500.00"} {
		if got := val(res.Fields.LineItems[i].Amount); got != want {
			t.Errorf("line %d amount %q, want %q", i+1, got, want)
		}
	}
}

func TestTaxRepairedOnlyByItsRate(t *testing.T) {
	tests := []struct {
		name, label, tax, want string
		repaired               bool
	}{
		{"rate and balance agree", "VAT 20%", "1,880.00", "1800.00", true},
		{"rate in brackets", "Sales Tax (20%)", "1,880.00", "1800.00", true},
		{"no rate printed: balance alone says nothing", "VAT", "1,880.00", "1880.00", false},
		{"rate disagrees with the repair", "VAT 19%", "1,880.00", "1880.00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := table3With(-1, "", "Subtotal", "9,000.00", tt.label, tt.tax, "Total", "$10,800.00")
			res := mustExtract(t, scanned(runs), Options{})
			if got := field(res, result.FieldTax); got != tt.want {
				t.Fatalf("tax %q, want %q", got, tt.want)
			}
			if got := hasIssue(res.FieldSources[result.FieldTax], result.IssueOCRCorrected); got != tt.repaired {
				t.Fatalf("tax source %+v", res.FieldSources[result.FieldTax])
			}
			if got := field(res, result.FieldTotal); got != "10800.00" {
				t.Fatalf("total %q: the total is never changed", got)
			}
		})
	}
}

func TestTotalAndShippingAreNeverRepaired(t *testing.T) {
	// A total one look-alike digit off is what a changed digit looks like;
	// shipping has no second equation, so "repairing" it would balance an
	// inflated total.
	runs := table3With(-1, "", "Subtotal", "9,000.00", "VAT 20%", "1,800.00", "Total", "$10,880.00")
	res := mustExtract(t, scanned(runs), Options{})
	if got := field(res, result.FieldTotal); got != "10880.00" {
		t.Errorf("total %q, want it as read", got)
	}
	runs = table3With(-1, "", "Subtotal", "9,000.00", "Shipping", "58.00", "Total", "$9,050.00")
	res = mustExtract(t, scanned(runs), Options{})
	if got := field(res, result.FieldShipping); got != "58.00" {
		t.Errorf("shipping %q, want it as read", got)
	}
}

func TestSubtotalRepairedByLinesAndBalance(t *testing.T) {
	runs := table3With(-1, "", "Subtotal", "9,008.00", "Total", "$9,000.00")
	res := mustExtract(t, scanned(runs), Options{})
	if got := field(res, result.FieldSubtotal); got != "9000.00" {
		t.Errorf("subtotal %q, want 9000.00", got)
	}
}

func TestMisreadsOf(t *testing.T) {
	has := func(vs []decimal.Decimal, s string) bool {
		for _, v := range vs {
			if v.StringFixed(2) == s {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		read, printed string
		want          bool
	}{
		{"40.84", "40.04", true},   // slashed zero read as 8
		{"211.49", "211.40", true}, // ... as 9
		{"580.86", "80.86", true},  // "$" read as 5
		{"40.84", "40.74", false},  // 8 for 7 is not a look-alike here
		{"40.84", "41.04", false},  // two digits
		{"80.86", "0.86", false},   // no leading-sign deletion into a leading zero
	} {
		v, _ := decimal.NewFromString(tc.read)
		if got := has(misreadsOf(v, 2), tc.printed); got != tc.want {
			t.Errorf("misreadsOf(%s) holds %s: %v, want %v", tc.read, tc.printed, got, tc.want)
		}
	}
}

func TestTaxRate(t *testing.T) {
	for in, want := range map[string]string{
		"VAT 20% 1,800.00": "20", "Sales Tax (8.25%)": "8.25", "MwSt. 19 %": "19", "TVA 20,0 %": "20",
		"VAT": "", "VAT 0% / 20%": "", "BTW 21%": "21",
	} {
		got := ""
		if r := taxRate(in); r != nil {
			got = r.String()
		}
		if got != want {
			t.Errorf("taxRate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnapUnits(t *testing.T) {
	known := map[string]bool{"ea": true, "hrs": true, "m": true, "uur": true, "h": true, "stk": true}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"ea", "en", "hrs"}, []string{"ea", "ea", "hrs"}},   // one letter off a unit the table prints
		{[]string{"m", "==m", "5h"}, []string{"m", "m", "h"}},        // specks around the letters
		{[]string{"m", "9", "5%"}, []string{"m", "", ""}},            // no letters: not a unit
		{[]string{"uur", "wur"}, []string{"uur", "uur"}},             // one letter off
		{[]string{"st", "wur"}, []string{"st", "uur"}},               // ... a known unit of three letters
		{[]string{"Sm", "hrs"}, []string{"m", "hrs"}},                // a speck letter in front
		{[]string{"Stk", "Stk", "LL"}, []string{"Stk", "Stk", "LL"}}, // nothing to go by: as read
		{[]string{"pallet", "ea"}, []string{"pallet", "ea"}},         // unknown but clean: as read
	} {
		var ls []line
		for _, u := range tc.in {
			ls = append(ls, line{unit: u})
		}
		snapUnits(ls, known)
		for i := range ls {
			if ls[i].unit != tc.want[i] {
				t.Errorf("%v: line %d unit %q, want %q", tc.in, i, ls[i].unit, tc.want[i])
			}
		}
	}
}

func TestLowConfidenceTiedByTwoEquationsIsTrusted(t *testing.T) {
	doc := func(faint bool) *extract.Document {
		d := scanned(table3With(-1, "", "Subtotal", "9,000.00", "Total", "$9,000.00"))
		ls := d.Pages[0].Lines
		last := &ls[len(ls)-1].Words[0] // the total's value
		last.Conf, last.Faint = 35, faint
		return d
	}
	// The lines sum to the subtotal and the totals balance: a total
	// tesseract read at 35 that satisfies both is the printed one.
	src := mustExtract(t, doc(false), Options{}).FieldSources[result.FieldTotal]
	if hasIssue(src, result.IssueLowOCRConfidence) || src.Confidence < 0.6 {
		t.Errorf("total tied by two equations: %+v", src)
	}
	// Faint ink goes to a person whatever the arithmetic says.
	src = mustExtract(t, doc(true), Options{}).FieldSources[result.FieldTotal]
	if !hasIssue(src, result.IssueLowOCRConfidence) || src.Confidence >= 0.6 {
		t.Errorf("faint total: %+v", src)
	}
	// One equation is not enough: no subtotal printed.
	d := scanned(table3With(-1, "", "Total", "$9,000.00"))
	ls := d.Pages[0].Lines
	ls[len(ls)-1].Words[0].Conf = 35
	src = mustExtract(t, d, Options{}).FieldSources[result.FieldTotal]
	if !hasIssue(src, result.IssueLowOCRConfidence) {
		t.Errorf("total with one equation: %+v", src)
	}
}
