package extract

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// A block of dark print with no word of the first pass is found; a faint
// line (the faint pass's), a single dark line and scattered specks are
// not.
func TestMissedRegions(t *testing.T) {
	img := paperImage(600, 400)
	p := Page{Method: MethodOCR}
	var words []Word
	for i := range 6 { // the words the first pass read
		x := 10 + i*60
		for k := 0; k < 40; k += 4 {
			fill(img, x+k, 10, x+k+2, 24, 60)
		}
		words = append(words, Word{Text: "dark", Box: Box{XMin: float64(x), YMin: 10, XMax: float64(x + 40), YMax: 24}, Conf: 95})
	}
	p.Lines = []Line{{Words: words}}
	for line := range 4 { // a block of four lines of dark print, no word
		y := 80 + line*18
		for k := 0; k < 240; k += 4 {
			fill(img, 100+k, y, 100+k+2, y+14, 60)
		}
	}
	for k := 0; k < 200; k += 4 { // one dark line, no word
		fill(img, 100+k, 250, 100+k+2, 264, 60)
	}
	for k := 0; k < 200; k += 4 { // a block of faint print
		for line := range 3 {
			fill(img, 350+k/2, 300+line*18, 350+k/2+2, 314+line*18, 185)
		}
	}
	for _, pt := range [][2]int{{50, 350}, {53, 354}, {520, 370}} {
		img.Pix[pt[1]*img.Stride+pt[0]] = 60
	}
	paper, typical := pageContrast(&p, img, 1)
	rs := missedRegions(&p, img, 1, paper, typical)
	if len(rs) != 1 {
		t.Fatalf("regions %v, want one", rs)
	}
	if r := rs[0]; r.Min.X > 100 || r.Max.X < 338 || r.Min.Y > 80 || r.Max.Y < 148 || r.Max.Y > 200 {
		t.Errorf("region %v does not hold the dark block alone", r)
	}
}

// A block the first pass dropped is read again (real tesseract): the
// lines of a page whose lower half tesseract's result lost come back, and
// a page the first pass read whole gets no second read.
func TestReadMissedReadsDroppedBlock(t *testing.T) {
	needTools(t, "tesseract")
	pages, err := testdocs.ScanPages(textPage(), testdocs.Scan{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	img := pages[0]
	o := Options{}.withDefaults()
	ctx := context.Background()
	dir := t.TempDir()
	file := dir + "/page.pgm"
	if err := writePGM(file, img); err != nil {
		t.Fatal(err)
	}
	p, err := tesseract(ctx, file, 200, 1, "3", o)
	if err != nil {
		t.Fatal(err)
	}
	whole := len(p.Lines)
	if err := readMissed(ctx, &p, img, 200, 1, dir, o); err != nil {
		t.Fatal(err)
	}
	if len(p.Lines) != whole {
		t.Fatalf("a page read whole gained %d lines", len(p.Lines)-whole)
	}
	// Drop the lines below the middle, as tesseract's layout analysis
	// drops a block on a noisy page.
	kept := p.Lines[:0]
	for _, l := range p.Lines {
		if l.Box.YMin < 165 {
			kept = append(kept, l)
		}
	}
	p.Lines = kept
	if err := readMissed(ctx, &p, img, 200, 1, dir, o); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, l := range p.Lines {
		text.WriteString(l.Text + "\n")
	}
	for i := 8; i < 12; i++ {
		if want := fmt.Sprintf("Clause %d shall survive termination.", i); !strings.Contains(text.String(), want) {
			t.Errorf("%q not read again; page text:\n%s", want, text.String())
		}
	}
}
