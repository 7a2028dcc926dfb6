package extract

import (
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
	for pi, p := range doc.Pages {
		st := pageStats(p, kinds[pi])
		for li, l := range p.Lines {
			ref := LineRef{Page: pi + 1, Line: li}
			if k := kinds[pi][li]; k != "" {
				body.Furniture = append(body.Furniture, Furniture{LineRef: ref, Kind: k, Text: l.Text})
				continue
			}
			lines = append(lines, flowLine{ref: ref, line: l, stats: st})
		}
	}
	body.Paragraphs = paragraphs(lines, vocabulary(doc))
	return body
}

// flowLine is a body line with its page's layout statistics.
type flowLine struct {
	ref   LineRef
	line  Line
	stats *layoutStats
}

// layoutStats describe a page's body text: where lines start, how wide a
// full line is, how tall a line is and how far apart lines are.
type layoutStats struct {
	left, width, height, pitch float64
}

func pageStats(p Page, kinds []string) *layoutStats {
	var lefts, widths, heights, pitches []float64
	var prev *Line
	for i := range p.Lines {
		if kinds[i] != "" {
			continue
		}
		l := &p.Lines[i]
		lefts = append(lefts, l.Box.XMin)
		heights = append(heights, l.Box.YMax-l.Box.YMin)
		if prev != nil {
			if d := l.Box.YMin - prev.Box.YMin; d > 0 {
				pitches = append(pitches, d)
			}
		}
		prev = l
	}
	st := &layoutStats{left: quantile(lefts, 0.1), height: quantile(heights, 0.5), pitch: quantile(pitches, 0.5)}
	for i := range p.Lines {
		if kinds[i] == "" {
			widths = append(widths, p.Lines[i].Box.XMax-st.left)
		}
	}
	st.width = quantile(widths, 0.9)
	return st
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

func width(l flowLine) float64 { return l.line.Box.XMax - l.stats.left }

// full says a line reaches (nearly) the right edge of the text: the next
// word would not have fitted, so the paragraph continues.
func full(l flowLine) bool { return width(l) >= 0.85*l.stats.width }

// breakBefore decides whether n starts a new paragraph after l.
func breakBefore(l, n flowLine) bool {
	if n.ref.Page != l.ref.Page {
		return breakAcrossPages(l, n)
	}
	st := n.stats
	lb, nb := l.line.Box, n.line.Box
	switch {
	case st.pitch > 0 && nb.YMin-lb.YMin > 1.25*st.pitch: // a blank gap
		return true
	case nb.YMin < lb.YMin-0.5*st.height: // moved up: next column or region
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
	if !full(l) || n.line.Box.XMin > n.stats.left+0.8*n.stats.height {
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
	if l.stats.height > 0 && l.line.Box.YMax-l.line.Box.YMin > 1.15*l.stats.height && len(l.line.Words) <= 12 {
		return true
	}
	if width(l) >= 0.6*l.stats.width {
		return false
	}
	return numberedRE.MatchString(l.line.Text) || !endsSentence(l.line.Text) || isAllCaps(l.line.Text)
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
