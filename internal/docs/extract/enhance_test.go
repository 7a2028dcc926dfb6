package extract

import (
	"image"
	"testing"
)

// paperImage is a w x h page of paper gray 240.
func paperImage(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 240
	}
	return img
}

func fill(img *image.Gray, x0, y0, x1, y1 int, v uint8) {
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			img.Pix[y*img.Stride+x] = v
		}
	}
}

func TestDespeckleRemovesSpecksKeepsStrokes(t *testing.T) {
	img := paperImage(40, 20)
	img.Pix[5*img.Stride+5] = 30   // a speck
	fill(img, 20, 5, 23, 15, 40)   // a stroke three pixels wide
	img.Pix[10*img.Stride+21] = 20 // its darkest pixel
	fill(img, 30, 10, 32, 12, 60)  // a decimal point, 2 x 2
	out := despeckle(img)
	if v := out.GrayAt(5, 5).Y; v != 240 {
		t.Errorf("speck left at %d", v)
	}
	if v := out.GrayAt(21, 10).Y; v != 40 {
		t.Errorf("stroke core %d, want 40", v)
	}
	for _, p := range [][2]int{{30, 10}, {31, 11}} {
		if v := out.GrayAt(p[0], p[1]).Y; v != 60 {
			t.Errorf("decimal point pixel %v is %d, want 60", p, v)
		}
	}
}

func TestMarkFaint(t *testing.T) {
	img := paperImage(200, 100)
	p := Page{Method: MethodOCR}
	var words []Word
	for i := range 6 {
		x := 10 + i*30
		fill(img, x, 10, x+20, 20, 60)
		words = append(words, Word{Text: "dark", Box: Box{XMin: float64(x), YMin: 10, XMax: float64(x + 20), YMax: 20}, Conf: 95})
	}
	fill(img, 10, 50, 60, 60, 195) // light gray print
	words = append(words, Word{Text: "9,000.00", Box: Box{XMin: 10, YMin: 50, XMax: 60, YMax: 60}, Conf: 93})
	p.Lines = []Line{{Words: words}}
	markFaint(&p, img, 1)
	for _, w := range p.Lines[0].Words {
		if want := w.Text != "dark"; w.Faint != want {
			t.Errorf("%q: faint %v, want %v", w.Text, w.Faint, want)
		}
	}
	// A bilevel page (a fax) has no gray to measure.
	bw := paperImage(200, 100)
	for i := range bw.Pix {
		bw.Pix[i] = 255
	}
	fill(bw, 10, 10, 60, 20, 0)
	p.Lines[0].Words[6].Faint = false
	markFaint(&p, bw, 1)
	for _, w := range p.Lines[0].Words {
		if w.Faint {
			t.Errorf("bilevel page: %q marked faint", w.Text)
		}
	}
}

// TestFaintRegions: light gray print no word covers is found; print a
// word covers, and scattered specks, are not.
func TestFaintRegions(t *testing.T) {
	img := paperImage(400, 200)
	p := Page{Method: MethodOCR}
	var words []Word
	for i := range 6 {
		x := 10 + i*60
		for k := 0; k < 40; k += 4 { // strokes of dark print
			fill(img, x+k, 10, x+k+2, 24, 60)
		}
		words = append(words, Word{Text: "dark", Box: Box{XMin: float64(x), YMin: 10, XMax: float64(x + 40), YMax: 24}, Conf: 95})
	}
	p.Lines = []Line{{Words: words}}
	for k := 0; k < 80; k += 4 { // a line of light gray print, no word
		fill(img, 200+k, 100, 200+k+2, 114, 185)
	}
	for _, pt := range [][2]int{{50, 150}, {53, 154}, {120, 170}} { // specks
		img.Pix[pt[1]*img.Stride+pt[0]] = 200
	}
	paper, typical := pageContrast(&p, img, 1)
	rs := faintRegions(&p, img, 1, paper, typical)
	if len(rs) != 1 {
		t.Fatalf("regions %v, want one", rs)
	}
	if r := rs[0]; r.Min.X > 200 || r.Max.X < 278 || r.Min.Y > 100 || r.Max.Y < 114 {
		t.Errorf("region %v does not cover the faint print", r)
	}
	s := stretch(img, rs[0], paper)
	if v := s.GrayAt(201-rs[0].Min.X, 105-rs[0].Min.Y).Y; v > 10 {
		t.Errorf("stretched faint ink %d, want black", v)
	}
	if v := s.GrayAt(0, 0).Y; v < 245 {
		t.Errorf("stretched paper %d, want white", v)
	}
}
