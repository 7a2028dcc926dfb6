package invoice

import "testing"

func TestParseDate(t *testing.T) {
	dp := newDateParser(testLexicon(t))
	tests := []struct {
		in        string
		order     DateOrder
		want      string // "" = no date
		ambiguous bool
	}{
		{"2026-03-12", OrderUnknown, "2026-03-12", false},
		{"12.03.2026", OrderMDY, "2026-03-12", false}, // dots are day-first everywhere
		{"12-03-2026", OrderDMY, "2026-03-12", true},
		{"12-03-2026", OrderMDY, "2026-12-03", true},
		{"03/12/2026", OrderDMY, "2026-12-03", true},
		{"03/12/2026", OrderMDY, "2026-03-12", true},
		{"25/03/2026", OrderMDY, "2026-03-25", false}, // the digits decide
		{"03/25/2026", OrderDMY, "2026-03-25", false},
		{"03/03/2026", OrderUnknown, "2026-03-03", false},
		{"12/03/26", OrderDMY, "2026-03-12", true},
		{"March 12, 2026", OrderUnknown, "2026-03-12", false},
		{"Mar. 12 2026", OrderUnknown, "2026-03-12", false},
		{"12 March 2026", OrderUnknown, "2026-03-12", false},
		{"12th March, 2026", OrderUnknown, "2026-03-12", false},
		{"12. März 2026", OrderUnknown, "2026-03-12", false},
		{"1er mars 2026", OrderUnknown, "2026-03-01", false},
		{"12 maart 2026", OrderUnknown, "2026-03-12", false},
		{"3 févr. 2026", OrderUnknown, "2026-02-03", false},
		{"Date: 2O26-O3-l2", OrderUnknown, "2026-03-12", false}, // OCR letters
		// Near misses.
		{"31.02.2026", OrderUnknown, "", false},
		{"12.03-2026", OrderUnknown, "", false},
		{"INV-2026-0042", OrderUnknown, "", false},
		{"13/13/2026", OrderUnknown, "", false},
		{"Marchant 12 2026", OrderUnknown, "", false},
		{"1,234.56", OrderUnknown, "", false},
	}
	for _, tt := range tests {
		d, err := dp.parse(tt.in, tt.order)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parse(%q) = %s, want no date", tt.in, d.t.Format("2006-01-02"))
			}
			continue
		}
		if err != nil {
			t.Errorf("parse(%q): %v", tt.in, err)
			continue
		}
		if got := d.t.Format("2006-01-02"); got != tt.want || d.ambiguous != tt.ambiguous {
			t.Errorf("parse(%q, %v) = %s ambiguous=%v, want %s %v", tt.in, tt.order, got, d.ambiguous, tt.want, tt.ambiguous)
		}
	}
}

func TestUnambiguousOrder(t *testing.T) {
	dp := newDateParser(testLexicon(t))
	tests := []struct {
		text string
		want DateOrder
	}{
		{"Date 03/04/2026 Due 25/04/2026", OrderDMY},
		{"Date 03/04/2026 Due 04/25/2026", OrderMDY},
		{"Date 03/04/2026 Due 04/05/2026", OrderUnknown},
		{"Date 25.04.2026", OrderUnknown}, // dots say nothing about slashes
	}
	for _, tt := range tests {
		if got := dp.unambiguousOrder(tt.text); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestFixOCRDayMonth(t *testing.T) {
	for in, want := range map[string]string{
		"15.83.2026": "15.03.2026",
		"14-93-2026": "14-03-2026",
		"83-15-2026": "03-15-2026",
		"2026-63-14": "2026-03-14",
		"15.03.2026": "15.03.2026",
		"28/02/2026": "28/02/2026",
	} {
		if got, _ := fixOCRDayMonth(in); got != want {
			t.Errorf("fixOCRDayMonth(%q) = %q, want %q", in, got, want)
		}
	}
}
