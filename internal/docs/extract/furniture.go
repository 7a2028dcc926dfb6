package extract

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Page furniture is what a page carries besides its text: running headers
// and footers and page numbers. It is recognised by position (among the
// few lines nearest the top or bottom edge) and by repetition (the same
// text, digits aside, on at least RepeatRatio of the pages) or by the
// shape of a page number.

// Furniture kinds.
const (
	FurnitureHeader     = "header"
	FurnitureFooter     = "footer"
	FurniturePageNumber = "page_number"
)

// edgeLines is how many lines at each edge are considered.
const edgeLines = 3

var (
	pageNumberRE = regexp.MustCompile(`(?i)^(?:(?:page|pg\.?|p\.)\s*)?(?:\d{1,4}|[ivxlcdm]{1,8})(?:\s*(?:of|/)\s*\d{1,4})?$`)
	dashedNumRE  = regexp.MustCompile(`^[-–—]\s*\d{1,4}\s*[-–—]$`)
	romanRE      = regexp.MustCompile(`(?i)^m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$`)
	digitsRE     = regexp.MustCompile(`\d+`)
)

// edge says which end of its page a line is at, if any.
type edge int

const (
	middle edge = iota
	top
	bottom
)

// edgeOf marks the edgeLines topmost and bottommost lines of each page
// that also lie in the outer band (a fraction of the page height).
func edgeOf(p Page, band float64) []edge {
	idx := make([]int, len(p.Lines))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p.Lines[idx[a]].Box.YMin < p.Lines[idx[b]].Box.YMin })
	out := make([]edge, len(p.Lines))
	for k, i := range idx {
		b := p.Lines[i].Box
		switch {
		case k < edgeLines && b.YMax <= p.Height*band:
			out[i] = top
		case k >= len(idx)-edgeLines && b.YMin >= p.Height*(1-band):
			out[i] = bottom
		}
	}
	return out
}

// furnitureKey normalises a line for repetition: case, spacing and digits
// (so "Page 3 of 10" on every page is one key).
func furnitureKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return digitsRE.ReplaceAllString(s, "#")
}

// isPageNumber matches "3", "- 3 -", "Page 3", "Page 3 of 10", "3/10", "iii".
func isPageNumber(s string) bool {
	s = strings.TrimSpace(s)
	if dashedNumRE.MatchString(s) {
		return true
	}
	if !pageNumberRE.MatchString(s) {
		return false
	}
	f := strings.Fields(s)
	last := strings.TrimFunc(f[len(f)-1], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if strings.IndexFunc(s, unicode.IsDigit) >= 0 {
		return true
	}
	// Letters only: must be a valid roman numeral, not a word like "mix".
	return romanRE.MatchString(last) && last != ""
}

// findFurniture returns, per page, the kind of each furniture line ("" for
// body lines).
func findFurniture(doc *Document, o ReflowOptions) [][]string {
	edges := make([][]edge, len(doc.Pages))
	counts := map[edge]map[string]int{top: {}, bottom: {}}
	for pi, p := range doc.Pages {
		edges[pi] = edgeOf(p, o.Band)
		seen := map[string]bool{}
		for li, l := range p.Lines {
			e := edges[pi][li]
			k := furnitureKey(l.Text)
			if e == middle || seen[string(rune(e))+k] {
				continue
			}
			seen[string(rune(e))+k] = true
			counts[e][k]++
		}
	}
	need := max(2, int(math.Ceil(o.RepeatRatio*float64(len(doc.Pages)))))
	kinds := make([][]string, len(doc.Pages))
	for pi, p := range doc.Pages {
		kinds[pi] = make([]string, len(p.Lines))
		for li, l := range p.Lines {
			kinds[pi][li] = furnitureKind(l.Text, edges[pi][li], counts, need)
		}
	}
	return kinds
}

func furnitureKind(text string, e edge, counts map[edge]map[string]int, need int) string {
	switch {
	case e == middle:
		return ""
	case isPageNumber(text):
		return FurniturePageNumber
	case counts[e][furnitureKey(text)] >= need && e == top:
		return FurnitureHeader
	case counts[e][furnitureKey(text)] >= need:
		return FurnitureFooter
	}
	return ""
}
