package invoice

import (
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// word is one visible word as the field extractors see it.
type word struct {
	text string
	box  extract.Box
	conf float64 // 0..1; 1 for text-layer words
	page int
	// faint: extract measured the word's ink as much lighter than the
	// page's text (printed faintly, whatever tesseract read).
	faint bool
	// line numbers the extractor's line the word came from (1, 2, ...;
	// 0 = none): the words of one line share a baseline, so they stay in
	// one row.
	line int
}

func (w word) height() float64  { return w.box.YMax - w.box.YMin }
func (w word) xCenter() float64 { return (w.box.XMin + w.box.XMax) / 2 }

// row is the words on one visual line of a page, left to right. Rows are
// built from boxes, not taken whole from the extractor's lines (pdftotext
// puts a label and a far-right value in different blocks); a text-layer
// line's words stay together in one row.
type row struct {
	page   int
	words  []word
	box    extract.Box
	height float64 // median word height

	text   string // words joined by single spaces
	starts []int  // byte offset of each word in text
	folded string // textnorm.Fold(text)
	fmap   []int  // folded byte -> text byte
	// cellStarts are the folded offsets where a new cell begins (a gap
	// wider than the text is tall): a label never spans two cells.
	cellStarts []int
	inTable    bool // consumed by a line-item table
}

// page is one page of rows.
type page struct {
	number        int
	width, height float64
	ocr           bool
	rows          []*row
}

// buildRows groups words into rows: the words of one extractor line
// together, placed in the row whose band holds them and whose words they
// do not overlap horizontally. Two words at the same x are on two lines
// however close their bands: a small address set just under a large name
// is its own row, never interleaved with the name's words ("Acme 12 Main
// Street Widgets Inc.").
func buildRows(pageNum int, ws []word) []*row {
	units := lineUnits(ws)
	sort.SliceStable(units, func(i, j int) bool { return unitCentre(units[i]) < unitCentre(units[j]) })
	var rows []*row
	for _, u := range units {
		ub := boxOf(u)
		var best *row
		bestD := 0.0
		for k := len(rows) - 1; k >= 0; k-- {
			r := rows[k]
			if r.box.YMax < ub.YMin-2*(ub.YMax-ub.YMin) {
				break
			}
			if !sameRow(r, ub) || xConflict(r.words, u) {
				continue
			}
			if d := abs((r.box.YMin+r.box.YMax)/2 - (ub.YMin+ub.YMax)/2); best == nil || d < bestD {
				best, bestD = r, d
			}
		}
		if best == nil {
			best = &row{page: pageNum, box: ub}
			rows = append(rows, best)
		}
		best.words = append(best.words, u...)
		best.box = union(best.box, ub)
	}
	for _, r := range rows {
		r.finish()
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return rows[i].box.YMin+rows[i].box.YMax < rows[j].box.YMin+rows[j].box.YMax
	})
	return rows
}

// lineUnits groups words by their extractor line; words without one are
// units of their own.
func lineUnits(ws []word) [][]word {
	var out [][]word
	at := map[int]int{}
	for _, w := range ws {
		if w.line == 0 {
			out = append(out, []word{w})
			continue
		}
		k, ok := at[w.line]
		if !ok {
			k = len(out)
			at[w.line] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], w)
	}
	return out
}

func unitCentre(u []word) float64 {
	b := boxOf(u)
	return (b.YMin + b.YMax) / 2
}

// xConflict: some word of u overlaps some word of the row horizontally
// by more than a third of the narrower one. Only text-layer words are
// compared: OCR splits a token into words whose boxes overlap ("02100002"
// and "1"), and its ink-tight boxes do not reach into the next line.
func xConflict(row, u []word) bool {
	for _, a := range u {
		for _, b := range row {
			if a.conf < 1 || b.conf < 1 {
				continue
			}
			ov := min(a.box.XMax, b.box.XMax) - max(a.box.XMin, b.box.XMin)
			if ov > 0 && ov > min(a.box.XMax-a.box.XMin, b.box.XMax-b.box.XMin)/3 {
				return true
			}
		}
	}
	return false
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// sameRow: the box's vertical centre lies inside the row's band and the
// two overlap by at least half the smaller height.
func sameRow(r *row, b extract.Box) bool {
	c := (b.YMin + b.YMax) / 2
	if c < r.box.YMin || c > r.box.YMax {
		return false
	}
	ov := min(r.box.YMax, b.YMax) - max(r.box.YMin, b.YMin)
	return ov >= 0.5*min(r.box.YMax-r.box.YMin, b.YMax-b.YMin)
}

func union(a, b extract.Box) extract.Box {
	return extract.Box{XMin: min(a.XMin, b.XMin), YMin: min(a.YMin, b.YMin), XMax: max(a.XMax, b.XMax), YMax: max(a.YMax, b.YMax)}
}

func (r *row) finish() {
	sort.SliceStable(r.words, func(i, j int) bool { return r.words[i].box.XMin < r.words[j].box.XMin })
	var b strings.Builder
	r.starts = make([]int, len(r.words))
	hs := make([]float64, len(r.words))
	for i, w := range r.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		r.starts[i] = b.Len()
		b.WriteString(w.text)
		hs[i] = w.height()
	}
	r.text = b.String()
	r.folded, r.fmap = textnorm.FoldMap(r.text)
	sort.Float64s(hs)
	r.height = hs[len(hs)/2]
	r.cellStarts = []int{0}
	for i := 1; i < len(r.words); i++ {
		if newCell(r.words[i-1], r.words[i], cellGap) {
			r.cellStarts = append(r.cellStarts, r.foldedOffset(r.starts[i]))
		}
	}
}

// cellGap is the gap, in text heights, that separates cells.
const cellGap = 1.0

// newCell: w, right of prev on a row, starts another cell: the gap is
// wider than gapFactor x the taller word, or, in a text layer, the print
// changes size (a name in 15 pt with its address in 8 pt beside it).
func newCell(prev, w word, gapFactor float64) bool {
	if w.box.XMin-prev.box.XMax > gapFactor*max(prev.height(), w.height()) {
		return true
	}
	if prev.conf < 1 || w.conf < 1 {
		return false // OCR boxes hug the ink: "en" is shorter than "Dijk" in one size
	}
	lo, hi := min(prev.height(), w.height()), max(prev.height(), w.height())
	return lo > 0 && hi > sizeBreak*lo && w.box.XMin-prev.box.XMax > 0.15*lo
}

// sizeBreak is the ratio of text heights at which adjacent words belong
// to different blocks.
const sizeBreak = 1.6

// foldedOffset maps a text byte offset to the first folded byte at or
// after it.
func (r *row) foldedOffset(off int) int {
	return sort.Search(len(r.fmap), func(i int) bool { return r.fmap[i] >= off })
}

// cellOf returns the folded range [start, end) of the cell holding folded
// offset off.
func (r *row) cellOf(off int) (int, int) {
	k := sort.Search(len(r.cellStarts), func(i int) bool { return r.cellStarts[i] > off }) - 1
	end := len(r.folded)
	if k+1 < len(r.cellStarts) {
		end = r.cellStarts[k+1]
	}
	return r.cellStarts[max(k, 0)], end
}

// slice returns the words covering text bytes [from, to), the first and
// last cut to that range, so "Total:$12.00" yields "$12.00" after its label.
func (r *row) slice(from, to int) []word {
	var out []word
	for i, w := range r.words {
		ws, we := r.starts[i], r.starts[i]+len(w.text)
		if we <= from || ws >= to {
			continue
		}
		lo, hi := max(from, ws)-ws, min(to, we)-ws
		t := strings.TrimSpace(w.text[lo:hi])
		if t == "" {
			continue
		}
		w.text = t
		out = append(out, w)
	}
	return out
}

// cells splits words into runs separated by gaps wider than gapFactor x
// height: table cells, or the parts of a two-column line.
func cells(ws []word, gapFactor float64) [][]word {
	if len(ws) == 0 {
		return nil
	}
	out := [][]word{{ws[0]}}
	for i := 1; i < len(ws); i++ {
		if newCell(ws[i-1], ws[i], gapFactor) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], ws[i])
	}
	return out
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func boxOf(ws []word) extract.Box {
	b := ws[0].box
	for _, w := range ws[1:] {
		b = union(b, w.box)
	}
	return b
}

// minConf is the weakest word confidence (1 for none).
func minConf(ws []word) float64 {
	c := 1.0
	for _, w := range ws {
		c = min(c, w.conf)
	}
	return c
}

// faintConf caps the confidence of a word OCR marked faint: below lowOCR,
// so a value read from light gray print goes to a person whatever
// tesseract thought of its shapes.
const faintConf = 0.3

// wordConf converts an extract.Word's confidence (-1 for text, 0..100 for
// OCR) to 0..1, capped at faintConf for faint print.
func wordConf(w extract.Word) float64 {
	if w.Conf < 0 {
		return 1
	}
	c := min(max(w.Conf/100, 0), 1)
	if w.Faint {
		c = min(c, faintConf)
	}
	return c
}
