package testdocs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Flow page geometry: US Letter with 72 pt margins. Running headers and
// footers sit in the top and bottom margins.
const (
	letterWidth  = 612.0
	letterHeight = 792.0
	flowMargin   = 72.0
	headerBase   = 44.0  // baseline of the running header
	footerBase   = 756.0 // baseline of the running footer
	runningSize  = 9.0
	leadingRatio = 1.35 // line pitch as a multiple of the font size
	defaultBody  = 11.0
)

// token is one word of a block with the style it is set in.
type token struct {
	text string
	bold bool
}

// setLine is one laid-out line before pagination: its runs, size and the
// space it needs above it. Size 0 is a spacer (space only) and a negative
// size marks a page break.
type setLine struct {
	items       []Item // X relative to the line's left edge, Y unset
	size        float64
	spaceBefore float64
	keepNext    bool // a heading line: never the last line on a page
}

// LayoutFlow wraps and paginates f into positioned pages, the same shape
// as a Fixed document, so one renderer serves both (and a scan of a Flow
// puts every word where the PDF does). It fails on text the Go fonts
// cannot draw.
func LayoutFlow(f Flow) (Fixed, error) {
	m, err := newMetrics()
	if err != nil {
		return Fixed{}, err
	}
	body := f.FontSize
	if body <= 0 {
		body = defaultBody
	}
	var lines []setLine
	for i, b := range f.Blocks {
		bl, err := setBlock(m, b, body, f.Hyphenate)
		if err != nil {
			return Fixed{}, fmt.Errorf("block %d: %w", i, err)
		}
		lines = append(lines, bl...)
	}
	pages := paginate(lines)
	if err := addRunning(m, pages, f.Header, headerBase); err != nil {
		return Fixed{}, fmt.Errorf("header: %w", err)
	}
	if err := addRunning(m, pages, f.Footer, footerBase); err != nil {
		return Fixed{}, fmt.Errorf("footer: %w", err)
	}
	return Fixed{Pages: pages, Width: letterWidth, Height: letterHeight, Meta: f.Meta}, nil
}

func setBlock(m *metrics, b Block, body float64, hyphenate bool) ([]setLine, error) {
	width := letterWidth - 2*flowMargin - b.Indent
	switch b.Kind {
	case PageBreak:
		return []setLine{{size: -1}}, nil // the page-break marker
	case Title:
		size := body * 1.7
		ls, err := wrap(m, tokens("", b.Text, true), width, size, false)
		if err != nil {
			return nil, err
		}
		for i := range ls {
			if err := centre(m, &ls[i], width); err != nil {
				return nil, err
			}
		}
		return spaced(ls, b.Indent, 0, body), nil
	case Heading:
		size := body * 1.2
		ls, err := wrap(m, tokens("", b.Text, true), width, size, false)
		if err != nil {
			return nil, err
		}
		for i := range ls {
			ls[i].keepNext = true
		}
		return spaced(ls, b.Indent, body*0.9, 0), nil
	default:
		ls, err := wrap(m, tokens(b.RunIn, b.Text, b.Bold), width, body, hyphenate)
		if err != nil {
			return nil, err
		}
		return spaced(ls, b.Indent, body*0.6, 0), nil
	}
}

// spaced shifts a block's lines by its indent and gives its first line the
// space above it (and the following block extra space via after).
func spaced(ls []setLine, indent, before, after float64) []setLine {
	for i := range ls {
		for j := range ls[i].items {
			ls[i].items[j].X += indent
		}
	}
	if len(ls) > 0 {
		ls[0].spaceBefore += before
	}
	if after > 0 {
		ls = append(ls, setLine{size: 0, spaceBefore: after})
	}
	return ls
}

func tokens(runIn, text string, bold bool) []token {
	var ts []token
	for _, w := range strings.Fields(runIn) {
		ts = append(ts, token{w, true})
	}
	for _, w := range strings.Fields(text) {
		ts = append(ts, token{w, bold})
	}
	return ts
}

// wrap breaks tokens into lines no wider than width (a single word wider
// than the line overflows rather than being lost).
func wrap(m *metrics, ts []token, width, size float64, hyphenate bool) ([]setLine, error) {
	var out []setLine
	var cur []token
	used := 0.0
	for len(ts) > 0 {
		t := ts[0]
		w, err := m.width(t.text, t.bold, size)
		if err != nil {
			return nil, err
		}
		sp := 0.0
		if len(cur) > 0 {
			if sp, err = m.width(" ", t.bold, size); err != nil {
				return nil, err
			}
		}
		if used+sp+w <= width || len(cur) == 0 && !hyphenate {
			cur, used, ts = append(cur, t), used+sp+w, ts[1:]
			continue
		}
		if hyphenate {
			head, tail, ok, err := hyphenateWord(m, t, width-used-sp, size)
			if err != nil {
				return nil, err
			}
			if ok {
				cur = append(cur, head)
				ts[0] = tail
			} else if len(cur) == 0 {
				cur, ts = append(cur, t), ts[1:]
			}
		}
		l, err := runs(m, cur, size)
		if err != nil {
			return nil, err
		}
		out, cur, used = append(out, l), nil, 0
	}
	if len(cur) > 0 {
		l, err := runs(m, cur, size)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// hyphenateWord splits t so its head plus a hyphen fits in avail. Only
// plain alphabetic words of seven or more letters are split, leaving at
// least three letters each side; there is no dictionary, so break points
// are wherever the space runs out (which is what extraction must undo).
func hyphenateWord(m *metrics, t token, avail, size float64) (head, tail token, ok bool, err error) {
	core := strings.TrimRightFunc(t.text, unicode.IsPunct)
	rs := []rune(core)
	if len(rs) < 7 || !allLetters(rs) {
		return token{}, token{}, false, nil
	}
	for n := len(rs) - 3; n >= 3; n-- {
		h := string(rs[:n]) + "-"
		w, err := m.width(h, t.bold, size)
		if err != nil {
			return token{}, token{}, false, err
		}
		if w <= avail {
			return token{h, t.bold}, token{t.text[len(string(rs[:n])):], t.bold}, true, nil
		}
	}
	return token{}, token{}, false, nil
}

func allLetters(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// runs turns a line's tokens into items, one per change of weight.
func runs(m *metrics, ts []token, size float64) (setLine, error) {
	l := setLine{size: size}
	x := 0.0
	for i := 0; i < len(ts); {
		j := i
		for j < len(ts) && ts[j].bold == ts[i].bold {
			j++
		}
		words := make([]string, 0, j-i)
		for _, t := range ts[i:j] {
			words = append(words, t.text)
		}
		text := strings.Join(words, " ")
		l.items = append(l.items, Item{X: x, Text: text, Size: size, Bold: ts[i].bold})
		w, err := m.width(text+" ", ts[i].bold, size)
		if err != nil {
			return setLine{}, err
		}
		x += w
		i = j
	}
	return l, nil
}

// centre moves a line's items so the line is centred in width.
func centre(m *metrics, l *setLine, width float64) error {
	total := 0.0
	for i, it := range l.items {
		w, err := m.width(it.Text, it.Bold, it.Size)
		if err != nil {
			return err
		}
		if i < len(l.items)-1 {
			sp, err := m.width(" ", it.Bold, it.Size)
			if err != nil {
				return err
			}
			w += sp
		}
		total += w
	}
	shift := (width - total) / 2
	for i := range l.items {
		l.items[i].X += shift
	}
	return nil
}

// paginate stacks lines top to bottom, starting a new page when a line
// does not fit, and moving a heading to the next page rather than leaving
// it alone at the bottom.
func paginate(lines []setLine) []FixedPage {
	bottom := letterHeight - flowMargin
	pages := []FixedPage{{}}
	top := flowMargin
	newPage := func() {
		pages = append(pages, FixedPage{})
		top = flowMargin
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.size < 0 { // the page-break marker
			newPage()
			continue
		}
		atTop := top == flowMargin
		y := top
		if !atTop {
			y += l.spaceBefore
		}
		if y+l.size*leadingRatio > bottom || l.keepNext && !fitsWithNext(lines[i:], y, bottom) && !atTop {
			newPage()
			y = top
		}
		page := &pages[len(pages)-1]
		for _, it := range l.items {
			it.X += flowMargin
			it.Y = y + l.size
			page.Items = append(page.Items, it)
		}
		top = y + l.size*leadingRatio
	}
	return pages
}

// fitsWithNext reports whether a heading line ls[0] placed at y (and any
// heading lines after it) fits together with the first line of the block
// that follows.
func fitsWithNext(ls []setLine, y, bottom float64) bool {
	y += ls[0].size * leadingRatio
	for _, l := range ls[1:] {
		if l.size < 0 {
			return true
		}
		y += l.spaceBefore + l.size*leadingRatio
		if y > bottom {
			return false
		}
		if l.size > 0 && !l.keepNext {
			return true
		}
	}
	return y <= bottom
}

// addRunning puts text (with {page} and {pages} filled in) centred at
// baseline y on every page.
func addRunning(m *metrics, pages []FixedPage, text string, y float64) error {
	if text == "" {
		return nil
	}
	for i := range pages {
		s := strings.NewReplacer("{page}", strconv.Itoa(i+1), "{pages}", strconv.Itoa(len(pages))).Replace(text)
		w, err := m.width(s, false, runningSize)
		if err != nil {
			return err
		}
		pages[i].Items = append(pages[i].Items, Item{X: (letterWidth - w) / 2, Y: y, Text: s, Size: runningSize})
	}
	return nil
}
