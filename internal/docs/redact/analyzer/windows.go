package analyzer

import (
	"sort"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// Analysis windows: long texts are analysed in windows of windowSize
// bytes overlapping by windowOverlap, so memory and regex work stay
// bounded per window and any entity shorter than the overlap is seen
// whole by some window.
const (
	windowSize    = 64 << 10
	windowOverlap = 2 << 10
)

// Spans analyses text in windows and resolves overlaps.
func (a *Analyzer) Spans(text string) []Span {
	if len(text) <= windowSize {
		return a.Resolve(a.windowSpans(text))
	}
	var all []Span
	for core := 0; core < len(text); {
		coreEnd := cutPoint(text, core+windowSize-2*windowOverlap)
		lo := cutPoint(text, core-windowOverlap)
		hi := cutPoint(text, coreEnd+windowOverlap)
		for _, s := range a.Resolve(a.windowSpans(text[lo:hi])) {
			s.Start += lo
			s.End += lo
			if s.Start >= core && s.Start < coreEnd {
				all = append(all, s)
			}
		}
		core = coreEnd
	}
	return mergeSorted(all)
}

// mergeSorted settles the few overlaps left between neighbouring
// windows' spans (each window's own spans are already resolved) in one
// pass: of two overlapping spans the one place would keep stays.
func mergeSorted(in []Span) []Span {
	sort.Slice(in, func(i, j int) bool { return in[i].Start < in[j].Start })
	var out []Span
	for _, s := range in {
		n := len(out)
		if n == 0 || !out[n-1].Overlaps(s) {
			out = append(out, s)
			continue
		}
		prev := out[n-1]
		switch {
		case s.Contains(prev) && s.End-s.Start > prev.End-prev.Start && s.Score >= prev.Score-0.35:
			out[n-1] = s
		case prev.Contains(s) && prev.End-prev.Start > s.End-s.Start && prev.Score >= s.Score-0.35:
		case s.Score > prev.Score:
			out[n-1] = s
		}
	}
	return out
}

// cutPoint moves i to a nearby line break or space (within 256 bytes
// back) so windows do not cut words, else to a rune boundary.
func cutPoint(s string, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	for k := i; k > i-256 && k > 0; k-- {
		if s[k-1] == '\n' || s[k-1] == ' ' {
			return k
		}
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func (a *Analyzer) windowSpans(text string) []Span {
	return a.run(a.reg.Recognizers, nlp.NewWindow(text, a.reg.Labels))
}

// run runs the recognizers with an enabled type over w, in registry order.
func (a *Analyzer) run(rs []recognizer.Recognizer, w *nlp.Window) []Span {
	var out []Span
	for _, r := range rs {
		for _, t := range r.Types() {
			if a.pol.Enabled(t) {
				out = append(out, r.Find(w, a.pol.Enabled)...)
				break
			}
		}
	}
	return out
}

// Resolve drops spans under their type's threshold and settles overlaps:
// higher score first, then longer; a span that contains the spans it
// overlaps replaces them unless it scores much lower (a full address over
// a name inside it, a card over an account number).
func (a *Analyzer) Resolve(in []Span) []Span {
	c := make([]Span, 0, len(in))
	for _, s := range in {
		if s.End > s.Start && a.pol.Enabled(s.Type) && s.Score >= a.pol.Threshold(s.Type) {
			c = append(c, s)
		}
	}
	sort.Slice(c, func(i, j int) bool {
		if c[i].Score != c[j].Score {
			return c[i].Score > c[j].Score
		}
		if li, lj := c[i].End-c[i].Start, c[j].End-c[j].Start; li != lj {
			return li > lj
		}
		if c[i].Start != c[j].Start {
			return c[i].Start < c[j].Start
		}
		return c[i].Type < c[j].Type
	})
	var kept []Span
	for _, s := range c {
		kept = place(kept, s)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
	return kept
}

func place(kept []Span, s Span) []Span {
	var over []int
	for i, k := range kept {
		if k.Overlaps(s) {
			over = append(over, i)
		}
	}
	if len(over) == 0 {
		return append(kept, s)
	}
	for _, i := range over {
		k := kept[i]
		// Only a strictly longer span may replace what it covers.
		if !s.Contains(k) || s.End-s.Start == k.End-k.Start || s.Score < k.Score-0.35 {
			return kept
		}
	}
	out := kept[:0:0]
	for i, k := range kept {
		if !containsInt(over, i) {
			out = append(out, k)
		}
	}
	return append(out, s)
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
