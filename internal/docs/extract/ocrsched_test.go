package extract

import (
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

func TestPickLanguage(t *testing.T) {
	cands := []string{"eng", "deu", "fra", "nld"}
	for _, c := range []struct {
		text, want string
	}{
		{"Invoice number 2041. Please pay the total amount due by the date below, with the reference of this invoice.", "eng"},
		{"Rechnung Nr. 2041. Bitte zahlen Sie den Gesamtbetrag bis zum Datum, mit der Rechnungsnummer und dem Betrag für die Zahlung.", "deu"},
		{"Facture n° 2041. Merci de régler le montant total avant la date, avec la référence de la facture pour le paiement.", "fra"},
		{"Factuur nr. 2041. Gelieve het totaal bedrag te betalen voor de datum, met het nummer van de factuur bij de betaling.", "nld"},
		{"2041 14.03.2026 1.234,56 EUR", "eng+deu+fra+nld"}, // no words: every model
		{"the und le het", "eng+deu+fra+nld"},                                 // no language stands out
		{"Rechnung total amount der die das und Zahlung Betrag", "deu"},       // mostly German
		{"THE AND OF TO FOR WITH INVOICE TOTAL AMOUNT", "eng"},                // case does not matter
		{"Für die Zahlung gilt: Zahlbar innerhalb von 30 Tagen netto", "deu"}, // umlauts fold
	} {
		if got := pickLanguage(c.text, cands); got != c.want {
			t.Errorf("pickLanguage(%.40q) = %s, want %s", c.text, got, c.want)
		}
	}
}

func TestOCRLangOptions(t *testing.T) {
	for in, want := range map[string][2]string{
		"":            {"eng", ""},
		"deu":         {"deu", ""},
		"eng+deu":     {"eng+deu", ""},
		"eng,deu,fra": {"eng+deu+fra", "eng,deu,fra"}, // every candidate until chosen
		"deu,":        {"deu", ""},
	} {
		o := Options{OCRLang: in}.withDefaults()
		if o.OCRLang != want[0] || strings.Join(o.OCRLangChoice, ",") != want[1] {
			t.Errorf("OCRLang %q: %q %v, want %q %q", in, o.OCRLang, o.OCRLangChoice, want[0], want[1])
		}
	}
}

// A page that runs out of its OCR time is a timeout naming the page and
// the flag that raises the limit; pages OCRed in parallel read the same as
// one at a time, and each page's time is reported.
func TestOCRPagesTimeoutAndWorkers(t *testing.T) {
	needTools(t, "pdfinfo", "pdftoppm", "tesseract")
	two := invoicePage()
	two.Pages = append(two.Pages, two.Pages[0])
	path := writeFile(t, "scan.pdf", scan(t, two, testdocs.Scan{DPI: 150, Seed: 7}, testdocs.ScanPDF))

	_, err := extract(t, path, Options{PageTimeout: time.Millisecond, OCRWorkers: 1})
	if code(err) != docs.CodeTimeout || !strings.Contains(err.Error(), "page 1") || !strings.Contains(err.Error(), "--page-timeout") {
		t.Fatalf("a page over its limit: %v, want a timeout naming page 1 and --page-timeout", err)
	}
	one, err := extract(t, path, Options{OCRWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	par, err := extract(t, path, Options{OCRWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range one.Pages {
		if one.Pages[i].Text() != par.Pages[i].Text() || one.Pages[i].Number != i+1 || par.Pages[i].Number != i+1 {
			t.Errorf("page %d: one worker read %q, two read %q", i+1, one.Pages[i].Text(), par.Pages[i].Text())
		}
	}
	if len(par.PageOCR) != 2 || par.PageOCR[0] <= 0 || par.PageOCR[1] <= 0 || par.OCRLang != "eng" {
		t.Errorf("page times %v, language %q", par.PageOCR, par.OCRLang)
	}
}

// With a choice of models the first page picks one, and the document is
// read with it.
func TestOCRChoosesLanguage(t *testing.T) {
	needTools(t, "pdfinfo", "pdftoppm", "tesseract")
	de := testdocs.Fixed{Width: 420, Height: 300, Pages: []testdocs.FixedPage{{Items: []testdocs.Item{
		{X: 18, Y: 40, Text: "Rechnung Nr. 2041", Size: 14, Bold: true},
		{X: 18, Y: 90, Text: "Bitte zahlen Sie den Betrag bis zum Datum", Size: 12},
		{X: 18, Y: 110, Text: "mit der Nummer der Rechnung und dem Datum", Size: 12},
		{X: 18, Y: 130, Text: "Die Zahlung ist fällig und wird von der Bank", Size: 12},
		{X: 18, Y: 150, Text: "auf das Konto der Firma gebucht.", Size: 12},
		{X: 18, Y: 250, Text: "Gesamtbetrag: 1.234,56 EUR", Size: 12},
	}}}}
	path := writeFile(t, "rechnung.pdf", scan(t, de, testdocs.Scan{DPI: 200, Seed: 3}, testdocs.ScanPDF))
	doc, err := extract(t, path, Options{OCRLang: "eng,deu,fra,nld"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.OCRLang != "deu" || doc.Timings.LangDetect <= 0 {
		t.Errorf("read with %q (choice took %v), want deu", doc.OCRLang, doc.Timings.LangDetect)
	}
	if !strings.Contains(doc.Pages[0].Text(), "fällig") {
		t.Errorf("the German model did not read the umlaut: %q", doc.Pages[0].Text())
	}
}
