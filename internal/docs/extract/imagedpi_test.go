package extract

import (
	"context"
	"os"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// imageListOutput is pdfimages -list as poppler 22 prints it.
const imageListOutput = `page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio
--------------------------------------------------------------------------------------------
   1     0 image    1700  2200  gray    1   8  image  no        17  0   200   200 1453K  40%
   2     1 image    1275  1650  gray    1   8  image  no        13  0   150   150 1517K  42%
   3     2 image     850  1100  gray    1   8  image  no        14  0   100   100  317K  42%
   4     3 image    5100  6600  gray    1   8  image  no        15  0   600   600 9317K  42%
   5     4 image     200    80  rgb     3   8  jpeg   no        16  0   300   300   12K  10%
   6     5 image    1700  2200  gray    1   8  image  no        18  0   200   200 1453K  40%
   6     6 smask    1700  2200  gray    1   8  image  no        19  0   200   200   10K   1%
   7     7 image    1700  2200  gray    1   8  image  no        20  0   200   200 1453K  40%
   7     8 image    1700  2200  gray    1   8  image  no        21  0   200   200 1453K  40%
   8     9 stencil  1700  2200  -       1   1  ccitt  no        22  0   200   200   40K   1%
   9    10 image    2200  1700  gray    1   8  image  no        23  0   200   200 1453K  40%
  10    11 image    1700  2200  gray    1   8  image  no        24  0   198   202 1453K  40%
garbage row that is not an image
`

func TestChooseScanDPIs(t *testing.T) {
	letter := pageSize{612, 792}
	sizes := make([]pageSize, 11)
	for i := range sizes {
		sizes[i] = letter
	}
	sizes[8] = pageSize{612, 792} // page 9: image listed turned (a /Rotate page)
	got := chooseScanDPIs(parseImageList([]byte(imageListOutput)), sizes, Options{}.withDefaults())
	tests := []struct {
		page int // 1-based
		want int // 0: not a scanned page, rasterise at the configured DPI
		why  string
	}{
		{1, 200, "a 200 dpi scan"},
		{2, 150, "a 150 dpi scan"},
		{3, 150, "a 100 dpi fax is still read at 150"},
		{4, 300, "a 600 dpi scan is read at the configured 300"},
		{5, 0, "a logo is not the page"},
		{6, 200, "a soft mask beside the image does not count"},
		{7, 0, "two page-sized images: not one scan"},
		{8, 200, "a bilevel stencil scan"},
		{9, 200, "the image of a turned page"},
		{10, 198, "ppi differing by axis: the lower"},
		{11, 0, "no image at all"},
	}
	for _, tc := range tests {
		if d, ok := got[tc.page-1]; d != tc.want || ok != (tc.want != 0) {
			t.Errorf("page %d (%s): dpi %d (listed %v), want %d", tc.page, tc.why, d, ok, tc.want)
		}
	}
}

func TestScanDPIClampsToOptions(t *testing.T) {
	im := pageImage{page: 1, kind: "image", width: 1700, height: 2200, xppi: 200, yppi: 200}
	tests := []struct {
		opts Options
		want int
	}{
		{Options{}, 200},
		{Options{DPI: 180}, 180},              // never above the configured DPI
		{Options{MinDPI: 250, DPI: 300}, 250}, // never below the configured minimum
		{Options{DPI: 120, MinDPI: 100}, 120}, // a configured DPI under 150 wins
	}
	for _, tc := range tests {
		if got, ok := scanDPI(im, pageSize{612, 792}, tc.opts.withDefaults()); !ok || got != tc.want {
			t.Errorf("%+v: %d %v, want %d", tc.opts, got, ok, tc.want)
		}
	}
}

// TestExtractReadsScansAtTheirResolution: an image-only page is
// rasterised at its image's resolution, a page with a text layer forced
// through OCR at the configured DPI.
func TestExtractReadsScansAtTheirResolution(t *testing.T) {
	needTools(t, "pdfinfo", "pdfimages")
	tests := []struct {
		name string
		pdf  []byte
		want int
	}{
		{"150 dpi scan", scan(t, invoicePage(), testdocs.Scan{DPI: 150}, testdocs.ScanPDF), 150},
		{"240 dpi scan", scan(t, invoicePage(), testdocs.Scan{DPI: 240}, testdocs.ScanPDF), 240},
		{"text page", fixedPDF(t, invoicePage()), DefaultDPI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{ForceOCR: true}.withDefaults()
			in, err := openInput(writeFile(t, "p.pdf", tc.pdf), o)
			if err != nil {
				t.Fatal(err)
			}
			info, err := probePDF(context.Background(), in, o)
			if err != nil {
				t.Fatal(err)
			}
			x := &extraction{in: in, o: o, tmp: os.TempDir(), doc: &Document{}}
			dpis, err := x.ocrDPIs(context.Background(), info, []int{0})
			if err != nil || dpis[0] != tc.want {
				t.Errorf("dpi %v, %v; want %d", dpis, err, tc.want)
			}
		})
	}
}
