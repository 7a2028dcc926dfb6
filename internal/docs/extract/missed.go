package extract

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
)

// The missed-block pass: on a noisy page tesseract's layout analysis
// sometimes drops a whole block of ordinary print (a column's paragraph
// in a two-column contract came back with none of its lines). Blocks of
// ink of the page's usual darkness where the first pass found no word are
// read again on their own as one uniform block of text.
const (
	// missedMinWidth and missedMinHeight, in cells: a block of several
	// words across and at least two lines of print (a single line at 150
	// dpi is two to three cells high), or one line at least twice as
	// wide.
	missedMinWidth  = 16
	missedMinHeight = 5
	// missedMinDensity is the least share of a block's cells that hold
	// ink: print fills most cells of its block, scattered specks a few.
	missedMinDensity = 0.35
	// missedMinConf is the least mean confidence of a line read again:
	// print scores 80-95, what tesseract makes of a picture or noise much
	// less.
	missedMinConf = 60
	// maxMissedRegions bounds the extra tesseract runs per page.
	maxMissedRegions = 4
)

// readMissed finds blocks of p's image that hold print as dark as the
// page's words and no word of the first pass, reads each (tesseract, one
// uniform block) and adds the lines read with confidence to p.
func readMissed(ctx context.Context, p *Page, img *image.Gray, dpi float64, n int, tmp string, o Options) error {
	scale := dpi / 72
	paper, typical := pageContrast(p, img, scale)
	if typical <= 0 {
		return nil
	}
	for k, r := range missedRegions(p, img, scale, paper, typical) {
		file := filepath.Join(tmp, fmt.Sprintf("page-%d-missed-%d.pgm", n, k))
		crop := img.SubImage(r).(*image.Gray)
		if err := readRegion(ctx, p, crop, r, dpi, n, file, o, regionRead{psm: "6", minConf: missedMinConf}); err != nil {
			return err
		}
	}
	return nil
}

// missedRegions returns, in pixels, the blocks of ink outside p's words
// that look like print the first pass missed: wide and tall enough for
// lines of words, mostly inked, and as dark as the page's words (faint
// print is the faint pass's).
func missedRegions(p *Page, img *image.Gray, scale float64, paper uint8, typical float64) []image.Rectangle {
	g, ok := newCellGrid(img)
	if !ok {
		return nil
	}
	g.markInk(img, g.coveredByWords(p, scale), uint8(float64(paper)*(1-minInkContrast)))
	var lines []image.Rectangle
	for _, r := range g.components() {
		// Lines of print (not specks, rules or a stray mark), then the
		// lines one above the other joined into blocks: double-spaced
		// text leaves whole cells between its lines.
		if r.Dx() >= 3 && r.Dy() >= 2 && g.density(r) >= missedMinDensity {
			lines = append(lines, r)
		}
	}
	var out []image.Rectangle
	for _, r := range joinBlocks(lines) {
		if r.Dx() < missedMinWidth || r.Dy() < missedMinHeight && r.Dx() < 2*missedMinWidth {
			continue
		}
		px := image.Rect(r.Min.X*faintCell-faintCell, r.Min.Y*faintCell-faintCell,
			r.Max.X*faintCell+faintCell, r.Max.Y*faintCell+faintCell).Intersect(img.Bounds())
		box := Box{XMin: float64(px.Min.X) / scale, YMin: float64(px.Min.Y) / scale, XMax: float64(px.Max.X) / scale, YMax: float64(px.Max.Y) / scale}
		if ink, ok := inkLevel(img, box, scale); !ok || contrast(paper, ink) < faintShare*typical {
			continue
		}
		out = append(out, px)
		if len(out) == maxMissedRegions {
			break
		}
	}
	return out
}

// density is the share of r's cells that hold ink.
func (g *cellGrid) density(r image.Rectangle) float64 {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g.inky[y*g.cw+x] {
				n++
			}
		}
	}
	return float64(n) / float64(r.Dx()*r.Dy())
}

// missedLineGap is the most cells between two lines of one block.
const missedLineGap = 4

// joinBlocks unions rectangles (in cells) that overlap across and lie
// within missedLineGap of each other down, until none do.
func joinBlocks(rs []image.Rectangle) []image.Rectangle {
	out := append([]image.Rectangle(nil), rs...)
	for joined := true; joined; {
		joined = false
		for i := 0; i < len(out) && !joined; i++ {
			for j := i + 1; j < len(out); j++ {
				a, b := out[i], out[j]
				across := a.Min.X < b.Max.X && b.Min.X < a.Max.X
				down := a.Min.Y-missedLineGap <= b.Max.Y && b.Min.Y-missedLineGap <= a.Max.Y
				if across && down {
					out[i] = a.Union(b)
					out = append(out[:j], out[j+1:]...)
					joined = true
					break
				}
			}
		}
	}
	return out
}
