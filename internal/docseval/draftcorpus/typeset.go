package draftcorpus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// The typesetter sets blocks on US Letter pages in one or two columns,
// with side-heading table rows (a bold heading cell beside a text cell,
// ruled), footnotes at the foot of the page their marker is on, and
// running headers and footers. It produces a testdocs.Fixed, which
// testdocs renders as a text PDF or a scan.

type blockKind int

const (
	kTitle   blockKind = iota // centred, bold, large
	kHeading                  // bold, kept with what follows
	kPara                     // body text; runs may be bold (run-in headings)
	kRow                      // a table row: left cell beside right cell, ruled
	kColumns                  // from here on, cols columns (on a fresh band of the page)
	kGap                      // vertical space
)

// run is a stretch of text in one weight. A note is a footnote anchored
// after the run's last word.
type run struct {
	text string
	bold bool
	note string
}

type block struct {
	kind   blockKind
	runs   []run   // title, heading, para; for a row, its left cell
	cells  [][]run // a row's right cell, one entry per paragraph
	indent float64
	cols   int     // kColumns
	ratio  float64 // kRow: the left cell's share of the width
	gap    float64 // kGap
}

// pageStyle is how a contract's pages are set.
type pageStyle struct {
	size           float64 // body size, points
	margin         float64
	justify        bool
	header, footer string // "{page}" and "{pages}" are filled in
}

const (
	pageW, pageH = 612.0, 792.0
	colGap       = 18.0
	leading      = 1.3
	noteSize     = 7.5
	cellPad      = 5.0
)

// word is one word as set; sup is a footnote marker after it.
type word struct {
	text string
	bold bool
	sup  string
	note string
}

type line struct {
	words []word
	size  float64
	width float64 // the width it was set to (for justification)
	last  bool    // the last line of its paragraph: never justified
}

type footnote struct {
	marker string
	lines  []line
}

type typesetter struct {
	m     *measurer
	st    pageStyle
	pages []testdocs.FixedPage
	// The current band of columns: cols columns from bandTop down.
	cols, col  int
	bandTop, y float64
	bottom     float64 // where body text must end on this page
	notes      []footnote
	notesH     float64
	nextNote   int
}

func newTypesetter(st pageStyle) (*typesetter, error) {
	m, err := newMeasurer()
	if err != nil {
		return nil, err
	}
	ts := &typesetter{m: m, st: st, cols: 1}
	ts.newPage()
	return ts, nil
}

func (ts *typesetter) textWidth() float64 { return pageW - 2*ts.st.margin }

func (ts *typesetter) colWidth() float64 {
	return (ts.textWidth() - float64(ts.cols-1)*colGap) / float64(ts.cols)
}

func (ts *typesetter) colX() float64 {
	return ts.st.margin + float64(ts.col)*(ts.colWidth()+colGap)
}

func (ts *typesetter) newPage() {
	ts.flushNotes()
	ts.pages = append(ts.pages, testdocs.FixedPage{})
	ts.col, ts.y, ts.bandTop = 0, ts.st.margin, ts.st.margin
	ts.bottom = pageH - ts.st.margin
	ts.notes, ts.notesH = nil, 0
}

// nextColumn moves to the top of the next column of the band, or to a
// new page.
func (ts *typesetter) nextColumn() {
	if ts.col+1 < ts.cols {
		ts.col++
		ts.y = ts.bandTop
		return
	}
	ts.newPage()
}

func (ts *typesetter) page() *testdocs.FixedPage { return &ts.pages[len(ts.pages)-1] }

// setColumns starts a band of n columns below what is on the page.
func (ts *typesetter) setColumns(n int) {
	if n == ts.cols {
		return
	}
	if ts.cols > 1 {
		ts.y = ts.bandTop // not reached by callers: bands only widen once
	}
	ts.cols, ts.col, ts.bandTop = n, 0, ts.y
}

// words splits runs into words, the footnote marker on the last word of
// its run.
func (ts *typesetter) words(runs []run) []word {
	var out []word
	for _, r := range runs {
		f := strings.Fields(r.text)
		for i, w := range f {
			wd := word{text: w, bold: r.bold}
			if i == len(f)-1 && r.note != "" {
				ts.nextNote++
				wd.sup, wd.note = strconv.Itoa(ts.nextNote), r.note
			}
			out = append(out, wd)
		}
	}
	return out
}

func (ts *typesetter) wordWidth(w word, size float64) (float64, error) {
	x, err := ts.m.width(w.text, w.bold, size)
	if err != nil {
		return 0, err
	}
	if w.sup != "" {
		s, err := ts.m.width(w.sup, false, size*0.62)
		if err != nil {
			return 0, err
		}
		x += s
	}
	return x, nil
}

// wrap breaks words into lines no wider than width.
func (ts *typesetter) wrap(ws []word, width, size float64) ([]line, error) {
	sp, err := ts.m.width(" ", false, size)
	if err != nil {
		return nil, err
	}
	var out []line
	cur := line{size: size, width: width}
	used := 0.0
	for _, w := range ws {
		ww, err := ts.wordWidth(w, size)
		if err != nil {
			return nil, err
		}
		if len(cur.words) > 0 && used+sp+ww > width {
			out = append(out, cur)
			cur, used = line{size: size, width: width}, 0
		}
		if len(cur.words) > 0 {
			used += sp
		}
		cur.words = append(cur.words, w)
		used += ww
	}
	if len(cur.words) > 0 {
		cur.last = true
		out = append(out, cur)
	}
	return out, nil
}

// draw puts a line's items on the current page at x, baseline y.
func (ts *typesetter) draw(l line, x, y float64) error {
	sp, err := ts.m.width(" ", false, l.size)
	if err != nil {
		return err
	}
	if ts.st.justify && !l.last && len(l.words) > 1 {
		total := 0.0
		for _, w := range l.words {
			ww, err := ts.wordWidth(w, l.size)
			if err != nil {
				return err
			}
			total += ww
		}
		sp = max(sp, (l.width-total)/float64(len(l.words)-1))
	}
	p := ts.page()
	for _, w := range l.words {
		ww, err := ts.m.width(w.text, w.bold, l.size)
		if err != nil {
			return err
		}
		p.Items = append(p.Items, testdocs.Item{X: x, Y: y, Text: w.text, Size: l.size, Bold: w.bold})
		x += ww
		if w.sup != "" {
			s := l.size * 0.62
			p.Items = append(p.Items, testdocs.Item{X: x + 0.5, Y: y - l.size*0.38, Text: w.sup, Size: s})
			sw, err := ts.m.width(w.sup, false, s)
			if err != nil {
				return err
			}
			x += sw + 0.5
		}
		x += sp
	}
	return nil
}

// place sets one line of a column, moving on when it does not fit (room
// is the height it needs: more for a heading kept with what follows).
func (ts *typesetter) place(l line, indent, room float64) error {
	h := l.size * leading
	notes, nh, err := ts.lineNotes(l)
	if err != nil {
		return err
	}
	if ts.y+max(h, room)+nh > ts.bottom-ts.notesH && ts.y > ts.bandTop {
		ts.nextColumn()
	}
	if err := ts.draw(l, ts.colX()+indent, ts.y+l.size); err != nil {
		return err
	}
	ts.y += h
	ts.notes = append(ts.notes, notes...)
	ts.notesH += nh
	return nil
}

// lineNotes sets the footnotes a line's markers anchor, full width at the
// foot of the page.
func (ts *typesetter) lineNotes(l line) ([]footnote, float64, error) {
	var out []footnote
	h := 0.0
	for _, w := range l.words {
		if w.note == "" {
			continue
		}
		ls, err := ts.wrap(ts.words([]run{{text: w.note}}), ts.textWidth()-10, noteSize)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, footnote{marker: w.sup, lines: ls})
		h += float64(len(ls)) * noteSize * leading
	}
	if len(out) > 0 && len(ts.notes) == 0 {
		h += 8 // the rule above the first footnote
	}
	return out, h, nil
}

// flushNotes sets the page's footnotes above the bottom margin.
func (ts *typesetter) flushNotes() {
	if len(ts.notes) == 0 || len(ts.pages) == 0 {
		return
	}
	p := ts.page()
	y := pageH - ts.st.margin - ts.notesH + 8
	p.Rules = append(p.Rules, testdocs.Rule{X1: ts.st.margin, Y1: y - 6, X2: ts.st.margin + 120, Y2: y - 6})
	for _, n := range ts.notes {
		for i, l := range n.lines {
			if i == 0 {
				p.Items = append(p.Items, testdocs.Item{X: ts.st.margin, Y: y + noteSize - noteSize*0.3, Text: n.marker, Size: noteSize * 0.7})
			}
			// Errors were caught when the note was wrapped; draw cannot fail
			// on the same words.
			_ = ts.draw(l, ts.st.margin+8, y+noteSize)
			y += noteSize * leading
		}
	}
	ts.notes, ts.notesH = nil, 0
}

// set lays out every block and returns the pages.
func (ts *typesetter) set(blocks []block) ([]testdocs.FixedPage, error) {
	for i, b := range blocks {
		if err := ts.setBlock(b); err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
	}
	ts.flushNotes()
	return ts.pages, nil
}

func (ts *typesetter) setBlock(b block) error {
	size := ts.st.size
	switch b.kind {
	case kColumns:
		ts.setColumns(b.cols)
		return nil
	case kGap:
		ts.y += b.gap
		return nil
	case kTitle:
		return ts.setTitle(b, size*1.6)
	case kHeading:
		ls, err := ts.wrap(ts.words(b.runs), ts.colWidth()-b.indent, size*1.1)
		if err != nil {
			return err
		}
		ts.y += size * 0.8
		for i, l := range ls {
			room := 0.0
			if i == len(ls)-1 {
				room = l.size*leading + 3*size*leading // keep with two lines of what follows
			}
			if err := ts.place(l, b.indent, room); err != nil {
				return err
			}
		}
		return nil
	case kPara:
		ls, err := ts.wrap(ts.words(b.runs), ts.colWidth()-b.indent, size)
		if err != nil {
			return err
		}
		ts.y += size * 0.55
		for _, l := range ls {
			if err := ts.place(l, b.indent, 0); err != nil {
				return err
			}
		}
		return nil
	case kRow:
		return ts.setRow(b)
	}
	return fmt.Errorf("unknown block kind %d", b.kind)
}

func (ts *typesetter) setTitle(b block, size float64) error {
	ls, err := ts.wrap(ts.words(b.runs), ts.colWidth(), size)
	if err != nil {
		return err
	}
	for _, l := range ls {
		w := 0.0
		for i, wd := range l.words {
			x, err := ts.wordWidth(wd, size)
			if err != nil {
				return err
			}
			if i > 0 {
				s, _ := ts.m.width(" ", wd.bold, size)
				x += s
			}
			w += x
		}
		l.last = true
		if err := ts.place(l, (ts.colWidth()-w)/2, 0); err != nil {
			return err
		}
	}
	ts.y += size * 0.6
	return nil
}

// setRow sets a side-heading row: the heading cell and the text cell
// line by line side by side, ruled above and between the cells; a row
// too long for the page continues on the next one.
func (ts *typesetter) setRow(b block) error {
	size := ts.st.size
	lw := ts.colWidth()*b.ratio - 2*cellPad
	rw := ts.colWidth()*(1-b.ratio) - 2*cellPad
	left, err := ts.wrap(ts.words(b.runs), lw, size)
	if err != nil {
		return err
	}
	var right []line
	for i, p := range b.cells {
		ls, err := ts.wrap(ts.words(p), rw, size)
		if err != nil {
			return err
		}
		if i > 0 {
			right = append(right, line{size: size}) // a blank line between paragraphs
		}
		right = append(right, ls...)
	}
	h := size * leading
	n := max(len(left), len(right))
	x0 := ts.colX()
	xr := x0 + ts.colWidth()*b.ratio
	ts.y += cellPad
	if ts.y+2*h > ts.bottom-ts.notesH {
		ts.nextColumn()
	}
	top := ts.y
	rule := func(y float64) {
		ts.page().Rules = append(ts.page().Rules, testdocs.Rule{X1: x0, Y1: y, X2: x0 + ts.colWidth(), Y2: y})
	}
	divider := func(from, to float64) {
		ts.page().Rules = append(ts.page().Rules, testdocs.Rule{X1: xr, Y1: from, X2: xr, Y2: to})
	}
	rule(top - cellPad + 1)
	for i := range n {
		if ts.y+h > ts.bottom-ts.notesH {
			divider(top-cellPad+1, ts.y)
			ts.nextColumn()
			top = ts.y
			rule(top - cellPad + 1)
		}
		if i < len(left) {
			if err := ts.draw(left[i], x0+cellPad, ts.y+size); err != nil {
				return err
			}
		}
		if i < len(right) && len(right[i].words) > 0 {
			if err := ts.draw(right[i], xr+cellPad, ts.y+size); err != nil {
				return err
			}
		}
		ts.y += h
	}
	divider(top-cellPad+1, ts.y+cellPad)
	ts.y += cellPad
	rule(ts.y)
	return nil
}

// running adds the header and footer to every page, centred in the top
// and bottom margins.
func (ts *typesetter) running(pages []testdocs.FixedPage) error {
	for i := range pages {
		for _, r := range []struct {
			text string
			y    float64
		}{{ts.st.header, ts.st.margin / 2}, {ts.st.footer, pageH - ts.st.margin/2}} {
			if r.text == "" {
				continue
			}
			s := strings.NewReplacer("{page}", strconv.Itoa(i+1), "{pages}", strconv.Itoa(len(pages))).Replace(r.text)
			w, err := ts.m.width(s, false, 8.5)
			if err != nil {
				return err
			}
			pages[i].Items = append(pages[i].Items, testdocs.Item{X: (pageW - w) / 2, Y: r.y + 4, Text: s, Size: 8.5})
		}
	}
	return nil
}
