package invoice

import (
	"testing"
)

func testLexicon(t *testing.T) *lexicon {
	t.Helper()
	lx, err := parseLexicon("lexicon.yaml", defaultLexicon)
	if err != nil {
		t.Fatal(err)
	}
	return lx
}

func TestParseAmount(t *testing.T) {
	lx := testLexicon(t)
	tests := []struct {
		in          string
		hint        rune
		want        string // decimal value; "" = error
		cur         string
		implausible bool
		corrected   bool
	}{
		{"$1,234.56", 0, "1234.56", "USD", false, false},
		{"1.234,56 €", 0, "1234.56", "EUR", false, false},
		{"1\u00a0234,56 €", 0, "1234.56", "EUR", false, false},
		{"1\u2009234,56\u00a0€", 0, "1234.56", "EUR", false, false},
		{"1 234,56 €", 0, "1234.56", "EUR", false, false},
		{"€ 1.234,56", 0, "1234.56", "EUR", false, false},
		{"£1,234.56", 0, "1234.56", "GBP", false, false},
		{"USD 1,234.56", 0, "1234.56", "USD", false, false},
		{"1,234.56 USD", 0, "1234.56", "USD", false, false},
		{"CHF 1'234.50", 0, "1234.5", "CHF", false, false},
		{"1.234.567,89", 0, "1234567.89", "", false, false},
		{"(1,234.56)", 0, "-1234.56", "", false, false},
		{"-45.00", 0, "-45", "", false, false},
		{"0.50", 0, "0.5", "", false, false},
		{".50", 0, "0.5", "", false, false},
		{"1.234,-", 0, "1234", "", false, false},
		{"900", 0, "900", "", false, false},
		// A three-digit tail decides by the document's format.
		{"1,234", '.', "1234", "", false, false},
		{"1,234", ',', "1.234", "", false, false},
		{"1.234", ',', "1234", "", false, false},
		// OCR confusions in a numeric context.
		{"$1,2O4.56", 0, "1204.56", "USD", false, true},
		{"l,234.5S", 0, "1234.55", "", false, true},
		{"S1,234.56", 0, "1234.56", "USD", false, true},
		{"B00.00", 0, "800", "", false, true},
		// Implausible separators: a value, but never a trusted one.
		{"9.000.00", 0, "9000", "", true, false},
		{"12,34.56", 0, "1234.56", "", true, false},
		{"1,234,56", 0, "1234.56", "", true, false},
		{"1234 56", 0, "123456", "", true, false},
		{"1.23456", 0, "1.23456", "", true, false},
		// Not amounts at all.
		{"INV-1234", 0, "", "", false, false},
		{"20%", 0, "", "", false, false},
		{"USD", 0, "", "", false, false},
		{"1.,5", 0, "", "", false, false},
		{"Total", 0, "", "", false, false},
	}
	for _, tt := range tests {
		a, err := parseAmount(tt.in, tt.hint, lx, true)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parseAmount(%q) = %s, want error", tt.in, a.value)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseAmount(%q): %v", tt.in, err)
			continue
		}
		if a.value.String() != tt.want || a.currency != tt.cur || a.implausible != tt.implausible || a.corrected != tt.corrected {
			t.Errorf("parseAmount(%q, %q) = %s %q implausible=%v corrected=%v; want %s %q %v %v",
				tt.in, tt.hint, a.value, a.currency, a.implausible, a.corrected, tt.want, tt.cur, tt.implausible, tt.corrected)
		}
	}
}

func TestParseAmountAmbiguousWithoutHint(t *testing.T) {
	lx := testLexicon(t)
	a, err := parseAmount("1,234", 0, lx, true)
	if err != nil || !a.ambiguous || a.value.String() != "1234" {
		t.Fatalf("got %+v, %v; want 1234 marked ambiguous", a, err)
	}
	a, err = parseAmount("1,234.00", 0, lx, true)
	if err != nil || a.ambiguous {
		t.Fatalf("1,234.00 marked ambiguous: %+v %v", a, err)
	}
}

func TestFindAmountTakesRightmostAndFlagsLostSeparator(t *testing.T) {
	x := &run{lx: testLexicon(t), decHint: '.'}
	mk := func(ts ...string) []word {
		var ws []word
		xpos := 0.0
		for _, s := range ts {
			ws = append(ws, word{text: s, box: boxAt(xpos, 100, float64(len(s))*5), conf: 1})
			xpos += float64(len(s))*5 + 3
		}
		return ws
	}
	tests := []struct {
		name        string
		words       []string
		want        string
		implausible bool
	}{
		{"rate then amount", []string{"20%", "200.00"}, "200", false},
		{"spaced thousands", []string{"1", "234,56", "€"}, "1234.56", false},
		{"symbol apart", []string{"$", "1,234.56"}, "1234.56", false},
		{"rate as separate digits", []string{"20", "%", "200.00"}, "200", false},
		{"lost separator leaves a digit group", []string{"1234", "56"}, "123456", true},
	}
	for _, tt := range tests {
		a, _, ok := x.findAmount(mk(tt.words...), true)
		if !ok || a.value.String() != tt.want || a.implausible != tt.implausible {
			t.Errorf("%s: got %s ok=%v implausible=%v, want %s %v", tt.name, a.value, ok, a.implausible, tt.want, tt.implausible)
		}
	}
}
