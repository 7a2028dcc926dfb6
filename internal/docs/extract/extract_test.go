package extract

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

func TestExtractRefusesHostileInputs(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	small := flowPDF(t, contractFlow("Page {page} of {pages}"), testdocs.PDFOptions{})
	var corruptPNG bytes.Buffer
	if err := png.Encode(&corruptPNG, image.NewGray(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		file  string
		data  []byte
		opts  Options
		want  string
		quick bool // must be decided without rendering anything
	}{
		{"zero bytes", "empty.pdf", nil, Options{}, docs.CodeUnreadable, true},
		{"html named .pdf", "invoice.pdf", testdocs.NotPDF(), Options{}, docs.CodeUnreadable, true},
		{"gif", "x.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), Options{}, docs.CodeUnreadable, true},
		{"bigtiff", "x.tif", []byte("II+\x00\x08\x00\x00\x00"), Options{}, docs.CodeUnreadable, true},
		{"pdf header only", "h.pdf", []byte("%PDF-1.7\n%garbage\n"), Options{}, docs.CodeUnreadable, true},
		{"truncated at half", "t50.pdf", testdocs.TruncatedPDF(small, 0.5), Options{}, docs.CodeUnreadable, true},
		{"truncated near the end", "t97.pdf", testdocs.TruncatedPDF(small, 0.97), Options{}, docs.CodeUnreadable, true},
		{"user password", "enc.pdf", flowPDF(t, contractFlow(""), testdocs.PDFOptions{UserPassword: "hunter2"}), Options{}, docs.CodeEncrypted, true},
		{"2,000 pages", "many.pdf", testdocs.ManyPagesPDF(2000), Options{}, docs.CodeTooLarge, true},
		{"over MaxPages", "small.pdf", small, Options{MaxPages: 1}, docs.CodeTooLarge, true},
		{"over MaxBytes", "small.pdf", small, Options{MaxBytes: 1000}, docs.CodeTooLarge, true},
		{"image-bomb page box", "bomb.pdf", testdocs.ImageBombPDF(14400, 14400), Options{}, docs.CodeTooLarge, true},
		{"png bomb", "bomb.png", testdocs.BombPNG(100_000, 100_000), Options{}, docs.CodeTooLarge, true},
		{"tiff bomb on page 2", "bomb.tif", testdocs.BombTIFF(100_000, 100_000), Options{}, docs.CodeTooLarge, true},
		{"png cut short", "cut.png", corruptPNG.Bytes()[:corruptPNG.Len()/2], Options{}, docs.CodeUnreadable, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file, tc.data)
			start := time.Now()
			doc, err := extract(t, path, tc.opts)
			if got := code(err); got != tc.want {
				t.Fatalf("code %q (err %v, doc %v), want %q", got, err, doc != nil, tc.want)
			}
			if d := time.Since(start); tc.quick && d > 3*time.Second {
				t.Errorf("took %v: the refusal should come before any rendering", d)
			}
			if strings.Contains(docs.AsError(err).Message, "Northwind") {
				t.Errorf("message quotes the document: %q", docs.AsError(err).Message)
			}
		})
	}
}

func TestExtractTextPDF(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	f := contractFlow("Page {page} of {pages}")
	f.Blocks = append(f.Blocks, testdocs.Block{Text: "Signed for Zoë Ångström of Łódź and Дмитрий Иванов by their authorised representatives."})
	layout, err := testdocs.LayoutFlow(f)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := extract(t, writeFile(t, "c.pdf", flowPDF(t, f, testdocs.PDFOptions{})), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != len(layout.Pages) || doc.OCRPages() != 0 {
		t.Fatalf("%d pages (%d OCR), want %d text pages", len(doc.Pages), doc.OCRPages(), len(layout.Pages))
	}
	for _, p := range doc.Pages {
		if p.Method != MethodText || p.OCRConfidence != -1 || p.Width != 612 || p.Height != 792 {
			t.Errorf("page %d: method %s conf %v size %vx%v", p.Number, p.Method, p.OCRConfidence, p.Width, p.Height)
		}
		for _, l := range p.Lines {
			for _, w := range l.Words {
				if w.Conf != -1 || w.Box.XMin < 0 || w.Box.XMax > p.Width || w.Box.YMin < 0 || w.Box.YMax > p.Height || w.Box.XMin >= w.Box.XMax {
					t.Fatalf("page %d word %+v", p.Number, w)
				}
			}
		}
	}
	all := ""
	for _, p := range doc.Pages {
		all += p.Text() + "\n"
	}
	for _, want := range []string{"Zoë Ångström of Łódź", "Дмитрий Иванов", "Master Services Agreement", "Page 2 of"} {
		if !strings.Contains(all, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if doc.Timings.Probe <= 0 || doc.Timings.Text <= 0 || doc.Timings.OCR != 0 {
		t.Errorf("timings %+v", doc.Timings)
	}
}

func TestExtractJavaScriptPDFIsJustText(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	pdf := testdocs.JavaScriptPDF([]string{"Statement of work for the migration project,", "payable within thirty days of invoice."}, "app.launchURL('https://attacker.example/');")
	doc, err := extract(t, writeFile(t, "js.pdf", pdf), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 1 || doc.Pages[0].Method != MethodText || !strings.Contains(doc.Pages[0].Text(), "payable within thirty days") {
		t.Errorf("pages %+v", doc.Pages)
	}
}

// TestExtractOCR reads one small page per input kind; tesseract is the
// slow part of the suite, so the pages are 4 x 2 inches.
func TestExtractOCR(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext", "pdftoppm", "tesseract")
	two := invoicePage()
	two.Pages = append(two.Pages, two.Pages[0])
	tests := []struct {
		name    string
		file    string
		data    []byte
		opts    Options
		pages   int
		skew    float64 // expected |SkewDegrees| within 0.3
		methods string
	}{
		{"image-only pdf, 200 dpi, 3° skew", "scan.pdf", scan(t, invoicePage(), testdocs.Scan{DPI: 200, Skew: 3, Noise: 0.2, JPEG: 75, Seed: 1}, testdocs.ScanPDF), Options{DPI: 200}, 1, 3, "ocr"},
		{"png at 150 dpi, -2° skew", "scan.png", scan(t, invoicePage(), testdocs.Scan{DPI: 150, Skew: -2, Blur: 1, Seed: 2}, testdocs.ScanPNG), Options{}, 1, -2, "ocr"},
		{"jpeg at 300 dpi, straight", "scan.jpg", scan(t, invoicePage(), testdocs.Scan{DPI: 300, JPEG: 60, Darkness: 0.3, Seed: 3}, testdocs.ScanJPEG), Options{}, 1, 0, "ocr"},
		{"two-page G4 fax tiff", "fax.tif", scan(t, two, testdocs.Scan{DPI: 200, Bilevel: true, Skew: 1.5, Noise: 0.1, Seed: 4}, testdocs.ScanTIFF), Options{}, 2, 1.5, "ocr,ocr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			doc, err := extract(t, writeFile(t, tc.file, tc.data), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d page(s) in %v (OCR %v)", len(doc.Pages), time.Since(start).Round(time.Millisecond), doc.Timings.OCR.Round(time.Millisecond))
			if got := methods(doc); got != tc.methods {
				t.Errorf("methods %s, want %s", got, tc.methods)
			}
			for _, p := range doc.Pages {
				checkInvoiceOCR(t, p, tc.skew)
			}
		})
	}
}

func checkInvoiceOCR(t *testing.T, p Page, skew float64) {
	t.Helper()
	text := p.Text()
	for _, want := range []string{"INV-2041", "Northwind", "1,234.56"} {
		if !strings.Contains(text, want) {
			t.Errorf("page %d lacks %q in %q", p.Number, want, text)
		}
	}
	if math.Abs(p.SkewDegrees-skew) > 0.3 {
		t.Errorf("page %d skew %.2f, want %.1f", p.Number, p.SkewDegrees, skew)
	}
	if p.OCRConfidence < 70 {
		t.Errorf("page %d confidence %.1f", p.Number, p.OCRConfidence)
	}
	if math.Abs(p.Width-288) > 2 || math.Abs(p.Height-144) > 2 {
		t.Errorf("page %d size %.1f x %.1f pt, want 288 x 144", p.Number, p.Width, p.Height)
	}
	for _, l := range p.Lines {
		for _, w := range l.Words {
			if w.Box.XMin < 0 || w.Box.XMax > p.Width+1 || w.Box.YMax > p.Height+1 || w.Conf < 0 || w.Conf > 100 {
				t.Errorf("page %d word %+v out of the page or confidence range", p.Number, w)
			}
		}
	}
}

func methods(d *Document) string {
	m := make([]string, len(d.Pages))
	for i, p := range d.Pages {
		m[i] = p.Method
	}
	return strings.Join(m, ",")
}

// TestExtractMixedPDF: only the page without a text layer is OCRed, and
// ForceOCR OCRs every page.
func TestExtractMixedPDF(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext", "pdftoppm", "tesseract")
	inv := invoicePage()
	fx := testdocs.Fixed{Width: 288, Height: 144, Pages: []testdocs.FixedPage{
		inv.Pages[0],
		{Items: []testdocs.Item{{X: 18, Y: 60, Text: "Page 2", Size: 24}}}, // 5 characters: below MinTextChars
	}}
	path := writeFile(t, "mixed.pdf", fixedPDF(t, fx))
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "text,ocr"},
		{Options{ForceOCR: true, DPI: 150}, "ocr,ocr"},
	} {
		doc, err := extract(t, path, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := methods(doc); got != tc.want {
			t.Errorf("ForceOCR=%v: methods %s, want %s", tc.opts.ForceOCR, got, tc.want)
		}
		if p := doc.Pages[1]; !strings.Contains(p.Text(), "Page 2") || p.Number != 2 {
			t.Errorf("OCR page 2: %q", p.Text())
		}
	}
}

func TestPageDPI(t *testing.T) {
	o := Options{}.withDefaults()
	tests := []struct {
		name    string
		size    pageSize
		opts    Options
		want    int
		refused bool
	}{
		{"letter at the default", pageSize{612, 792}, o, 300, false},
		{"tabloid still fits", pageSize{792, 1224}, o, 300, false},
		{"A0 is lowered", pageSize{2384, 3370}, o, 160, false},
		{"4 m square is refused", pageSize{11339, 11339}, o, 0, true},
		{"PDF maximum is refused", pageSize{14400, 14400}, o, 0, true},
		{"tight limit lowers letter", pageSize{612, 792}, Options{MaxPixelsPerPage: 4_000_000}.withDefaults(), 206, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pageDPI(1, tc.size, tc.opts)
			if tc.refused {
				if code(err) != docs.CodeTooLarge {
					t.Fatalf("got %d, %v; want too_large", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
			px := math.Ceil(tc.size.w*float64(got)/72) * math.Ceil(tc.size.h*float64(got)/72)
			if px > float64(tc.opts.MaxPixelsPerPage) {
				t.Errorf("%d dpi gives %.0f pixels, over the limit", got, px)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		head string
		want kind
	}{
		{"%PDF-1.7\n", kindPDF},
		{strings.Repeat("x", 500) + "%PDF-1.4", kindPDF},
		{strings.Repeat("x", 1100) + "%PDF-1.4", kindUnknown},
		{"\x89PNG\r\n\x1a\n....", kindPNG},
		{"\xFF\xD8\xFF\xE0", kindJPEG},
		{"II*\x00", kindTIFF},
		{"MM\x00*", kindTIFF},
		{"GIF89a", kindUnknown},
		{"", kindUnknown},
	}
	for _, tc := range tests {
		if got := sniff([]byte(tc.head)); got != tc.want {
			t.Errorf("sniff(%.12q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}

func TestImageDPIMetadata(t *testing.T) {
	for _, tc := range []struct {
		format testdocs.ScanFormat
		k      kind
	}{{testdocs.ScanPNG, kindPNG}, {testdocs.ScanJPEG, kindJPEG}} {
		b := scan(t, invoicePage(), testdocs.Scan{DPI: 240}, tc.format)
		if got := imageDPI(tc.k, bytes.NewReader(b)); math.Abs(got-240) > 0.1 {
			t.Errorf("%v: dpi %.2f, want 240", tc.format, got)
		}
	}
	if got := imageDPI(kindPNG, bytes.NewReader(testdocs.BombPNG(10, 10))); got != 0 {
		t.Errorf("png without pHYs: %v", got)
	}
	if trustDPI(0) != assumedDPI || trustDPI(5000) != assumedDPI || trustDPI(150) != 150 {
		t.Error("trustDPI")
	}
}

// TestOCRBoxesAreOnTheOriginalPage: OCR runs on the deskewed image, but
// boxes must locate words on the page as it is, skew included (redaction
// draws them on the original).
func TestOCRBoxesAreOnTheOriginalPage(t *testing.T) {
	needTools(t, "tesseract")
	find := func(skew float64) Box {
		b := scan(t, invoicePage(), testdocs.Scan{DPI: 200, Skew: skew}, testdocs.ScanPNG)
		doc, err := extract(t, writeFile(t, "p.png", b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.Pages[0].Lines {
			for _, w := range l.Words {
				if w.Text == "INV-2041" {
					return w.Box
				}
			}
		}
		t.Fatalf("INV-2041 not read at %v°: %q", skew, doc.Pages[0].Text())
		return Box{}
	}
	straight, skewed := find(0), find(4)
	// Where the straight word's centre lands once the page is turned 4°.
	want := turnBox(Box{XMin: (straight.XMin + straight.XMax) / 2, YMin: (straight.YMin + straight.YMax) / 2,
		XMax: (straight.XMin + straight.XMax) / 2, YMax: (straight.YMin + straight.YMax) / 2}, 4, 144, 72)
	gotX, gotY := (skewed.XMin+skewed.XMax)/2, (skewed.YMin+skewed.YMax)/2
	if math.Abs(gotX-want.XMin) > 2 || math.Abs(gotY-want.YMin) > 2 {
		t.Errorf("skewed word centred at (%.1f, %.1f), want (%.1f, %.1f)", gotX, gotY, want.XMin, want.YMin)
	}
	if skewed.YMax-skewed.YMin <= straight.YMax-straight.YMin {
		t.Errorf("skewed box %+v not taller than straight %+v: it must enclose the turned word", skewed, straight)
	}
}
