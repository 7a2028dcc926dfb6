package pages

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// Tables on a page: a line is cut into cells where the gap between two
// words is wide (a column gap, not a space); a cell is read under its
// column's header (the nearest label cell above it) and together with the
// cell right below it, because narrow cells wrap their values ("704-80-"
// over "9940", a first name over a surname) and OCR reads a table row by
// row, putting other columns between a value's two halves.

// pageCell is a run of words on one line between column gaps.
type pageCell struct {
	line, w0, w1 int         // words [w0, w1) of pt.words
	box          extract.Box // layout box
	whole        bool        // the cell is its whole line
}

// columnGap is how much wider than the line is tall a gap between words
// must be to part two cells.
const columnGap = 1.2

// cells cuts every line into cells, on the words' layout boxes.
func (pt *pageText) cells() []pageCell {
	var out []pageCell
	for w := 0; w < len(pt.words); {
		line := pt.words[w].line
		h := pt.lines[line].lbox.YMax - pt.lines[line].lbox.YMin
		start := len(out)
		c := pageCell{line: line, w0: w, box: pt.words[w].lbox}
		for w++; w < len(pt.words) && pt.words[w].line == line; w++ {
			b := pt.words[w].lbox
			if b.XMin-c.box.XMax > columnGap*h {
				c.w1 = w
				out = append(out, c)
				c = pageCell{line: line, w0: w, box: b}
				continue
			}
			c.box = extractUnion(c.box, b)
		}
		c.w1 = w
		out = append(out, c)
		if len(out)-start == 1 {
			out[start].whole = true
		}
	}
	return out
}

func extractUnion(a, b extract.Box) extract.Box {
	return extract.Box{XMin: min(a.XMin, b.XMin), YMin: min(a.YMin, b.YMin), XMax: max(a.XMax, b.XMax), YMax: max(a.YMax, b.YMax)}
}

func (pt *pageText) cellText(c pageCell) string {
	return pt.text[pt.words[c.w0].start:pt.words[c.w1-1].end]
}

func cellWords(c pageCell) []int {
	out := make([]int, 0, c.w1-c.w0)
	for w := c.w0; w < c.w1; w++ {
		out = append(out, w)
	}
	return out
}

// below returns the cell right under cells[i] in its column (on a later
// line, overlapping half its width, at most a line's height lower), or -1.
func below(cells []pageCell, i int) int {
	c := cells[i]
	h := c.box.YMax - c.box.YMin
	best := -1
	for k := i + 1; k < len(cells); k++ {
		d := cells[k]
		if d.line == c.line || d.box.YMin < c.box.YMin+h/2 {
			continue
		}
		if d.box.YMin-c.box.YMax > columnGap*max(h, d.box.YMax-d.box.YMin) {
			continue
		}
		ov := min(c.box.XMax, d.box.XMax) - max(c.box.XMin, d.box.XMin)
		if ov < 0.5*min(c.box.XMax-c.box.XMin, d.box.XMax-d.box.XMin) {
			continue
		}
		if best < 0 || d.box.YMin < cells[best].box.YMin {
			best = k
		}
	}
	return best
}

// header returns the nearest label cell above cells[i] in its column
// (within 300 points), or -1.
func (pt *pageText) header(cells []pageCell, labels []bool, i int) int {
	me := cells[i].box
	best := -1
	for k := range cells {
		h := cells[k].box
		if !labels[k] || k == i || h.YMax > me.YMin+1 || me.YMin-h.YMax > 300 || !xOverlap(h, me) {
			continue
		}
		if best < 0 || h.YMax > cells[best].box.YMax {
			best = k
		}
	}
	return best
}

// table is a page's cells, which of them are label cells (and of those
// which name an entity type), and each cell's header (-1 for none).
type table struct {
	cells         []pageCell
	labels, typed []bool
	header, under []int // under: the cell right below, or -1
}

func (pf *pageFinder) table() *table {
	pt, an := pf.pt, pf.r.an
	t := &table{cells: pt.cells()}
	n := len(t.cells)
	t.labels, t.typed, t.header, t.under = make([]bool, n), make([]bool, n), make([]int, n), make([]int, n)
	for i, c := range t.cells {
		t.labels[i], t.typed[i] = an.LabelLine(pt.cellText(c))
	}
	for i := range t.cells {
		t.header[i], t.under[i] = pt.header(t.cells, t.labels, i), below(t.cells, i)
	}
	return t
}

// columns analyses each value cell under its header: those whose header
// names an entity type (typed) or the others.
func (pf *pageFinder) columns(t *table, typed bool) {
	for i, c := range t.cells {
		if h := t.header[i]; !t.labels[i] && h >= 0 && t.typed[h] == typed {
			pf.unit(pf.pt.cellText(t.cells[h]), []pageCell{c}, "+column")
		}
	}
}

// pairs analyses each value cell with the one below it, under the upper
// one's header, when that can tell more than the page text did: the cell
// has a header, or one of the two shares its line with other cells.
func (pf *pageFinder) pairs(t *table) {
	for i, c := range t.cells {
		d, h := t.under[i], t.header[i]
		if t.labels[i] || d < 0 || t.labels[d] || h < 0 && c.whole && t.cells[d].whole {
			continue
		}
		hdr := ""
		if h >= 0 {
			hdr = pf.pt.cellText(t.cells[h])
		}
		pf.unit(hdr, []pageCell{c, t.cells[d]}, "+cells")
	}
}

// unit analyses cells joined by line breaks under field (a header's text,
// or "") and adds what it finds over those cells' words.
func (pf *pageFinder) unit(field string, cs []pageCell, det string) {
	pt := pf.pt
	var b strings.Builder
	var at []int // byte offset in the unit text of each word
	var words []int
	fresh := false
	for k, c := range cs {
		if k > 0 {
			b.WriteByte('\n')
		}
		base := b.Len() - pt.words[c.w0].start
		b.WriteString(pt.cellText(c))
		for _, w := range cellWords(c) {
			at = append(at, base+pt.words[w].start)
			words = append(words, w)
			fresh = fresh || !pf.covered[w]
		}
	}
	if !fresh {
		return
	}
	text := b.String()
	for _, s := range pf.r.an.Resolve(pf.r.an.FieldSpansWith(field, text, pf.spans)) {
		var ws []int
		for k, w := range words {
			if end := at[k] + pt.words[w].end - pt.words[w].start; end > s.Start && at[k] < s.End {
				ws = append(ws, w)
			}
		}
		if len(ws) > 0 {
			s.Detector += det
			pf.add(s, text[s.Start:s.End], ws)
		}
	}
}
