package verify

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/verify/result"
)

// page is a one-page document of lines of words, all read with the given
// method and confidence.
func page(method string, conf float64, lines ...string) *extract.Document {
	p := extract.Page{Number: 1, Method: method}
	for _, l := range lines {
		var ws []extract.Word
		for _, w := range strings.Fields(l) {
			ws = append(ws, extract.Word{Text: w, Conf: conf})
		}
		p.Lines = append(p.Lines, extract.Line{Text: l, Words: ws})
	}
	return &extract.Document{Pages: []extract.Page{p}}
}

// TestCheckPagesOCR: what OCR does to a redacted page and to a leak. The
// same lines are checked as OCR output and as a text layer: the OCR
// allowances must apply to OCR pages only.
func TestCheckPagesOCR(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lines    []string
		conf     float64
		ocr, txt string // type found on an OCR page, on a text page ("" = clean)
	}{
		{"box edge read as a word", []string{"Borrower: Po", "Cardholder: Cad:"}, 41, "", "PERSON"},
		{"box edge read as garble", []string{"Cardholder: Ca(]:"}, 0, "", "PERSON"},
		{"faint card groups still count", []string{"Card: 4111 1111 1111 1111"}, 41, "CREDIT_CARD", "CREDIT_CARD"},
		{"a clear name is read", []string{"Borrower: Tavi Rennick"}, 95, "PERSON", "PERSON"},
		{"look-alike in a year", []string{"date of birth as January 7, 199@ and"}, 95, "DATE_OF_BIRTH", ""},
		{"look-alike in an SSN", []string{"SSN 5O4-22-2846"}, 95, "US_SSN", ""},
		{"address split by OCR", []string{"by e-mail at smensah@ mail.", "example.org. Our records"}, 95, "EMAIL", ""},
		{"at read as a symbol", []string{"hiroshi_lopez98 « clinic.health"}, 95, "EMAIL", ""},
		{"company and domain", []string{"Acme Ltd & example.com"}, 95, "", ""},
		{"IBAN with a digit lost", []string{"IBAN: AT52 701 2337 0914 8013"}, 95, "IBAN", ""},
		{"page number", []string{"Statement period Page lof1l Branch 816"}, 95, "", ""},
	} {
		for _, m := range []struct{ method, want string }{{extract.MethodOCR, tc.ocr}, {extract.MethodText, tc.txt}} {
			rep := CheckPages(page(m.method, tc.conf, tc.lines...))
			if err := rep.Validate(); err != nil {
				t.Fatalf("%s/%s: %v", tc.name, m.method, err)
			}
			got := ""
			for _, f := range rep.Findings {
				if got == "" || f.Type == m.want {
					got = f.Type
				}
			}
			if got != m.want || m.want == "" && rep.Verdict != result.Clean {
				t.Errorf("%s on a %s page: found %q, want %q (%v)", tc.name, m.method, got, m.want, rep.Reasons)
			}
		}
	}
}
