package redactcorpus

import (
	"math"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Page size (US Letter, what testdocs renders Fixed pages on) and the
// lowest baseline a page takes before the text flows onto the next.
// PageWidth and PageHeight are a page document's size in points (Letter).
const PageWidth, PageHeight = 612.0, 792.0

const (
	pageW, pageH = PageWidth, PageHeight
	pageBottom   = 730.0
)

// Word is one word of a page document with its box (points, origin top
// left, as extract.Box) and the entity type it belongs to ("" if none).
// For scans the box is where the word ends up on the skewed page.
type Word struct {
	Page int     `json:"page"` // 1-based
	Line int     `json:"line"` // index of the line (Item) on its page
	Text string  `json:"text"`
	XMin float64 `json:"x_min"`
	YMin float64 `json:"y_min"`
	XMax float64 `json:"x_max"`
	YMax float64 `json:"y_max"`
	Type string  `json:"type,omitempty"`
}

// PageDoc is a page document: what to render, and every word's position.
type PageDoc struct {
	Fixed testdocs.Fixed
	Scan  *testdocs.Scan // non-nil: render as a scan (image-only)
	Words []Word
}

// pageBuilder places runs of text on Fixed pages and records word boxes
// with the renderer's own font metrics.
type pageBuilder struct {
	b     *builder
	pd    *PageDoc
	m     *metrics
	page  int
	lines int
}

func newPageBuilder(b *builder) *pageBuilder {
	pb := &pageBuilder{b: b, pd: &PageDoc{}, m: newMetrics()}
	pb.newPage()
	return pb
}

func (pb *pageBuilder) newPage() {
	if pb.page > 0 {
		pb.b.text("\f")
	}
	pb.pd.Fixed.Pages = append(pb.pd.Fixed.Pages, testdocs.FixedPage{})
	pb.page++
	pb.lines = 0
}

// part is a run of one line: plain text (typ "") or an entity.
type part struct{ typ, text string }

func txt(s string) part { return part{"", s} }

// line places parts as one Item at (x, y) (y = baseline) in size pt.
func (pb *pageBuilder) line(x, y, size float64, parts ...part) {
	pb.item(x, y, size, false, parts...)
}

// item places parts as one Item, optionally bold.
func (pb *pageBuilder) item(x, y, size float64, bold bool, parts ...part) {
	if pb.lines > 0 {
		pb.b.text("\n")
	}
	var full strings.Builder
	var ranges [][3]int // start, end, index into parts
	for k, p := range parts {
		start := full.Len()
		full.WriteString(p.text)
		ranges = append(ranges, [3]int{start, full.Len(), k})
		if p.typ != "" {
			pb.b.pii(p.typ, p.text)
		} else {
			pb.b.text(p.text)
		}
	}
	pb.words(x, y, size, bold, full.String(), func(i, j int) string {
		for _, r := range ranges {
			if parts[r[2]].typ != "" && r[0] < j && i < r[1] {
				return parts[r[2]].typ
			}
		}
		return ""
	})
	pg := &pb.pd.Fixed.Pages[pb.page-1]
	pg.Items = append(pg.Items, testdocs.Item{X: x, Y: y, Text: full.String(), Size: size, Bold: bold})
	pb.lines++
}

// words records the words of a line with their boxes; typeOf names the
// entity a word's bytes [i, j) overlap.
func (pb *pageBuilder) words(x, y, size float64, bold bool, line string, typeOf func(i, j int) string) {
	up, down := pb.m.extent(bold, size)
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' {
			j++
		}
		x0 := x + pb.m.width(line[:i], bold, size)
		x1 := x + pb.m.width(line[:j], bold, size)
		pb.pd.Words = append(pb.pd.Words, Word{Page: pb.page, Line: pb.lines, Text: line[i:j],
			XMin: x0, YMin: y - up, XMax: x1, YMax: y + down, Type: typeOf(i, j)})
		i = j
	}
}

// flowWord is one word of a paragraph and the part it came from; brk
// forces a line break before it.
type flowWord struct {
	text      string
	typ       string
	part      int
	brk, glue bool
}

// flowWords splits parts into words; a "\n" in a part is a hard break,
// and punctuation opening a part sticks to the word before it.
func flowWords(parts []part) []flowWord {
	var ws []flowWord
	for k, p := range parts {
		for si, seg := range strings.Split(p.text, "\n") {
			for fi, f := range strings.Fields(seg) {
				glue := k > 0 && si == 0 && fi == 0 && strings.ContainsAny(seg[:1], ".,;:)")
				ws = append(ws, flowWord{f, p.typ, k, si > 0 && fi == 0, glue})
			}
		}
	}
	return ws
}

// sep is what goes before word w on a line: nothing if it is glued.
func (w flowWord) sep() string {
	if w.glue {
		return ""
	}
	return " "
}

// para sets parts as a paragraph wrapped to width from (x, *y), moving *y
// down by lead per line and onto a new page past the bottom margin. An
// entity with spaces in it may be wrapped across lines, as real letters
// wrap phone numbers, addresses and names.
func (pb *pageBuilder) para(x float64, y *float64, width, size, lead float64, parts ...part) {
	ws := flowWords(parts)
	for len(ws) > 0 {
		n, w := 1, pb.m.width(ws[0].text, false, size)
		for n < len(ws) && !ws[n].brk {
			w2 := w + pb.m.width(ws[n].sep()+ws[n].text, false, size)
			if w2 > width {
				break
			}
			n, w = n+1, w2
		}
		if *y > pageBottom {
			pb.newPage()
			*y = 72
		}
		pb.line(x, *y, size, joinRuns(ws[:n])...)
		ws = ws[n:]
		*y += lead
	}
}

// joinRuns turns a line's words back into parts: consecutive words of one
// part joined by spaces, and the spaces between parts as plain text.
func joinRuns(ws []flowWord) []part {
	var out []part
	for i, w := range ws {
		switch {
		case i > 0 && ws[i-1].part == w.part:
			out[len(out)-1].text += " " + w.text
		case i > 0 && w.glue:
			out = append(out, part{w.typ, w.text})
		case i > 0:
			out = append(out, txt(" "), part{w.typ, w.text})
		default:
			out = append(out, part{w.typ, w.text})
		}
	}
	return out
}

// rule draws a table border.
func (pb *pageBuilder) rule(x1, y1, x2, y2 float64) {
	pg := &pb.pd.Fixed.Pages[pb.page-1]
	pg.Rules = append(pg.Rules, testdocs.Rule{X1: x1, Y1: y1, X2: x2, Y2: y2})
}

// scanned makes the document a scan, degraded in one of three ways
// (an office scan, a fax, a phone photo) with seed-varied strength, and
// moves every word's box to where the skew puts it on the image, so
// truth boxes are where a reader (and OCR) sees the word.
func (pb *pageBuilder) scanned(g *gen) {
	s := &testdocs.Scan{DPI: []int{200, 300}[g.r.IntN(2)], Skew: float64(g.n(-8, 8)) / 10,
		Noise: float64(g.n(2, 5)) / 100, Blur: float64(g.n(0, 6)) / 10, Seed: int64(g.n(1, 1<<30))}
	switch g.r.IntN(3) {
	case 1: // a fax: black and white, specks
		s.DPI, s.Bilevel, s.Noise = 200, true, float64(g.n(2, 4))/100
	case 2: // a phone photo: tinted paper, soft focus, lossy, crooked
		s.Darkness, s.Blur, s.JPEG = float64(g.n(10, 25))/100, float64(g.n(6, 10))/10, g.n(55, 75)
		s.Skew = float64(g.n(15, 40)) / 10 * float64(1-2*g.r.IntN(2))
	}
	pb.pd.Scan = s
	if s.Skew == 0 {
		return
	}
	for i := range pb.pd.Words {
		w := &pb.pd.Words[i]
		w.XMin, w.YMin, w.XMax, w.YMax = skewBox(w.XMin, w.YMin, w.XMax, w.YMax, s.Skew)
	}
}

// skewBox turns a box's corners clockwise by deg about the page centre
// (as testdocs rotates a scan) and returns their bounding box.
func skewBox(x0, y0, x1, y1, deg float64) (float64, float64, float64, float64) {
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	cx, cy := pageW/2, pageH/2
	ax, ay, bx, by := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		dx, dy := p[0]-cx, p[1]-cy
		rx, ry := cx+c*dx-s*dy, cy+s*dx+c*dy
		ax, ay, bx, by = math.Min(ax, rx), math.Min(ay, ry), math.Max(bx, rx), math.Max(by, ry)
	}
	return ax, ay, bx, by
}
