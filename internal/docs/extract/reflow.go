package extract

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reflow turns a Document's lines back into running text for the jobs that
// read it (contract review): page furniture removed, words hyphenated at a
// line end re-joined, wrapped lines joined into paragraphs, headings kept
// as paragraphs of their own. It is for reading only: redaction must look
// at every line, furniture included, and so works on the Document.

// ReflowOptions tune furniture detection; the zero value uses defaults.
type ReflowOptions struct {
	// RepeatRatio is the share of pages an edge line must repeat on to be
	// a running header or footer. Default 0.5.
	RepeatRatio float64
	// Band is the fraction of the page height at the top and at the bottom
	// in which furniture may sit. Default 0.1: running heads live in the
	// margin, and a 1 inch margin is 9% of a Letter page.
	Band float64
}

// LineRef points at Document.Pages[Page-1].Lines[Line].
type LineRef struct {
	Page int `json:"page"`
	Line int `json:"line"`
}

// Paragraph is one paragraph (or heading) of running text.
type Paragraph struct {
	Text    string    `json:"text"`
	Heading bool      `json:"heading"`
	Pages   []int     `json:"pages"` // 1-based, ascending; two when it runs over a page break
	Lines   []LineRef `json:"lines"`
}

// Furniture is a line Reflow removed.
type Furniture struct {
	LineRef
	Kind string `json:"kind"` // FurnitureHeader, FurnitureFooter or FurniturePageNumber
	Text string `json:"text"`
}

// Body is a document's running text.
type Body struct {
	Paragraphs []Paragraph `json:"paragraphs"`
	Furniture  []Furniture `json:"furniture"`
}

// Text is the paragraphs separated by blank lines.
func (b *Body) Text() string {
	parts := make([]string, len(b.Paragraphs))
	for i, p := range b.Paragraphs {
		parts[i] = p.Text
	}
	return strings.Join(parts, "\n\n")
}

// Reflow rebuilds doc's paragraphs. It never modifies doc.
func Reflow(doc *Document, o ReflowOptions) *Body {
	if o.RepeatRatio <= 0 {
		o.RepeatRatio = 0.5
	}
	if o.Band <= 0 {
		o.Band = 0.1
	}
	kinds := findFurniture(doc, o)
	body := &Body{}
	var lines []flowLine
	boxes := make([][]Box, len(doc.Pages))
	pitches := make([][]float64, len(doc.Pages))
	for pi, p := range doc.Pages {
		boxes[pi] = layoutBoxes(p)
		pitches[pi] = linePitches(boxes[pi], kinds[pi])
	}
	stats := make([]*layoutStats, len(doc.Pages))
	var heights []float64
	for pi, p := range doc.Pages {
		stats[pi] = pageStats(p, boxes[pi], kinds[pi])
		if stats[pi].height > 0 {
			heights = append(heights, stats[pi].height)
		}
	}
	docPitch, docHeight := quantile(slices.Concat(pitches...), 0.25), quantile(heights, 0.5)
	for pi, p := range doc.Pages {
		st := stats[pi]
		st.pitch = pagePitch(pitches[pi], docPitch, st.height, docHeight)
		for li, l := range p.Lines {
			ref := LineRef{Page: pi + 1, Line: li}
			if k := kinds[pi][li]; k != "" {
				body.Furniture = append(body.Furniture, Furniture{LineRef: ref, Kind: k, Text: l.Text})
				continue
			}
			lines = append(lines, flowLine{ref: ref, line: l, box: boxes[pi][li], stats: st})
		}
	}
	body.Paragraphs = paragraphs(lines, vocabulary(doc))
	return body
}

// flowLine is a body line with its page's layout statistics.
type flowLine struct {
	ref   LineRef
	line  Line
	box   Box // where the line was set (see layoutBoxes)
	stats *layoutStats
}

// layoutStats describe a page's body text: where lines start, how wide a
// full line is, how tall a line is and how far apart lines are.
type layoutStats struct {
	left, width, height, pitch float64
	// larger is how much taller than the median a line must be to be set
	// in a larger type: on OCR pages boxes follow the letters (capitals,
	// brackets and descenders stand taller), so more is needed.
	larger float64
}

// pageStats measures a page's body lines; the caller sets pitch.
func pageStats(p Page, boxes []Box, kinds []string) *layoutStats {
	var lefts, widths, heights []float64
	for i, b := range boxes {
		if kinds[i] == "" {
			lefts = append(lefts, b.XMin)
			heights = append(heights, b.YMax-b.YMin)
		}
	}
	st := &layoutStats{left: quantile(lefts, 0.1), height: quantile(heights, 0.5), larger: 1.15}
	if p.Method == MethodOCR {
		st.larger = 1.3
	}
	for i, b := range boxes {
		if kinds[i] == "" {
			widths = append(widths, b.XMax-st.left)
		}
	}
	st.width = quantile(widths, 0.9)
	return st
}

// layoutBoxes are the page's line boxes as the lines were set: for an OCR
// page read deskewed, turned back straight. Its OCR boxes are mapped onto
// the page as it is, turned, which moves a line's ends up or down by their
// distance from the centre times the skew and makes a long line's box
// taller by its length times the skew: read as they are, a short last
// line seems to stand apart from its paragraph and a long body line to be
// set in a larger type than a short heading.
func layoutBoxes(p Page) []Box {
	out := make([]Box, len(p.Lines))
	for i, l := range p.Lines {
		out[i] = l.Box
		if p.SkewDegrees != 0 {
			out[i] = straighten(l.Box, p.SkewDegrees, p.Width/2, p.Height/2)
		}
	}
	return out
}

// straighten undoes turnBox for a box that was the upright bounding box
// of a w x h box turned deg clockwise about (cx, cy): its centre turned
// back, its size solved from W = w cos + h sin, H = w sin + h cos.
func straighten(b Box, deg, cx, cy float64) Box {
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Abs(math.Sin(th))
	bw, bh := b.XMax-b.XMin, b.YMax-b.YMin
	w, h := (bw*c-bh*s)/(c*c-s*s), (bh*c-bw*s)/(c*c-s*s)
	if w <= 0 || h <= 0 {
		w, h = bw, bh // a speck, or a box no turn made: leave its size
	}
	dx, dy := (b.XMin+b.XMax)/2-cx, (b.YMin+b.YMax)/2-cy
	sn := math.Sin(th)
	x, y := cx+c*dx+sn*dy, cy-sn*dx+c*dy
	return Box{XMin: x - w/2, YMin: y - h/2, XMax: x + w/2, YMax: y + h/2}
}

// midY is the middle of a line's box. Lines are spaced by their middles:
// an OCR box follows the letters, so a line with no ascenders ("expense.")
// has its top a few points lower than its neighbours', and measured by
// tops it would seem to stand after a blank line.
func midY(b Box) float64 { return (b.YMin + b.YMax) / 2 }

// linePitches are the distances from each body line to the next.
func linePitches(boxes []Box, kinds []string) []float64 {
	var out []float64
	prev := -1
	for i, b := range boxes {
		if kinds[i] != "" {
			continue
		}
		if prev >= 0 {
			if d := midY(b) - midY(boxes[prev]); d > 0 {
				out = append(out, d)
			}
		}
		prev = i
	}
	return out
}

// pagePitch is the distance between the lines of one paragraph on a page.
// The page's median says it when most of its lines run on in paragraphs;
// on a page of one-line paragraphs (a signature block, a list, a page cut
// short by a page break) the median is the paragraph spacing, and every
// blank gap would read as a line feed. Then the document's pitch (a low
// quantile over all pages: most lines of a contract are inside
// paragraphs) is taken, when the page is set no larger than the rest (OCR
// boxes of short lines are often lower than the document's median) or has
// lines that close up to it; a page in a larger type (a cover page) keeps
// its own.
func pagePitch(pitches []float64, docPitch, height, docHeight float64) float64 {
	own := quantile(pitches, 0.5)
	if docPitch <= 0 || own <= 1.15*docPitch {
		return own
	}
	if docHeight > 0 && height <= 1.15*docHeight {
		return docPitch
	}
	for _, d := range pitches {
		if math.Abs(d-docPitch) <= 0.1*docPitch {
			return docPitch
		}
	}
	return own
}

func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

var (
	sentenceEndRE = regexp.MustCompile(`[.!?:;]["'”’)\]]*$`)
	listMarkerRE  = regexp.MustCompile(`^(\(?[0-9]{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivxlc]+\)|[•·▪‣◦*–-])\s`)
	numberedRE    = regexp.MustCompile(`^((\d+\.)+\d*|\d{1,3}\)?|[A-Z]\.|[IVXLC]+\.|(?i:article|section|schedule|annex|appendix|exhibit|clause|part)\s+\S+)(\s|$)`)
)

func endsSentence(s string) bool { return sentenceEndRE.MatchString(s) }

func width(l flowLine) float64 { return l.box.XMax - l.stats.left }

// full says a line reaches (nearly) the right edge of the text: the next
// word would not have fitted, so the paragraph continues.
func full(l flowLine) bool { return width(l) >= 0.85*l.stats.width }

// breakBefore decides whether n starts a new paragraph after l.
func breakBefore(l, n flowLine) bool {
	if n.ref.Page != l.ref.Page {
		return breakAcrossPages(l, n)
	}
	st := n.stats
	lb, nb := l.box, n.box
	switch {
	case st.pitch > 0 && midY(nb)-midY(lb) > 1.25*st.pitch: // a blank gap
		return true
	case midY(nb) < midY(lb)-0.5*st.height: // moved up: next column or region
		return true
	case nb.XMin > lb.XMin+0.8*st.height && lb.XMin < st.left+0.5*st.height: // first-line indent
		return true
	case endsSentence(l.line.Text) && !full(l): // a short line ending a sentence
		return true
	case listMarkerRE.MatchString(n.line.Text) && endsSentence(l.line.Text):
		return true
	}
	return false
}

func breakAcrossPages(l, n flowLine) bool {
	if !full(l) || n.box.XMin > n.stats.left+0.8*n.stats.height {
		return true
	}
	if hyphenated(l.line.Text) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(n.line.Text)
	return endsSentence(l.line.Text) && !unicode.IsLower(first)
}

// isHeading: a line that starts a paragraph and is set larger than the
// body, or is short and either numbered ("7.", "Section 4") or not ended
// like a sentence, and is followed by more text. A wrapped body line is
// never short, so a short line with text after it is not running text.
func isHeading(l flowLine, startsPara bool, next *flowLine) bool {
	if !startsPara || next == nil {
		return false
	}
	if l.stats.height > 0 && l.box.YMax-l.box.YMin > l.stats.larger*l.stats.height && len(l.line.Words) <= 12 {
		return true
	}
	caps := isAllCaps(l.line.Text)
	if caps && !endsSentence(l.line.Text) && !full(l) && len(l.line.Words) <= 12 {
		// "SECTION 12. HANDLING DISAGREEMENTS": wide, but a paragraph of
		// capitals would fill its first line.
		return true
	}
	if width(l) >= 0.6*l.stats.width && !centred(l) {
		return false
	}
	return numberedRE.MatchString(l.line.Text) || !endsSentence(l.line.Text) || caps
}

// centred: a line set in the middle of the text column, well in from
// both margins and about as far from each, as titles are. It is short
// however far right it ends; and on a scan a title in capitals is hardly
// taller than body text (OCR boxes follow the letters), so its size does
// not tell it either.
func centred(l flowLine) bool {
	left := l.box.XMin - l.stats.left
	right := l.stats.left + l.stats.width - l.box.XMax
	return min(left, right) > 2*l.stats.height && math.Abs(left-right) < 0.1*l.stats.width
}

func isAllCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 2
}

// paragraphs groups body lines.
func paragraphs(lines []flowLine, vocab map[string]bool) []Paragraph {
	var out []Paragraph
	var cur *Paragraph
	for i, l := range lines {
		starts := cur == nil || cur.Heading || breakBefore(lines[i-1], l)
		var next *flowLine
		if i+1 < len(lines) {
			next = &lines[i+1]
		}
		if starts {
			out = append(out, Paragraph{Heading: isHeading(l, true, next)})
			cur = &out[len(out)-1]
			cur.Text = l.line.Text
		} else {
			cur.Text = joinLines(cur.Text, l.line.Text, vocab)
		}
		cur.Lines = append(cur.Lines, l.ref)
		if len(cur.Pages) == 0 || cur.Pages[len(cur.Pages)-1] != l.ref.Page {
			cur.Pages = append(cur.Pages, l.ref.Page)
		}
	}
	return out
}
