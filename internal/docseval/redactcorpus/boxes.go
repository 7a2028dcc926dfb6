package redactcorpus

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// rect is a box in points, origin top left.
type rect struct{ x0, y0, x1, y1 float64 }

func (w Word) rect() rect { return rect{w.XMin, w.YMin, w.XMax, w.YMax} }

func boxRect(b result.Box) rect { return rect{b.XMin, b.YMin, b.XMax, b.YMax} }

func (r rect) area() float64 { return max(0, r.x1-r.x0) * max(0, r.y1-r.y0) }

func (r rect) clip(o rect) (rect, bool) {
	c := rect{max(r.x0, o.x0), max(r.y0, o.y0), min(r.x1, o.x1), min(r.y1, o.y1)}
	return c, c.x1 > c.x0 && c.y1 > c.y0
}

// covered returns the fraction of r's area under the union of boxes,
// exactly: the boxes clipped to r cut it into a grid of cells, each
// inside some box or none.
func covered(r rect, boxes []rect) float64 {
	a := r.area()
	if a <= 0 {
		return 0
	}
	var in []rect
	xs, ys := []float64{r.x0, r.x1}, []float64{r.y0, r.y1}
	for _, b := range boxes {
		if c, ok := r.clip(b); ok {
			in = append(in, c)
			xs, ys = append(xs, c.x0, c.x1), append(ys, c.y0, c.y1)
		}
	}
	if len(in) == 0 {
		return 0
	}
	sort.Float64s(xs)
	sort.Float64s(ys)
	sum := 0.0
	for i := 1; i < len(xs); i++ {
		for j := 1; j < len(ys); j++ {
			mx, my := (xs[i-1]+xs[i])/2, (ys[j-1]+ys[j])/2
			for _, c := range in {
				if c.x0 <= mx && mx <= c.x1 && c.y0 <= my && my <= c.y1 {
					sum += (xs[i] - xs[i-1]) * (ys[j] - ys[j-1])
					break
				}
			}
		}
	}
	return sum / a
}

// typedBox is one painted box of a finding.
type typedBox struct {
	typ  string
	page int
	r    rect
}

func boxesOf(fs []result.Finding) []typedBox {
	var out []typedBox
	for _, f := range fs {
		for _, b := range f.Boxes {
			out = append(out, typedBox{f.Type, f.Page, boxRect(b)})
		}
	}
	return out
}

// selectBoxes returns the rects on page whose type is typ ("" = any).
func selectBoxes(bs []typedBox, page int, typ string) []rect {
	var out []rect
	for _, b := range bs {
		if b.page == page && (typ == "" || b.typ == typ) {
			out = append(out, b.r)
		}
	}
	return out
}

// addPages scores one page document by boxes (see Score).
func (rep *Report) addPages(t Truth, fs []result.Finding) {
	bs := boxesOf(fs)
	inValue, valueGone := false, true
	endValue := func() {
		if inValue {
			rep.Values++
			if valueGone {
				rep.ValuesGone++
			}
		}
		inValue, valueGone = false, true
	}
	for k, w := range t.Words {
		if w.Type == "" || k > 0 && (t.Words[k-1].Type != w.Type || t.Words[k-1].Page != w.Page) {
			endValue()
		}
		if w.Type == "" {
			continue
		}
		inValue = true
		st := rep.stats(w.Type)
		st.TruthSpans++
		if covered(w.rect(), selectBoxes(bs, w.Page, w.Type)) >= 0.5 {
			st.Found++
		} else {
			rep.Misses = append(rep.Misses, fmt.Sprintf("%s: %s p%d word %d", t.Name, w.Type, w.Page, k))
		}
		n := utf8.RuneCountInString(w.Text)
		rep.TruthChars += n
		if covered(w.rect(), selectBoxes(bs, w.Page, "")) < 0.5 {
			rep.Leaked += n
			valueGone = false
		}
	}
	endValue()
	for k, b := range bs {
		st, ok := rep.Types[b.typ]
		if !ok {
			continue
		}
		st.Predicted++
		if boxCorrect(b, t.Words) {
			st.Correct++
		} else {
			rep.FalsePositives = append(rep.FalsePositives, fmt.Sprintf("%s: %s p%d box %d", t.Name, b.typ, b.page, k))
		}
	}
}

// boxCorrect: the box covers half or more of a truth word of its type.
func boxCorrect(b typedBox, words []Word) bool {
	for _, w := range words {
		if w.Page == b.page && w.Type == b.typ && covered(w.rect(), []rect{b.r}) >= 0.5 {
			return true
		}
	}
	return false
}
