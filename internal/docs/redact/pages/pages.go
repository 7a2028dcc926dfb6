package pages

import (
	"math"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact/analyzer"
	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/operator"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Finding is one finding on a page (see result.Finding).
type Finding = result.Finding

type span = analyzer.Span

// BoxPadding is how far (points) a painted box extends past a word's
// box, so antialiased edges and ascenders are covered too.
const BoxPadding = 2.0

// pageText is one page's text (lines joined by "\n", words by " ") with
// each word's byte range.
type pageText struct {
	text  string
	words []pageWord
	lines []pageLine
}

// pageWord is a word: its bytes in text, its line, its box on the page
// (what is painted) and its layout box (see straighten; what tables are
// read on).
type pageWord struct {
	start, end int
	line       int
	box, lbox  extract.Box
}

type pageLine struct {
	start, end int         // bytes in text
	lbox       extract.Box // around its words' layout boxes
}

func buildPageText(p *extract.Page) *pageText {
	pt := &pageText{}
	var b strings.Builder
	cx, cy := p.Width/2, p.Height/2
	for li, l := range p.Lines {
		if li > 0 {
			b.WriteByte('\n')
		}
		line := pageLine{start: b.Len()}
		for wi, w := range l.Words {
			if wi > 0 {
				b.WriteByte(' ')
			}
			s := b.Len()
			b.WriteString(w.Text)
			lb := straighten(w.Box, p.SkewDegrees, cx, cy)
			if wi == 0 {
				line.lbox = lb
			}
			line.lbox = extractUnion(line.lbox, lb)
			pt.words = append(pt.words, pageWord{start: s, end: b.Len(), line: li, box: w.Box, lbox: lb})
		}
		line.end = b.Len()
		pt.lines = append(pt.lines, line)
	}
	pt.text = b.String()
	return pt
}

// straighten undoes extraction's mapping of a box found on a deskewed
// page back onto the page as it is: extraction turned the box by deg
// about (cx, cy) and took the upright box around it; this returns the
// box it started from. On a crooked scan the mapped boxes are taller than
// their words and lean with the skew, so gaps between columns shrink
// and columns drift; table layout is read on the straight boxes.
func straighten(b extract.Box, deg, cx, cy float64) extract.Box {
	if deg == 0 {
		return b
	}
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	as, den := math.Abs(s), c*c-s*s
	bw, bh := b.XMax-b.XMin, b.YMax-b.YMin
	w, h := max((bw*c-bh*as)/den, 1), max((bh*c-bw*as)/den, 1)
	dx, dy := (b.XMin+b.XMax)/2-cx, (b.YMin+b.YMax)/2-cy
	x, y := cx+c*dx+s*dy, cy-s*dx+c*dy
	return extract.Box{XMin: x - w/2, YMin: y - h/2, XMax: x + w/2, YMax: y + h/2}
}

// Finder finds PII on extracted pages.
type Finder struct {
	an *analyzer.Analyzer
	op *operator.Operator
}

// New returns a finder that analyses with an and hashes with op (when
// the policy hashes a type, page findings carry the hash).
func New(an *analyzer.Analyzer, op *operator.Operator) *Finder { return &Finder{an: an, op: op} }

// Pages finds PII on each page of an extracted document and returns
// findings carrying the page number and the boxes to paint. Start and End
// index the page's text as lines joined by "\n" and words by " " (for a
// finding inside a table cell that wraps, from its first word to its
// last). Besides the page text as a whole, each table cell is analysed
// under its column's header and together with the cell below it (see
// cells.go), which is where forms and tables put their context and wrap
// their values.
func (r *Finder) Pages(doc *extract.Document) []Finding {
	var out []Finding
	for i := range doc.Pages {
		out = append(out, r.page(&doc.Pages[i])...)
	}
	return out
}

// pageFinder collects one page's findings; a word belongs to the
// findings that cover it, and a later finding must cover some word no
// earlier one did.
type pageFinder struct {
	r       *Finder
	spans   func(string) []span // the analysis for this page's kind of text
	p       *extract.Page
	pt      *pageText
	conv    *nlp.CPConverter
	covered []bool
	out     []Finding
}

func (r *Finder) page(p *extract.Page) []Finding {
	pt := buildPageText(p)
	pf := &pageFinder{r: r, p: p, pt: pt, spans: r.an.Spans, conv: nlp.NewCPConverter(pt.text), covered: make([]bool, len(pt.words))}
	if p.Method == extract.MethodOCR {
		pf.spans = r.an.OCRSpans
	}
	tb := pf.table()
	// A column headed by a type ("SSN", "Phone") says best what its
	// cells hold, so those go first; then the page text as a whole; then
	// the other headed cells and cells with the cell below.
	pf.columns(tb, true)
	for _, s := range pf.spans(pt.text) {
		pf.add(s, pt.text[s.Start:s.End], pt.wordsIn(s.Start, s.End))
	}
	pf.columns(tb, false)
	pf.pairs(tb)
	return pf.out
}

// add records a finding for span s over words (indexes into pt.words),
// unless every one of them is covered already.
func (pf *pageFinder) add(s span, value string, words []int) {
	fresh := false
	for _, w := range words {
		fresh = fresh || !pf.covered[w]
	}
	if !fresh {
		return
	}
	for _, w := range words {
		pf.covered[w] = true
	}
	pt, p := pf.pt, pf.p
	first, last := pt.words[words[0]], pt.words[words[len(words)-1]]
	f := Finding{Type: string(s.Type), Start: pf.conv.At(first.start), End: pf.conv.At(last.end),
		Page: p.Number, Detector: s.Detector, Score: analyzer.Round2(s.Score)}
	f.Boxes = pt.wordBoxes(words)
	if pf.r.op.Hashes(s.Type) {
		f.Hash = pf.r.op.Hash(s.Type, value)
	}
	pf.out = append(pf.out, f)
}

// wordsIn returns the words a byte range of the page text touches.
func (pt *pageText) wordsIn(start, end int) []int {
	var out []int
	for i, w := range pt.words {
		if w.end > start && w.start < end {
			out = append(out, i)
		}
	}
	return out
}

// xOverlap: the boxes share more than 30% of the narrower one's width.
func xOverlap(a, b extract.Box) bool {
	ov := math.Min(a.XMax, b.XMax) - math.Max(a.XMin, b.XMin)
	return ov > 0.3*math.Min(a.XMax-a.XMin, b.XMax-b.XMin)
}

// wordBoxes returns padded boxes for words (in page order), one per run
// of them on a line. A word only partly in a finding is boxed whole
// (never leave part of an identifier showing). Boxes are used as
// extraction gives them: on a page deskewed for OCR they are already
// mapped back onto the page as it is (extract.Page.SkewDegrees); turning
// them again would move them off the words by twice the skew.
func (pt *pageText) wordBoxes(words []int) []result.Box {
	var out []result.Box
	curLine := -1
	for _, i := range words {
		w := pt.words[i]
		b := pad(w.box)
		if w.line == curLine && len(out) > 0 {
			out[len(out)-1] = union(out[len(out)-1], b)
			continue
		}
		curLine = w.line
		out = append(out, b)
	}
	return out
}

func pad(b extract.Box) result.Box {
	return result.Box{XMin: b.XMin - BoxPadding, YMin: b.YMin - BoxPadding, XMax: b.XMax + BoxPadding, YMax: b.YMax + BoxPadding}
}

func union(a, b result.Box) result.Box {
	return result.Box{XMin: math.Min(a.XMin, b.XMin), YMin: math.Min(a.YMin, b.YMin),
		XMax: math.Max(a.XMax, b.XMax), YMax: math.Max(a.YMax, b.YMax)}
}
