package invoice

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// OCR pages come with their boxes turned back onto the page as scanned:
// extract deskews the image for tesseract, then maps every box onto the
// skewed original (so a redaction drawn from it covers the word). On a
// page photographed 3 degrees off, a row 470 pt wide then climbs 25 pt
// from its label to its value, more than a line pitch, and rows built
// from boxes interleave. The extractors need the page as printed, so OCR
// boxes are turned upright again here, by the skew extract corrected and
// by whatever slope tesseract's own lines still show.

// minResidualSlope is the slope of tesseract's lines (after undoing the
// corrected skew) worth removing: 0.1 degrees is 0.8 pt over a table row.
const minResidualSlope = 0.0017

// uprightOCRWords returns the page's words with upright boxes: the
// skew extract corrected undone, then any slope left in tesseract's lines.
func uprightOCRWords(p *extract.Page) []extract.Word {
	var out []extract.Word
	for _, l := range uprightOCRLines(p) {
		out = append(out, l...)
	}
	return out
}

// uprightOCRLines is uprightOCRWords by tesseract's lines.
func uprightOCRLines(p *extract.Page) [][]extract.Word {
	cx, cy := p.Width/2, p.Height/2
	var lines [][]extract.Word
	for _, l := range p.Lines {
		var ws []extract.Word
		for _, w := range l.Words {
			if p.SkewDegrees != 0 {
				w.Box = unturnBox(w.Box, p.SkewDegrees, cx, cy)
			}
			ws = append(ws, w)
		}
		lines = append(lines, ws)
	}
	if slope := lineSlope(lines); math.Abs(slope) >= minResidualSlope {
		th := math.Atan(slope)
		for _, l := range lines {
			for i := range l {
				l[i].Box = turnCentre(l[i].Box, -th, cx, cy)
			}
		}
	}
	return lines
}

// unturnBox inverts extract's turnBox: b is the upright box around a box
// of the deskewed image turned by deg clockwise about (cx, cy). Its centre
// turns back exactly; its size is solved from W = w cos + h sin,
// H = w sin + h cos (never below half the turned size, where rounding
// makes the solution meaningless).
func unturnBox(b extract.Box, deg, cx, cy float64) extract.Box {
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Abs(math.Sin(th))
	bw, bh := b.XMax-b.XMin, b.YMax-b.YMin
	det := c*c - s*s
	w, h := (bw*c-bh*s)/det, (bh*c-bw*s)/det
	w, h = max(w, bw/2), max(h, bh/2)
	mid := turnCentre(extract.Box{XMin: b.XMin, YMin: b.YMin, XMax: b.XMax, YMax: b.YMax}, -th, cx, cy)
	mx, my := (mid.XMin+mid.XMax)/2, (mid.YMin+mid.YMax)/2
	return extract.Box{XMin: mx - w/2, YMin: my - h/2, XMax: mx + w/2, YMax: my + h/2}
}

// turnCentre moves b (size kept) so its centre turns by th radians
// (clockwise on the page, whose y axis points down) about (cx, cy).
func turnCentre(b extract.Box, th, cx, cy float64) extract.Box {
	c, s := math.Cos(th), math.Sin(th)
	dx, dy := (b.XMin+b.XMax)/2-cx, (b.YMin+b.YMax)/2-cy
	nx, ny := cx+c*dx-s*dy, cy+s*dx+c*dy
	hw, hh := (b.XMax-b.XMin)/2, (b.YMax-b.YMin)/2
	return extract.Box{XMin: nx - hw, YMin: ny - hh, XMax: nx + hw, YMax: ny + hh}
}

// lineSlope is the median slope (dy/dx) of tesseract's lines that are
// long enough to measure: three words or more spanning 100 pt. Fewer than
// three such lines say nothing.
func lineSlope(lines [][]extract.Word) float64 {
	var slopes []float64
	for _, ws := range lines {
		if len(ws) < 3 || ws[len(ws)-1].Box.XMax-ws[0].Box.XMin < 100 {
			continue
		}
		var sx, sy, sxx, sxy float64
		n := float64(len(ws))
		for _, w := range ws {
			x, y := (w.Box.XMin+w.Box.XMax)/2, (w.Box.YMin+w.Box.YMax)/2
			sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		}
		if d := n*sxx - sx*sx; d > 0 {
			slopes = append(slopes, (n*sxy-sx*sy)/d)
		}
	}
	if len(slopes) < 3 {
		return 0
	}
	sort.Float64s(slopes)
	return slopes[len(slopes)/2]
}

// ocrNoise reports an OCR word that is only specks: no letter, no digit
// and no sign an invoice prints on its own (currency, '#', '%', '&', ':'
// after a label).
// Scanner dust and fax noise come back as "~", "—", "_", "|", "«" and
// land between labels and values or inside table cells.
func ocrNoise(text string) bool {
	if strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
		return false
	}
	return !strings.ContainsAny(text, "#%&:$€£¥₹")
}
