package invoice

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// The snippets below are tesseract 5.3 readings of the rendered corpus
// (scans at 200 dpi, photos at 150 dpi with up to 3 degrees of skew, G4
// faxes), each next to a near miss the rule must leave alone.

func TestOCRNoise(t *testing.T) {
	for s, want := range map[string]bool{
		"~": true, "—": true, "_": true, "|": true, "«": true, "©": true, "—_—": true, ".": true,
		"$": false, "€": false, "£": false, "#": false, "%": false, "&": false, ":": false,
		"a": false, "1": false, "—1,500.00": false, "(box)": false,
	} {
		if got := ocrNoise(s); got != want {
			t.Errorf("ocrNoise(%q) = %v, want %v", s, got, want)
		}
	}
}

// turn is extract's turnBox: the upright box around b turned by deg
// clockwise about (cx, cy).
func turn(b extract.Box, deg, cx, cy float64) extract.Box {
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	out := extract.Box{XMin: math.Inf(1), YMin: math.Inf(1), XMax: math.Inf(-1), YMax: math.Inf(-1)}
	for _, p := range [4][2]float64{{b.XMin, b.YMin}, {b.XMax, b.YMin}, {b.XMin, b.YMax}, {b.XMax, b.YMax}} {
		dx, dy := p[0]-cx, p[1]-cy
		x, y := cx+c*dx-s*dy, cy+s*dx+c*dy
		out = extract.Box{XMin: min(out.XMin, x), YMin: min(out.YMin, y), XMax: max(out.XMax, x), YMax: max(out.YMax, y)}
	}
	return out
}

// skewedTable is three table rows as extract reports them for a page
// photographed deg off: boxes turned back onto the skewed page, the
// correction in SkewDegrees (0 = not corrected, the slope left in place).
func skewedTable(deg, corrected float64) extract.Page {
	p := extract.Page{Width: 612, Height: 792, Method: extract.MethodOCR, SkewDegrees: corrected}
	for i, y := range []float64{270, 286, 302} {
		var l extract.Line
		for _, x := range []float64{72, 140, 340, 430, 500} {
			b := extract.Box{XMin: x, YMin: y - 7, XMax: x + 40, YMax: y + 2}
			l.Words = append(l.Words, extract.Word{Text: string(rune('a' + i)), Conf: 90, Box: turn(b, deg, 306, 396)})
		}
		p.Lines = append(p.Lines, l)
	}
	return p
}

func TestUprightOCRWordsRebuildsRows(t *testing.T) {
	for _, tc := range []struct {
		name              string
		skew, corrected   float64
		wantRows, maxSkew int
	}{
		{"corrected 3 degrees undone", 3, 3, 3, 0},
		{"uncorrected 1.5 degrees levelled by line slope", 1.5, 0, 3, 0},
		{"residual after a wrong correction", 2.8, 2.5, 3, 0},
		{"upright page left alone", 0, 0, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := skewedTable(tc.skew, tc.corrected)
			var ws []word
			for _, w := range uprightOCRWords(&p) {
				ws = append(ws, word{text: w.Text, box: w.Box, conf: 0.9, page: 1})
			}
			rows := buildRows(1, ws)
			if len(rows) != tc.wantRows {
				t.Fatalf("%d rows, want %d", len(rows), tc.wantRows)
			}
			for _, r := range rows {
				if len(r.words) != 5 || r.text != r.words[0].text+" "+r.words[0].text+" "+r.words[0].text+" "+r.words[0].text+" "+r.words[0].text {
					t.Errorf("row %q mixes table rows", r.text)
				}
			}
		})
	}
	// Without the correction, a 3 degree photo's rows interleave: the
	// test above would fail on the raw boxes.
	p := skewedTable(3, 3)
	var raw []word
	for _, l := range p.Lines {
		for _, w := range l.Words {
			raw = append(raw, word{text: w.Text, box: w.Box, conf: 0.9, page: 1})
		}
	}
	if rows := buildRows(1, raw); len(rows) == 3 && len(rows[0].words) == 5 && rows[0].text == "a a a a a" {
		t.Error("raw skewed boxes already form rows: the fixture does not exercise the correction")
	}
}

func TestOCRDigitLookAlikes(t *testing.T) {
	for in, want := range map[string]string{"@11000015": "011000015", "§03,42": "503,42", "GB6@": "GB6@"} {
		if got, _ := fixOCRNumber(in); got != want {
			t.Errorf("fixOCRNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFixOCRYear(t *testing.T) {
	for in, want := range map[string]string{
		"2626-03-01": "2026-03-01", "15.03.2826": "15.03.2026", "march 3, 2926": "march 3, 2026",
		"2026-03-01": "2026-03-01", "26.06.2026": "26.06.2026", "inv 126260": "inv 126260",
	} {
		if got, _ := fixOCRYear(in); got != want {
			t.Errorf("fixOCRYear(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMonthClosedUpWithItsYear(t *testing.T) {
	dp := newDateParser(testLexicon(t))
	for in, want := range map[string]string{"4 mars.2026": "2026-03-04", "4 mars 2026": "2026-03-04", "12.03.2026": "2026-03-12"} {
		d, err := dp.parse(in, OrderDMY)
		if got := d.t.Format("2006-01-02"); err != nil || got != want {
			t.Errorf("parse(%q) = %s, %v, want %s", in, got, err, want)
		}
	}
}

func TestConfusedDigit(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		valid    func(string) bool
		from     int
	}{
		{"621000021", "021000021", abaValid, 0},                                      // routing, 0 read as 6
		{"611000015", "011000015", abaValid, 0},                                      // routing, 0 read as 6
		{"GB36BARC20006054036865", "GB36BARC20000054036865", ibanValid, 2},           // IBAN, 0 read as 6
		{"DE44500105175467324931", "DE44500105175407324931", ibanValid, 2},           // IBAN, 0 read as 6
		{"FR7630006800011234567890189", "FR7630006000011234567890189", ibanValid, 2}, // 0 read as 8
		{"021000021", "", func(string) bool { return true }, 0},                      // many fit: no guess
		{"GB29NWBK60161331926819", "", func(string) bool { return false }, 2},        // none fits
	} {
		got, ok := confusedDigit(tc.in, tc.from, tc.valid)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("confusedDigit(%q) = %q, %v, want %q", tc.in, got, ok, tc.want)
		}
	}
}

func ocrWords(conf float64, texts ...string) []word {
	var ws []word
	for i, s := range texts {
		ws = append(ws, word{text: s, box: boxAt(72+float64(i)*50, 100, 45), conf: conf, page: 1})
	}
	return ws
}

func TestBankValuesUnderOCR(t *testing.T) {
	x := &run{lx: testLexicon(t)}
	for _, tc := range []struct {
		kind string
		ws   []word
		want string
	}{
		{kindIBAN, ocrWords(0.9, "GB6@", "BARC", "2000", "0055", "7799", "11"), "GB60BARC20000055779911"},
		{kindIBAN, ocrWords(0.9, "GB29", "NWBK", "6016", "1331", "9268.19"), "GB29NWBK60161331926819"},
		{kindIBAN, ocrWords(0.9, "DE44", "5001", "0517", "5407", "3249", "31°"), "DE44500105175407324931"},
		{kindIBAN, ocrWords(0.9, "-DE44500105", "175407324931"), "DE44500105175407324931"},
		{kindIBAN, ocrWords(0.9, "GB36", "BARC", "2000", "6054", "0368", "65"), "GB36BARC20000054036865"},
		{kindIBAN, ocrWords(1, "GB36", "BARC", "2000", "6054", "0368", "65"), "GB36BARC20006054036865"}, // text: as printed
		{kindBIC, ocrWords(0.9, "INGDDEFFXXxX"), "INGDDEFFXXX"},
		{kindBIC, ocrWords(1, "INGDDEFFXXxX"), ""}, // a text layer prints what it prints
		{kindSortCode, ocrWords(0.9, "20-00-", "00"), "20-00-00"},
		{kindRouting, ocrWords(0.9, "621000021"), "021000021"},
		{kindRouting, ocrWords(0.9, "@11000015"), "011000015"},
		{kindRouting, ocrWords(1, "621000021"), "621000021"},
		{kindTaxID, ocrWords(0.9, "NL123456789801"), "NL123456789B01"},
		{kindTaxID, ocrWords(0.9, "0E811234567"), "DE811234567"},
		{kindTaxID, ocrWords(0.9, "DE811234567_"), "DE811234567"},
		{kindTaxID, ocrWords(1, "NL123456789801"), "NL123456789801"},
		{kindID, ocrWords(0.9, "INV~1042"), "INV-1042"},
		{kindID, ocrWords(0.9, "“INV-1010"), "INV-1010"},
		{kindID, ocrWords(1, "INV~1042"), ""},
	} {
		p, ok := x.parseValue(tc.kind, tc.ws)
		if got := p.value; !ok && tc.want != "" || ok && got != tc.want {
			t.Errorf("%s %q: got %q (%v), want %q", tc.kind, joinWords(tc.ws), got, ok, tc.want)
		}
	}
}

func TestLabelsBridgeOCRSpecks(t *testing.T) {
	page := []tx{
		{x: 72, y: 560, text: "Account-No: 31926819", conf: 90},
		{x: 72, y: 574, text: "Routing. Number: 021000021", conf: 90},
		{x: 72, y: 588, text: "Account Numbers 55779911", conf: 90}, // a different word: no label
	}
	d := &extract.Document{Pages: []extract.Page{mkPage(1, extract.MethodOCR, page...)}}
	res := mustExtract(t, d, Options{})
	if got := field(res, result.FieldAccountNumber); got != "31926819" {
		t.Errorf("account %q", got)
	}
	if got := field(res, result.FieldRoutingNumber); got != "021000021" {
		t.Errorf("routing %q", got)
	}
}

func TestInferQty(t *testing.T) {
	amt := func(s string) *amount {
		return &amount{value: decimal.RequireFromString(s), hasSep: true, frac: 2}
	}
	cent := decimal.New(1, -2)
	for _, tc := range []struct{ price, total, want string }{
		{"217.93", "653.79", "3"},
		{"7.99", "27.97", "3.5"},
		{"184.68", "1939.14", "10.5"},
		{"30.00", "100.00", ""}, // no printed quantity multiplies to it
		{"0.25", "1.00", ""},    // prices under 1 leave too many quantities
	} {
		ln := line{price: amt(tc.price), amt: amt(tc.total)}
		inferQty(&ln, cent)
		if ln.qty != tc.want {
			t.Errorf("%s / %s: qty %q, want %q", tc.total, tc.price, ln.qty, tc.want)
		}
		if tc.want != "" && !hasAny(ln.issues, result.IssueOCRCorrected) {
			t.Errorf("%s / %s: inferred quantity not marked", tc.total, tc.price)
		}
	}
	ln := line{qty: "2", price: amt("10.00"), amt: amt("30.00")}
	if inferQty(&ln, cent); ln.qty != "2" {
		t.Errorf("a read quantity was replaced by %q", ln.qty)
	}
}

func TestHarmonizeUnits(t *testing.T) {
	mk := func(us ...string) []line {
		var ls []line
		for _, u := range us {
			ls = append(ls, line{unit: u})
		}
		return ls
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"m", "m", "om"}, []string{"m", "m", "m"}},
		{[]string{"h", "4h", "h"}, []string{"h", "h", "h"}},
		{[]string{"hrs", "ohrs", "hrs"}, []string{"hrs", "hrs", "hrs"}},
		{[]string{"u", "OU", "u"}, []string{"u", "u", "u"}},
		{[]string{"m", "om"}, []string{"m", "om"}},                   // "m" once: nothing to go by
		{[]string{"Stk", "Stk", "St"}, []string{"Stk", "Stk", "St"}}, // no prefix speck
	} {
		ls := mk(tc.in...)
		harmonizeUnits(ls)
		for i := range ls {
			if ls[i].unit != tc.want[i] {
				t.Errorf("%v: line %d unit %q, want %q", tc.in, i, ls[i].unit, tc.want[i])
			}
		}
	}
}

func TestTrimOCRJunk(t *testing.T) {
	for in, want := range map[string]string{
		"‘Schrauben M8 (Pack)": "Schrauben M8 (Pack)", "__Dichtungssatz": "Dichtungssatz",
		"Montagearbeiten:": "Montagearbeiten", "Safety gloves (box)": "Safety gloves (box)", "(Pack)": "(Pack)",
	} {
		if got := trimOCRJunk(in, true); got != want {
			t.Errorf("trimOCRJunk(%q) = %q, want %q", in, got, want)
		}
	}
	if got := trimOCRJunk("Montagearbeiten:", false); got != "Montagearbeiten:" {
		t.Errorf("text layer trimmed to %q", got)
	}
}

func TestOCRCoverSheetGivesNoDate(t *testing.T) {
	cover := []tx{
		{x: 72, y: 80, text: "FAX", size: 28, conf: 95},
		{x: 72, y: 160, text: "From: Acme Corporation", conf: 95},
		{x: 72, y: 180, text: "Date: 03/20/2026", conf: 95},
	}
	inv := usInvoice()
	for i := range inv {
		inv[i].conf = 95
		if inv[i].text == "March 12, 2026" {
			inv[i].text = "Mxrch ?2, 2o2" // the invoice's own date unreadable
		}
	}
	d := &extract.Document{Pages: []extract.Page{mkPage(1, extract.MethodOCR, cover...), mkPage(2, extract.MethodOCR, inv...)}}
	res := mustExtract(t, d, Options{})
	if got := field(res, result.FieldInvoiceDate); got != val(nil) {
		t.Errorf("invoice date %s taken from the fax cover", got)
	}
	if got := field(res, result.FieldVendorName); got != "Acme Corporation" {
		t.Errorf("vendor %q", got)
	}
	// A first page without a cover title is an invoice page like any.
	cover[0].text = "Acme"
	d = &extract.Document{Pages: []extract.Page{mkPage(1, extract.MethodOCR, cover...), mkPage(2, extract.MethodOCR, inv...)}}
	if got := field(mustExtract(t, d, Options{}), result.FieldInvoiceDate); got != "2026-03-20" {
		t.Errorf("invoice date %q from a page that is no cover sheet", got)
	}
}

func TestMisspelledLabelIsNoVendor(t *testing.T) {
	x := &run{lx: testLexicon(t), hits: map[*row][]hit{}}
	for s, want := range map[string]bool{"Rechnungsempfinger:": false, "Globex GmbH": true} {
		r := buildRows(1, ocrWords(0.9, s))[0]
		if got := x.vendorLike(r, r.words); got != want {
			t.Errorf("vendorLike(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestRepairQtyOneDigit: a quantity OCR misread by one digit is the one
// the line's money gives; a text layer's, or one further off, stays as
// printed (the host then flags the mismatch).
func TestRepairQtyOneDigit(t *testing.T) {
	amt := func(s string) *amount {
		return &amount{value: decimal.RequireFromString(s), hasSep: true, frac: 2}
	}
	cent := decimal.New(1, -2)
	ocr := []word{{text: "x", conf: 0.9}}
	for _, tc := range []struct {
		qty, price, total, want string
		words                   []word
	}{
		{"19", "197.40", "1974.00", "10", ocr}, // a slashed 0 read 9
		{"74", "28.00", "196.00", "7", ocr},    // a speck read as a digit
		{"2", "43.10", "301.70", "7", ocr},     // a digit misread
		{"1", "20.45", "184.05", "9", ocr},     // ditto
		{"65", "7.99", "51.94", "6.5", ocr},    // a dropped point (any page)
		{"19", "197.40", "1974.00", "19", nil}, // a text layer's is as printed
		{"25", "10.00", "130.00", "25", ocr},   // two digits off: not a misread
		{"3", "10.00", "30.00", "3", ocr},      // already right
		{"4", "32.60", "130.48", "4", ocr},     // 130.48 / 32.60 is no quantity
	} {
		ln := line{qty: tc.qty, price: amt(tc.price), amt: amt(tc.total), numWords: tc.words}
		repairQty(&ln, cent)
		if ln.qty != tc.want {
			t.Errorf("%s x %s = %s: qty %q, want %q", tc.qty, tc.price, tc.total, ln.qty, tc.want)
		}
		if changed := tc.want != tc.qty; changed != hasAny(ln.issues, result.IssueOCRCorrected) {
			t.Errorf("%s x %s = %s: repair marked %v, want %v", tc.qty, tc.price, tc.total, !changed, changed)
		}
	}
}
