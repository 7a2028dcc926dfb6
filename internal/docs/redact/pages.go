package redact

import (
	"math"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact/contract"
)

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

type pageWord struct {
	start, end int
	line       int
	box        extract.Box
}

type pageLine struct {
	start, end int // bytes in text
	box        extract.Box
}

func buildPageText(p *extract.Page) *pageText {
	pt := &pageText{}
	var b strings.Builder
	for li, l := range p.Lines {
		if li > 0 {
			b.WriteByte('\n')
		}
		ls := b.Len()
		for wi, w := range l.Words {
			if wi > 0 {
				b.WriteByte(' ')
			}
			s := b.Len()
			b.WriteString(w.Text)
			pt.words = append(pt.words, pageWord{start: s, end: b.Len(), line: li, box: w.Box})
		}
		pt.lines = append(pt.lines, pageLine{start: ls, end: b.Len(), box: l.Box})
	}
	pt.text = b.String()
	return pt
}

// Pages finds PII on each page of an extracted document and returns
// findings carrying the page number and the boxes to paint. Start and End
// index the page's text as lines joined by "\n" and words by " ". Besides
// the page text as a whole, each line is analysed under the column
// header above it (a table's "SSN" or "Last name" cell), which is where
// forms and tables put their context.
func (r *Redactor) Pages(doc *extract.Document) []Finding {
	var out []Finding
	for i := range doc.Pages {
		p := &doc.Pages[i]
		pt := buildPageText(p)
		spans := r.an.spans(pt.text)
		spans = r.an.resolve(append(spans, r.columnSpans(pt, spans)...))
		conv := newCPConverter(pt.text)
		for _, s := range spans {
			f := Finding{Type: string(s.typ), Start: conv.at(s.start), End: conv.at(s.end),
				Page: p.Number, Detector: s.detector, Score: round2(s.score)}
			f.Boxes = pt.boxes(s.start, s.end, p.SkewDegrees, p.Width, p.Height)
			if r.op.pol.operator(s.typ) == OpHash {
				f.Hash = r.op.hash(s.typ, pt.text[s.start:s.end])
			}
			out = append(out, f)
		}
	}
	return out
}

// columnSpans analyses each line not already fully covered under the
// nearest header line above it in the same column: a line that is just a
// label phrase ("Account number", "Date of birth").
func (r *Redactor) columnSpans(pt *pageText, have []span) []span {
	var out []span
	for li, l := range pt.lines {
		if l.end == l.start || covered(have, l.start, l.end) {
			continue
		}
		h := pt.headerAbove(li, r.an.lx)
		if h < 0 {
			continue
		}
		hl := pt.lines[h]
		for _, s := range r.an.fieldSpans(pt.text[hl.start:hl.end], pt.text[l.start:l.end]) {
			s.start += l.start
			s.end += l.start
			s.detector += "+column"
			out = append(out, s)
		}
	}
	return out
}

func covered(spans []span, start, end int) bool {
	for _, s := range spans {
		if s.start <= start && s.end >= end {
			return true
		}
	}
	return false
}

// headerAbove returns the nearest line above line li (within 12 lines
// and 300 points) that overlaps it horizontally and is a label phrase,
// or -1. Lines between that are values of the same column are skipped.
func (pt *pageText) headerAbove(li int, lx *lexicon) int {
	me := pt.lines[li].box
	for k := li - 1; k >= 0 && k >= li-12; k-- {
		h := pt.lines[k]
		if h.box.YMax > me.YMin+1 || me.YMin-h.box.YMax > 300 || !xOverlap(h.box, me) {
			continue
		}
		if isLabelLine(pt.text[h.start:h.end], lx) {
			return k
		}
	}
	return -1
}

func xOverlap(a, b extract.Box) bool {
	ov := math.Min(a.XMax, b.XMax) - math.Max(a.XMin, b.XMin)
	return ov > 0.3*math.Min(a.XMax-a.XMin, b.XMax-b.XMin)
}

// isLabelLine: the line is short and one context or name label covers
// most of it.
func isLabelLine(s string, lx *lexicon) bool {
	if len(s) > 40 || strings.ContainsAny(s, "0123456789@") {
		return false
	}
	toks := tokenize(s)
	labels := findLabels(s, toks, lx.labels)
	n := 0
	for _, l := range labels {
		n += l.endTok - l.firstTok
	}
	return len(toks) > 0 && n*2 >= len(toks)
}

// boxes returns padded boxes for the words a byte span touches, one per
// run of touched words on a line. A word only partly in the span is
// boxed whole (never leave part of an identifier showing). When the page
// was deskewed before OCR, boxes are mapped back onto the page as it is
// (rotated by skew degrees about the centre) and widened to cover the
// rotated rectangle.
func (pt *pageText) boxes(start, end int, skew, pw, ph float64) []contract.Box {
	var out []contract.Box
	curLine := -1
	for _, w := range pt.words {
		if w.end <= start || w.start >= end {
			continue
		}
		b := pad(w.box)
		if skew != 0 {
			b = unskew(b, skew, pw, ph)
		}
		if w.line == curLine && len(out) > 0 {
			out[len(out)-1] = union(out[len(out)-1], b)
			continue
		}
		curLine = w.line
		out = append(out, b)
	}
	return out
}

func pad(b extract.Box) contract.Box {
	return contract.Box{XMin: b.XMin - BoxPadding, YMin: b.YMin - BoxPadding, XMax: b.XMax + BoxPadding, YMax: b.YMax + BoxPadding}
}

func union(a, b contract.Box) contract.Box {
	return contract.Box{XMin: math.Min(a.XMin, b.XMin), YMin: math.Min(a.YMin, b.YMin),
		XMax: math.Max(a.XMax, b.XMax), YMax: math.Max(a.YMax, b.YMax)}
}

// unskew rotates a box's corners by deg about the page centre and returns
// their bounding box.
func unskew(b contract.Box, deg, pw, ph float64) contract.Box {
	rad := deg * math.Pi / 180
	cx, cy := pw/2, ph/2
	sin, cos := math.Sin(rad), math.Cos(rad)
	out := contract.Box{XMin: math.Inf(1), YMin: math.Inf(1), XMax: math.Inf(-1), YMax: math.Inf(-1)}
	for _, p := range [][2]float64{{b.XMin, b.YMin}, {b.XMax, b.YMin}, {b.XMin, b.YMax}, {b.XMax, b.YMax}} {
		x, y := p[0]-cx, p[1]-cy
		rx, ry := cx+x*cos-y*sin, cy+x*sin+y*cos
		out.XMin, out.XMax = math.Min(out.XMin, rx), math.Max(out.XMax, rx)
		out.YMin, out.YMax = math.Min(out.YMin, ry), math.Max(out.YMax, ry)
	}
	return out
}
