package review

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// FromExtract turns an extracted contract into the paragraphs Analyze
// reads: footnotes and their markers left out (on pages with a text
// layer), two-column pages read column by column, then extract.Reflow. The review command and the
// evaluations call it, so they read documents the same way. doc is not
// modified.
//
// Both steps work on the layout extraction reports (the boxes of lines
// and words), which the text alone does not show: a footnote marker is a
// number set small and raised after a word ("notice.¹" reads "notice. 1",
// a key term), and a footnote's text sits at the foot of the page, inside
// a clause that runs on to the next. pdftotext reads two columns set in
// blocks of paragraphs block by block across the page, and a column's
// lines are too short for reflow's single-column measure of a full line.
func FromExtract(doc *extract.Document) []Paragraph {
	d := *doc
	d.Pages = make([]extract.Page, len(doc.Pages))
	for i, p := range doc.Pages {
		p.Lines = slices.Clone(p.Lines)
		if p.Method == extract.MethodText {
			// On a scan the size of a word's box follows its letters, not
			// its type: a footnote cannot be told by it.
			p = dropFootnotes(p)
		}
		d.Pages[i] = readColumns(p)
	}
	body := extract.Reflow(&d, extract.ReflowOptions{})
	out := make([]Paragraph, 0, len(body.Paragraphs))
	for _, p := range body.Paragraphs {
		out = append(out, Paragraph{Text: p.Text, Pages: p.Pages})
	}
	return out
}

var reNoteMarker = regexp.MustCompile(`^(?:\d{1,2}|[*†‡])$`)

func height(b extract.Box) float64 { return b.YMax - b.YMin }

// lineSize is the median height of a line's words: the size it is set in.
func lineSize(l extract.Line) float64 {
	hs := make([]float64, 0, len(l.Words))
	for _, w := range l.Words {
		hs = append(hs, height(w.Box))
	}
	return median(hs)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[len(s)/2]
}

// bodySize is the size of a page's running text: the median size of its
// lines of three words or more.
func bodySize(p extract.Page) float64 {
	var hs []float64
	for _, l := range p.Lines {
		if len(l.Words) >= 3 {
			hs = append(hs, lineSize(l))
		}
	}
	return median(hs)
}

// dropFootnotes removes a page's footnote markers (a number or symbol set
// small and raised after a word) and its footnotes (from a line of small
// type that starts with such a marker, or a marker standing alone, every
// line of small type at or below it).
func dropFootnotes(p extract.Page) extract.Page {
	h := bodySize(p)
	if h <= 0 {
		return p
	}
	noteTop := -1.0
	for _, l := range p.Lines {
		if len(l.Words) == 0 || !reNoteMarker.MatchString(l.Words[0].Text) || height(l.Words[0].Box) > 0.8*h {
			continue
		}
		rest := l.Words[1:]
		small := len(rest) == 0 && len(l.Words) == 1
		if len(rest) > 0 {
			small = lineSize(extract.Line{Words: rest}) <= 0.85*h
		}
		if small && (noteTop < 0 || l.Box.YMin < noteTop) {
			noteTop = l.Box.YMin
		}
	}
	var keep []extract.Line
	for _, l := range p.Lines {
		if noteTop >= 0 && l.Box.YMin >= noteTop-1 && lineSize(l) <= 0.85*h {
			continue // a footnote (or the small print of the page's footer)
		}
		keep = append(keep, dropMarkers(l, h))
	}
	p.Lines = keep
	return p
}

// dropMarkers removes the footnote markers of a line: words that are a
// number or symbol, smaller than the text, whose foot is raised above the
// line's.
func dropMarkers(l extract.Line, h float64) extract.Line {
	if len(l.Words) < 2 {
		return l
	}
	feet := make([]float64, 0, len(l.Words))
	for _, w := range l.Words {
		feet = append(feet, w.Box.YMax)
	}
	foot := median(feet)
	var words []extract.Word
	for i, w := range l.Words {
		if i > 0 && reNoteMarker.MatchString(w.Text) && height(w.Box) <= 0.8*h && w.Box.YMax < foot-0.15*h {
			continue
		}
		words = append(words, w)
	}
	if len(words) == len(l.Words) {
		return l
	}
	l.Words = words
	l.Text = joinWordTexts(words)
	return l
}

func joinWordTexts(ws []extract.Word) string {
	n := 0
	for _, w := range ws {
		n += len(w.Text) + 1
	}
	b := make([]byte, 0, n)
	for i, w := range ws {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, w.Text...)
	}
	return string(b)
}

// readColumns reorders a two-column page's lines column by column, and
// moves each band of columns' right-hand lines under its left-hand ones
// (and whatever follows further down), so that reflow reads one column
// of the column's width, with a paragraph that runs on into the next
// column joined like one that runs on to the next page. A page with no
// clear gutter between two columns of text is left as it is.
func readColumns(p extract.Page) extract.Page {
	g, ok := gutter(p)
	if !ok {
		return p
	}
	x := g.x
	lines := slices.Clone(p.Lines)
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Box.YMin < lines[j].Box.YMin })
	var out, left, right []extract.Line
	shift := 0.0
	flush := func() {
		shift = setBand(&out, left, right, shift, bodySize(p))
		left, right = nil, nil
	}
	for _, l := range lines {
		switch {
		case l.Box.XMin < x-2 && l.Box.XMax > x+2 || g.running(l):
			flush()
			out = append(out, moved(l, 0, shift))
		case l.Box.XMax <= x+2:
			left = append(left, l)
		default:
			right = append(right, l)
		}
	}
	flush()
	p.Lines = out
	return p
}

// setBand appends a band's left lines (moved down by shift) and then its
// right lines, moved under them at the left column's x. It returns the
// shift for what follows the band.
func setBand(out *[]extract.Line, left, right []extract.Line, shift, size float64) float64 {
	left, right = joinSplitLines(left), joinSplitLines(right)
	for _, l := range left {
		*out = append(*out, moved(l, 0, shift))
	}
	if len(right) == 0 {
		return shift
	}
	if len(left) == 0 {
		for _, l := range right {
			*out = append(*out, moved(l, 0, shift))
		}
		return shift
	}
	lx, ly1, rx, ry0, ry1, bottom := left[0].Box.XMin, 0.0, right[0].Box.XMin, right[0].Box.YMin, 0.0, 0.0
	for _, l := range left {
		lx, ly1 = min(lx, l.Box.XMin), max(ly1, l.Box.YMax)
	}
	for _, l := range right {
		rx, ry0, ry1 = min(rx, l.Box.XMin), min(ry0, l.Box.YMin), max(ry1, l.Box.YMax)
	}
	bottom = max(ly1, ry1)
	// Like a page turn: the column's last line and the next column's first
	// are one line apart, unless a sentence ends there and a new one
	// starts, when a blank line parts them.
	gap := 0.3 * max(size, 1)
	if endsSentenceWord(lastLine(left).Text) && startsUpper(firstLine(right).Text) {
		gap = 1.5 * max(size, 1)
	}
	dy := ly1 + gap - ry0
	for _, l := range right {
		*out = append(*out, moved(l, lx-rx, shift+dy))
	}
	return shift + (ry1 + dy) - bottom
}

// running reports a line above or below all the lines that start at a
// column's edge: a running head, foot or page number, which belongs to
// no column.
func (g columns) running(l extract.Line) bool {
	return l.Box.YMax <= g.top || l.Box.YMin >= g.bottom
}

// joinSplitLines joins the pieces of a column's line that pdftotext read
// as lines of their own: a justified line of long words (capitals) whose
// gaps it took for column breaks. Pieces share the baseline.
func joinSplitLines(ls []extract.Line) []extract.Line {
	var out []extract.Line
	for _, l := range ls {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			if math.Abs(prev.Box.YMax-l.Box.YMax) < 1.5 && math.Abs(prev.Box.YMin-l.Box.YMin) < 1.5 && l.Box.XMin > prev.Box.XMin {
				prev.Words = append(slices.Clone(prev.Words), l.Words...)
				prev.Text = joinWordTexts(prev.Words)
				prev.Box.XMin, prev.Box.XMax = min(prev.Box.XMin, l.Box.XMin), max(prev.Box.XMax, l.Box.XMax)
				prev.Box.YMin, prev.Box.YMax = min(prev.Box.YMin, l.Box.YMin), max(prev.Box.YMax, l.Box.YMax)
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

func lastLine(ls []extract.Line) extract.Line {
	best := ls[0]
	for _, l := range ls {
		if l.Box.YMin > best.Box.YMin {
			best = l
		}
	}
	return best
}

func firstLine(ls []extract.Line) extract.Line {
	best := ls[0]
	for _, l := range ls {
		if l.Box.YMin < best.Box.YMin {
			best = l
		}
	}
	return best
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r) || unicode.IsDigit(r)
	}
	return false
}

func moved(l extract.Line, dx, dy float64) extract.Line {
	if dx == 0 && dy == 0 {
		return l
	}
	l.Box = movedBox(l.Box, dx, dy)
	ws := make([]extract.Word, len(l.Words))
	for i, w := range l.Words {
		w.Box = movedBox(w.Box, dx, dy)
		ws[i] = w
	}
	l.Words = ws
	return l
}

func movedBox(b extract.Box, dx, dy float64) extract.Box {
	return extract.Box{XMin: b.XMin + dx, YMin: b.YMin + dy, XMax: b.XMax + dx, YMax: b.YMax + dy}
}

// columns is a page's two columns: the gutter's x and the columns' left
// edges.
type columns struct{ x, left, right, top, bottom float64 }

// gutter finds the x of the gap between two columns of text: in the
// middle fifth of the page, crossed by few lines (a title, a heading set
// across the page, the running lines), with six or more lines on each
// side, side by side, of like widths.
func gutter(p extract.Page) (columns, bool) {
	if p.Width <= 0 || len(p.Lines) < 12 {
		return columns{}, false
	}
	bestX, bestCross := 0.0, len(p.Lines)+1
	for x := 0.4 * p.Width; x <= 0.6*p.Width; x++ {
		cross, left, right := 0, 0, 0
		for _, l := range p.Lines {
			switch {
			case l.Box.XMin < x-2 && l.Box.XMax > x+2:
				cross++
			case l.Box.XMax <= x+2:
				left++
			default:
				right++
			}
		}
		if left >= 6 && right >= 6 && cross < bestCross {
			bestX, bestCross = x, cross
		}
	}
	if bestCross > len(p.Lines)/3 {
		return columns{}, false
	}
	var lmin, lmax, rmin, rmax, ly0, ly1 float64 = p.Width, 0, p.Width, 0, p.Height, 0
	var lefts, rights []float64
	for _, l := range p.Lines {
		b := l.Box
		switch {
		case b.XMin < bestX-2 && b.XMax > bestX+2:
		case b.XMax <= bestX+2:
			lmin, lmax, ly0, ly1 = min(lmin, b.XMin), max(lmax, b.XMax), min(ly0, b.YMin), max(ly1, b.YMax)
			lefts = append(lefts, b.XMin)
		default:
			rmin, rmax = min(rmin, b.XMin), max(rmax, b.XMax)
			rights = append(rights, b.XMin)
		}
	}
	side := 0
	for _, l := range p.Lines {
		if mid := (l.Box.YMin + l.Box.YMax) / 2; l.Box.XMin >= bestX-2 && mid > ly0 && mid < ly1 {
			side++
		}
	}
	lw, rw := lmax-lmin, rmax-rmin
	ok := side >= 4 && lw > 0 && rw > 0 && lw/rw > 0.6 && lw/rw < 1.6
	// A column's edge is where most of its lines start: on a scan one
	// speck read as a word, or a line OCR began early, moves the least x
	// a few points off, and the lines at the edge would no longer be
	// found (the columns' top would fall below their first lines).
	g := columns{x: bestX, left: median(lefts), right: median(rights), top: p.Height, bottom: 0}
	for _, l := range p.Lines {
		if math.Abs(l.Box.XMin-g.left) < 6 || math.Abs(l.Box.XMin-g.right) < 6 {
			g.top, g.bottom = min(g.top, l.Box.YMin), max(g.bottom, l.Box.YMax)
		}
	}
	return g, ok
}
