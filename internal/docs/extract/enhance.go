package extract

import (
	"context"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
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
	paper, typical := pageContrast(p, img, scale)
	if typical <= 0 {
		return
	}
	for li := range p.Lines {
		for wi, w := range p.Lines[li].Words {
			if ink, ok := inkLevel(img, w.Box, scale); ok && contrast(paper, ink) < faintShare*typical {
				p.Lines[li].Words[wi].Faint = true
			}
		}
	}
}

// pageContrast returns the page's paper level and the typical (median)
// contrast of its words' ink with it; typical is 0 when there is nothing
// to measure (a bilevel page, too few words).
func pageContrast(p *Page, img *image.Gray, scale float64) (paper uint8, typical float64) {
	paper = paperLevel(img)
	if paper == 0 {
		return 0, 0
	}
	var cs []float64
	for _, l := range p.Lines {
		for _, w := range l.Words {
			if ink, ok := inkLevel(img, w.Box, scale); ok {
				cs = append(cs, contrast(paper, ink))
			}
		}
	}
	if len(cs) < minWordsForFaint {
		return paper, 0
	}
	slices.Sort(cs)
	return paper, max(cs[len(cs)/2], 0)
}

// contrast is how much darker than the paper ink is, as a share of the
// paper's level.
func contrast(paper, ink uint8) float64 {
	return (float64(paper) - float64(ink)) / float64(paper)
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

// The faint pass: print too light for tesseract's binarisation to keep
// is looked for where the first pass found no word, and read again with
// its contrast stretched.
const (
	// faintCell is the side, in pixels, of the cells ink is counted in.
	faintCell = 8
	// faintCellInk is how many pixels of a cell must be ink for the cell
	// to hold print rather than a speck.
	faintCellInk = 6
	// minInkContrast is the least contrast with the paper that counts as
	// ink at all (paper texture and JPEG noise stay below it).
	minInkContrast = 0.08
	// faintFloor: a region whose ink (its darkest few pixels) is lighter
	// than this share of the page's typical contrast is scattered specks
	// and paper texture, not print (measured: specks 0.01-0.11, a total
	// printed at 75% gray 0.30).
	faintFloor = 0.2
	// maxFaintRegions bounds the extra tesseract runs per page.
	maxFaintRegions = 8
)

// readFaint finds the regions of p's image that hold ink much lighter
// than the page's text and no word of the first pass, reads each with
// its contrast stretched (tesseract, one line), and adds the words found
// to p marked Faint. A light gray total is otherwise never seen at all;
// seen and marked, whoever relies on it knows it was printed faintly.
func readFaint(ctx context.Context, p *Page, img *image.Gray, dpi float64, n int, tmp string, o Options) error {
	scale := dpi / 72
	paper, typical := pageContrast(p, img, scale)
	if typical <= 0 {
		return nil
	}
	for k, r := range faintRegions(p, img, scale, paper, typical) {
		file := filepath.Join(tmp, fmt.Sprintf("page-%d-faint-%d.pgm", n, k))
		if err := readRegion(ctx, p, stretch(img, r, paper), r, dpi, n, file, o, regionRead{psm: "7", faint: true, minConf: math.Inf(-1)}); err != nil {
			return err
		}
	}
	return nil
}

// regionRead says how readRegion reads a region: tesseract's page
// segmentation mode, whether the words are marked Faint, and the least
// mean confidence of a line kept.
type regionRead struct {
	psm     string
	faint   bool
	minConf float64
}

// readRegion reads crop, region r of the page image, with tesseract
// (through file) and adds the lines found to p with their boxes moved onto
// the page: words without a letter or digit are dropped, and lines whose
// words' mean confidence is below how.minConf.
func readRegion(ctx context.Context, p *Page, crop *image.Gray, r image.Rectangle, dpi float64, n int, file string, o Options, how regionRead) error {
	if err := writePGM(file, crop); err != nil {
		return err
	}
	rp, err := tesseract(ctx, file, dpi, n, how.psm, o)
	os.Remove(file)
	if err != nil {
		return err
	}
	scale := dpi / 72
	dx, dy := float64(r.Min.X)/scale, float64(r.Min.Y)/scale
	for _, l := range rp.Lines {
		var ws []Word
		sum := 0.0
		for _, w := range l.Words {
			if !strings.ContainsFunc(w.Text, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
				continue
			}
			w.Box = Box{XMin: round3(w.Box.XMin + dx), YMin: round3(w.Box.YMin + dy), XMax: round3(w.Box.XMax + dx), YMax: round3(w.Box.YMax + dy)}
			w.Faint = how.faint
			ws = append(ws, w)
			sum += w.Conf
		}
		if len(ws) == 0 || sum/float64(len(ws)) < how.minConf {
			continue
		}
		nl := Line{Words: ws, Box: ws[0].Box}
		for _, w := range ws[1:] {
			nl.Box = union(nl.Box, w.Box)
		}
		nl.Text = joinWords(ws)
		p.Lines = append(p.Lines, nl)
	}
	return nil
}

// faintRegions returns, in pixels, the line-shaped regions of faint ink
// outside the words p already has: cells of faintCell pixels with enough
// ink, joined along the line across gaps of up to two cells, kept when
// the region's ink is much lighter than the page's words.
func faintRegions(p *Page, img *image.Gray, scale float64, paper uint8, typical float64) []image.Rectangle {
	g, ok := newCellGrid(img)
	if !ok {
		return nil
	}
	g.markInk(img, g.coveredByWords(p, scale), uint8(float64(paper)*(1-minInkContrast)))
	var out []image.Rectangle
	for _, r := range g.components() {
		px, ok := faintLine(img, r, scale, paper, typical)
		if !ok {
			continue
		}
		out = append(out, px)
		if len(out) == maxFaintRegions {
			break
		}
	}
	return out
}

// cellGrid is a page cut into faintCell-pixel cells.
type cellGrid struct {
	cw, ch int
	inky   []bool // the cell holds enough ink outside any known word
}

func newCellGrid(img *image.Gray) (*cellGrid, bool) {
	b := img.Bounds()
	g := &cellGrid{cw: b.Dx() / faintCell, ch: b.Dy() / faintCell}
	g.inky = make([]bool, g.cw*g.ch)
	return g, g.cw > 0 && g.ch > 0
}

// coveredByWords marks the cells under (and one cell around) p's words.
func (g *cellGrid) coveredByWords(p *Page, scale float64) []bool {
	covered := make([]bool, g.cw*g.ch)
	for _, l := range p.Lines {
		for _, w := range l.Words {
			x0, y0 := int(w.Box.XMin*scale)/faintCell-1, int(w.Box.YMin*scale)/faintCell-1
			x1, y1 := int(w.Box.XMax*scale)/faintCell+1, int(w.Box.YMax*scale)/faintCell+1
			for y := max(y0, 0); y <= min(y1, g.ch-1); y++ {
				for x := max(x0, 0); x <= min(x1, g.cw-1); x++ {
					covered[y*g.cw+x] = true
				}
			}
		}
	}
	return covered
}

// markInk marks the uncovered cells with at least faintCellInk pixels at
// or below inkMax.
func (g *cellGrid) markInk(img *image.Gray, covered []bool, inkMax uint8) {
	for cy := range g.ch {
		for cx := range g.cw {
			if covered[cy*g.cw+cx] {
				continue
			}
			n := 0
			for y := cy * faintCell; y < (cy+1)*faintCell; y++ {
				for _, v := range img.Pix[y*img.Stride+cx*faintCell : y*img.Stride+(cx+1)*faintCell] {
					if v <= inkMax {
						n++
					}
				}
			}
			g.inky[cy*g.cw+cx] = n >= faintCellInk
		}
	}
}

// components joins inky cells into components (8-connected, bridging up
// to two empty cells along a row: the gaps between words) and returns
// each one's bounding rectangle in cells.
func (g *cellGrid) components() []image.Rectangle {
	seen := make([]bool, len(g.inky))
	var out []image.Rectangle
	for start := range g.inky {
		if g.inky[start] && !seen[start] {
			out = append(out, g.walk(start, seen))
		}
	}
	return out
}

func (g *cellGrid) walk(start int, seen []bool) image.Rectangle {
	r := image.Rect(start%g.cw, start/g.cw, start%g.cw+1, start/g.cw+1)
	stack := []int{start}
	seen[start] = true
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := c%g.cw, c/g.cw
		r = r.Union(image.Rect(x, y, x+1, y+1))
		for dy := -1; dy <= 1; dy++ {
			for dx := -3; dx <= 3; dx++ {
				nx, ny := x+dx, y+dy
				if nx < 0 || ny < 0 || nx >= g.cw || ny >= g.ch || (dy != 0 && (dx < -1 || dx > 1)) {
					continue
				}
				if k := ny*g.cw + nx; g.inky[k] && !seen[k] {
					seen[k] = true
					stack = append(stack, k)
				}
			}
		}
	}
	return r
}

// faintLine turns a component (in cells) into its pixel region when it is
// a line of print (one to six cells high, at least three wide) whose ink
// is faint: lighter than faintShare of the page's typical contrast, yet
// above faintFloor (scattered specks).
func faintLine(img *image.Gray, r image.Rectangle, scale float64, paper uint8, typical float64) (image.Rectangle, bool) {
	if r.Dy() > 6 || r.Dx() < 3 {
		return image.Rectangle{}, false
	}
	px := image.Rect(r.Min.X*faintCell-faintCell/2, r.Min.Y*faintCell-faintCell/2,
		r.Max.X*faintCell+faintCell/2, r.Max.Y*faintCell+faintCell/2).Intersect(img.Bounds())
	box := Box{XMin: float64(px.Min.X) / scale, YMin: float64(px.Min.Y) / scale, XMax: float64(px.Max.X) / scale, YMax: float64(px.Max.Y) / scale}
	ink, ok := inkLevel(img, box, scale)
	if !ok || contrast(paper, ink) >= faintShare*typical || contrast(paper, ink) < faintFloor*typical {
		return image.Rectangle{}, false // print tesseract skipped for other reasons, or scattered specks
	}
	return px, true
}

// stretch copies region r of img with its contrast stretched: the
// region's ink (its darkest few pixels) becomes black, the paper white.
func stretch(img *image.Gray, r image.Rectangle, paper uint8) *image.Gray {
	var hist [256]int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for _, v := range img.Pix[y*img.Stride+r.Min.X : y*img.Stride+r.Max.X] {
			hist[v]++
		}
	}
	want, n, ink := max(1, r.Dx()*r.Dy()/50), 0, 0
	for v, c := range hist {
		if n += c; n >= want {
			ink = v
			break
		}
	}
	span := max(float64(paper)-float64(ink), 1)
	out := image.NewGray(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := out.Pix[(y-r.Min.Y)*out.Stride:]
		for x, v := range img.Pix[y*img.Stride+r.Min.X : y*img.Stride+r.Max.X] {
			t := (float64(v) - float64(ink)) / span
			row[x] = uint8(255 * min(max(t, 0), 1))
		}
	}
	return out
}
