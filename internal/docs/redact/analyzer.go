package redact

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Analysis windows: long texts are analysed in windows of windowSize
// bytes overlapping by windowOverlap, so memory and regex work stay
// bounded per window and any entity shorter than the overlap is seen
// whole by some window.
const (
	windowSize    = 64 << 10
	windowOverlap = 2 << 10
)

// window is one piece of text being analysed, with its tokens and labels.
type window struct {
	lx       *lexicon
	text     string
	toks     []token
	folds    []string // foldWord of each token, filled on first use
	labels   []label
	hasDigit bool
}

// fold returns token i folded for word lookups, computing each once.
func (w *window) fold(i int) string {
	if w.folds == nil {
		w.folds = make([]string, len(w.toks))
	}
	if w.folds[i] == "" {
		t := w.toks[i]
		w.folds[i] = foldWord(w.text[t.start:t.end])
	}
	return w.folds[i]
}

func newWindow(lx *lexicon, text string) *window {
	w := &window{lx: lx, text: text, toks: tokenize(text)}
	w.labels = findLabels(text, w.toks, lx.labels)
	for _, t := range w.toks {
		if t.digits {
			w.hasDigit = true
			break
		}
	}
	return w
}

// Analyzer finds entities in text under a policy's enabled types and
// thresholds. It is immutable and safe for concurrent use.
type Analyzer struct {
	lx  *lexicon
	pol *policy.Policy
}

// NewAnalyzer returns an analyzer for the policy (nil = policy.Default()).
func NewAnalyzer(pol *policy.Policy) (*Analyzer, error) {
	lx, err := loadLexicon()
	if err != nil {
		return nil, err
	}
	if pol == nil {
		pol = policy.Default()
	}
	return &Analyzer{lx: lx, pol: pol}, nil
}

// Analyze returns the findings in text, with code-point offsets, in text
// order, without overlaps. Scores are after context; only findings at or
// above their type's threshold, of enabled types, are returned.
func (a *Analyzer) Analyze(text string) []Finding {
	return a.toFindings(text, a.spans(text))
}

// AnalyzeField analyses a value that sits under a field name (a JSON key,
// a CSV header cell): the name is context, as if "name: value" were
// written, and offsets are into value.
func (a *Analyzer) AnalyzeField(field, value string) []Finding {
	return a.toFindings(value, a.fieldSpans(field, value))
}

// fieldSpans analyses "field: value" and keeps what lies in value.
func (a *Analyzer) fieldSpans(field, value string) []span {
	return a.fieldSpansWith(field, value, a.spans)
}

// fieldSpansWith is fieldSpans with another analysis of the joined text
// (an OCR page's).
func (a *Analyzer) fieldSpansWith(field, value string, spans func(string) []span) []span {
	field = humanizeKey(field)
	if field == "" {
		return spans(value)
	}
	prefix := field + ": "
	var out []span
	for _, s := range spans(prefix + value) {
		if s.start < len(prefix) {
			if s.end <= len(prefix) {
				continue
			}
			s.start = len(prefix)
		}
		s.start -= len(prefix)
		s.end -= len(prefix)
		out = append(out, s)
	}
	return out
}

// humanizeKey turns "date_of_birth", "dateOfBirth" and "Date-Of-Birth"
// into "date of birth" so context phrases match field names.
func humanizeKey(k string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range k {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/':
			b.WriteByte(' ')
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			b.WriteByte(' ')
		}
		prevLower = r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		b.WriteRune(r)
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 64 {
		return ""
	}
	return s
}

// spans analyses text in windows and resolves overlaps.
func (a *Analyzer) spans(text string) []span {
	if len(text) <= windowSize {
		return a.resolve(a.windowSpans(text))
	}
	var all []span
	for core := 0; core < len(text); {
		coreEnd := cutPoint(text, core+windowSize-2*windowOverlap)
		lo := cutPoint(text, core-windowOverlap)
		hi := cutPoint(text, coreEnd+windowOverlap)
		for _, s := range a.resolve(a.windowSpans(text[lo:hi])) {
			s.start += lo
			s.end += lo
			if s.start >= core && s.start < coreEnd {
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
func mergeSorted(in []span) []span {
	sort.Slice(in, func(i, j int) bool { return in[i].start < in[j].start })
	var out []span
	for _, s := range in {
		n := len(out)
		if n == 0 || !out[n-1].overlaps(s) {
			out = append(out, s)
			continue
		}
		prev := out[n-1]
		switch {
		case s.contains(prev) && s.end-s.start > prev.end-prev.start && s.score >= prev.score-0.35:
			out[n-1] = s
		case prev.contains(s) && prev.end-prev.start > s.end-s.start && prev.score >= s.score-0.35:
		case s.score > prev.score:
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

func (a *Analyzer) windowSpans(text string) []span {
	w := newWindow(a.lx, text)
	var out []span
	for _, p := range a.lx.patterns {
		if a.pol.Enabled(p.typ) {
			out = append(out, p.find(w)...)
		}
	}
	if a.pol.Enabled(StreetAddress) {
		out = append(out, findAddresses(w)...)
	}
	if a.pol.Enabled(Person) {
		out = append(out, findPersons(w)...)
	}
	return out
}

// resolve drops spans under their type's threshold and settles overlaps:
// higher score first, then longer; a span that contains the spans it
// overlaps replaces them unless it scores much lower (a full address over
// a name inside it, a card over an account number).
func (a *Analyzer) resolve(in []span) []span {
	c := make([]span, 0, len(in))
	for _, s := range in {
		if s.end > s.start && a.pol.Enabled(s.typ) && s.score >= a.pol.Threshold(s.typ) {
			c = append(c, s)
		}
	}
	sort.Slice(c, func(i, j int) bool {
		if c[i].score != c[j].score {
			return c[i].score > c[j].score
		}
		if li, lj := c[i].end-c[i].start, c[j].end-c[j].start; li != lj {
			return li > lj
		}
		if c[i].start != c[j].start {
			return c[i].start < c[j].start
		}
		return c[i].typ < c[j].typ
	})
	var kept []span
	for _, s := range c {
		kept = place(kept, s)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	return kept
}

func place(kept []span, s span) []span {
	var over []int
	for i, k := range kept {
		if k.overlaps(s) {
			over = append(over, i)
		}
	}
	if len(over) == 0 {
		return append(kept, s)
	}
	for _, i := range over {
		k := kept[i]
		// Only a strictly longer span may replace what it covers.
		if !s.contains(k) || s.end-s.start == k.end-k.start || s.score < k.score-0.35 {
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

// toFindings converts byte spans to code-point findings.
func (a *Analyzer) toFindings(text string, spans []span) []Finding {
	out := make([]Finding, 0, len(spans))
	conv := newCPConverter(text)
	for _, s := range spans {
		out = append(out, Finding{Type: string(s.typ), Start: conv.at(s.start), End: conv.at(s.end),
			Detector: s.detector, Score: round2(s.score)})
	}
	return out
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// cpConverter maps increasing byte offsets to code-point offsets in one
// pass over the text.
type cpConverter struct {
	s          string
	byteAt, cp int
}

func newCPConverter(s string) *cpConverter { return &cpConverter{s: s} }

// at returns the code-point offset of byte offset b; calls must not go
// backwards by more than they have to (it restarts if they do).
func (c *cpConverter) at(b int) int {
	if b < c.byteAt {
		c.byteAt, c.cp = 0, 0
	}
	c.cp += utf8.RuneCountInString(c.s[c.byteAt:b])
	c.byteAt = b
	return c.cp
}
