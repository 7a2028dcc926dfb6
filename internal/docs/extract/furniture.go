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

// furnitureKey normalises a line for repetition: case, spacing,
// punctuation and digits (so "Page 3 of 10" on every page is one key, and
// a speck OCR read as "." or "~" beside a running head does not make it
// another).
func furnitureKey(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r):
			return unicode.ToLower(r)
		case unicode.IsDigit(r):
			return '#'
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// specks are what OCR makes of dust beside a short line.
const specks = ".,'`\"~_:;·*^“”‘’"

// ocrPageNumberRE is a page number as OCR may read it: the digits
// confusable with letters (l2, S for 5, O for 0), "of" run into them
// ("lof5").
var ocrPageNumberRE = regexp.MustCompile(`(?i)^(?:(page|pg\.?|p\.)\s*)?([0-9lI|oOsSbBzZ]{1,4})(?:\s*(?:of|/)\s*([0-9lI|oOsSbBzZ]{1,4}))?$`)

// isPageNumber matches "3", "- 3 -", "Page 3", "Page 3 of 10", "3/10",
// "iii", and their OCR readings ("Page lof S", "Page 1 of 6.").
func isPageNumber(s string) bool {
	s = strings.TrimSpace(s)
	if dashedNumRE.MatchString(s) || plainPageNumber(s) {
		return true
	}
	return ocrPageNumber(strings.Trim(s, specks+" "))
}

func plainPageNumber(s string) bool {
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

// ocrPageNumber reads digits misread as letters. Letters alone are a page
// number only after "Page": a lone "I" or "S" is as likely a fragment.
func ocrPageNumber(s string) bool {
	m := ocrPageNumberRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	return m[1] != "" || strings.IndexFunc(m[2]+m[3], unicode.IsDigit) >= 0
}

// findFurniture returns, per page, the kind of each furniture line ("" for
// body lines).
func findFurniture(doc *Document, o ReflowOptions) [][]string {
	edges := make([][]edge, len(doc.Pages))
	// keys[e][page] are the keys of the page's lines at edge e.
	keys := map[edge][][]string{top: make([][]string, len(doc.Pages)), bottom: make([][]string, len(doc.Pages))}
	for pi, p := range doc.Pages {
		edges[pi] = edgeOf(p, o.Band)
		for li, l := range p.Lines {
			if e := edges[pi][li]; e != middle {
				keys[e][pi] = append(keys[e][pi], furnitureKey(l.Text))
			}
		}
	}
	need := max(2, int(math.Ceil(o.RepeatRatio*float64(len(doc.Pages)))))
	counts := map[edge]map[string]int{top: repeats(keys[top]), bottom: repeats(keys[bottom])}
	kinds := make([][]string, len(doc.Pages))
	for pi, p := range doc.Pages {
		kinds[pi] = make([]string, len(p.Lines))
		for li, l := range p.Lines {
			kinds[pi][li] = furnitureKind(l.Text, edges[pi][li], counts, need)
		}
	}
	return kinds
}

// Fuzzy repetition is bounded: at most maxFuzzyKeys distinct edge lines
// are compared pairwise, and only keys up to maxFuzzyLen long (running
// heads are short; a body line that happens to sit at the edge is not).
// Past that only exact repeats count.
const (
	maxFuzzyKeys = 300
	maxFuzzyLen  = 64
)

// repeats counts, for each key, the pages with a line of that key or of a
// key within OCR noise of it ("Confidentiat" on one page of
// "Confidential").
func repeats(pages [][]string) map[string]int {
	on := map[string][]int{} // key -> the pages it is on, ascending
	var distinct []string
	for pi, ks := range pages {
		for _, k := range ks {
			ps := on[k]
			if len(ps) == 0 {
				distinct = append(distinct, k)
			}
			if len(ps) == 0 || ps[len(ps)-1] != pi {
				on[k] = append(ps, pi)
			}
		}
	}
	fuzzy := len(distinct) <= maxFuzzyKeys
	out := make(map[string]int, len(distinct))
	for _, k := range distinct {
		pagesOf := map[int]bool{}
		for _, k2 := range distinct {
			if k2 == k || fuzzy && len(k) <= maxFuzzyLen && len(k2) <= maxFuzzyLen && similarKeys(k, k2) {
				for _, pi := range on[k2] {
					pagesOf[pi] = true
				}
			}
		}
		out[k] = len(pagesOf)
	}
	return out
}

// similarKeys: two keys of at least 6 characters within one edit per 8
// characters. Shorter keys ("#", "draft") must be equal: one edit there
// is another word.
func similarKeys(a, b string) bool {
	n := max(len(a), len(b))
	if min(len(a), len(b)) < 6 || n-min(len(a), len(b)) > n/8 {
		return false
	}
	return editDistance(a, b) <= n/8
}

// editDistance is the Levenshtein distance over bytes (keys are short).
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
