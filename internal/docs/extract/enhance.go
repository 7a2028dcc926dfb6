package extract

import (
	"image"
	"math"
	"slices"
)

// despeckle removes the single-pixel dark specks of a scan or photo
// (sensor and paper noise, JPEG ringing) before OCR: a pixel darker than
// all eight of its neighbours takes the darkest neighbour's value. A speck
// becomes the paper around it; the darkest pixel of a stroke becomes
// (nearly) as dark as the stroke beside it, so text, decimal points
// included, is untouched. Tesseract reads a speck beside a word as part
// of it ("$4,886.29." at confidence 23), which makes a rightly read amount
// look doubtful. Edge pixels are kept as they are.
func despeckle(img *image.Gray) *image.Gray {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		copy(out.Pix[y*out.Stride:y*out.Stride+w], img.Pix[y*img.Stride:y*img.Stride+w])
	}
	s := img.Stride
	around := [8]int{-s - 1, -s, -s + 1, -1, 1, s - 1, s, s + 1}
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*s + x
			m := uint8(255)
			for _, d := range around {
				m = min(m, img.Pix[i+d])
			}
			if img.Pix[i] < m {
				out.Pix[y*out.Stride+x] = m
			}
		}
	}
	if b.Min != (image.Point{}) {
		out.Rect = b
	}
	return out
}

// Faint print: a word whose ink is much lighter than the page's text.
const (
	// faintShare: a word whose contrast with the paper is below this
	// share of the page's typical word contrast is faint.
	faintShare = 0.55
	// inkPercentile is how much of a word's box must be at least as dark
	// as the level taken for its ink (the stroke cores, not a speck).
	inkPercentile = 0.05
	// minWordsForFaint: with fewer words on a page there is no typical
	// contrast to compare with.
	minWordsForFaint = 5
)

// markFaint sets Faint on the words of p whose ink is much lighter than
// the page's typical word ("printed too faintly"): tesseract can read a
// light gray total with high confidence, and whoever relies on the words
// must know the print itself was doubtful. img is the image tesseract
// read, scale its pixels per point. Bilevel pages (faxes) have no gray to
// measure and are left alone.
func markFaint(p *Page, img *image.Gray, scale float64) {
	paper := paperLevel(img)
	if paper == 0 {
		return
	}
	type ref struct{ line, word int }
	var refs []ref
	var contrast []float64
	for li := range p.Lines {
		for wi, w := range p.Lines[li].Words {
			ink, ok := inkLevel(img, w.Box, scale)
			if !ok {
				continue
			}
			refs = append(refs, ref{li, wi})
			contrast = append(contrast, (float64(paper)-float64(ink))/float64(paper))
		}
	}
	if len(contrast) < minWordsForFaint {
		return
	}
	sorted := slices.Clone(contrast)
	slices.Sort(sorted)
	typical := sorted[len(sorted)/2]
	if typical <= 0 {
		return
	}
	for k, r := range refs {
		if contrast[k] < faintShare*typical {
			p.Lines[r.line].Words[r.word].Faint = true
		}
	}
}

// paperLevel is the page's background gray: its median pixel (a page is
// mostly paper). 0 for a bilevel or empty image.
func paperLevel(img *image.Gray) uint8 {
	var hist [256]int
	b := img.Bounds()
	for y := range b.Dy() {
		for _, v := range img.Pix[y*img.Stride : y*img.Stride+b.Dx()] {
			hist[v]++
		}
	}
	levels, n, half := 0, 0, b.Dx()*b.Dy()/2
	paper := -1
	for v, c := range hist {
		if c > 0 {
			levels++
		}
		n += c
		if paper < 0 && n > half {
			paper = v
		}
	}
	if levels <= 2 || paper <= 0 {
		return 0
	}
	return uint8(paper)
}

// inkLevel is the gray of a word's ink: the level its darkest
// inkPercentile of pixels reach, inside its box (in points, scaled to
// pixels).
func inkLevel(img *image.Gray, box Box, scale float64) (uint8, bool) {
	b := img.Bounds()
	x0, y0 := max(int(math.Floor(box.XMin*scale)), 0), max(int(math.Floor(box.YMin*scale)), 0)
	x1, y1 := min(int(math.Ceil(box.XMax*scale)), b.Dx()), min(int(math.Ceil(box.YMax*scale)), b.Dy())
	if x1-x0 < 2 || y1-y0 < 2 {
		return 0, false
	}
	var hist [256]int
	for y := y0; y < y1; y++ {
		for _, v := range img.Pix[y*img.Stride+x0 : y*img.Stride+x1] {
			hist[v]++
		}
	}
	want := max(1, int(float64((x1-x0)*(y1-y0))*inkPercentile))
	n := 0
	for v, c := range hist {
		n += c
		if n >= want {
			return uint8(v), true
		}
	}
	return 255, true
}
