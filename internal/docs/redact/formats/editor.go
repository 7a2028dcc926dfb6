package formats

import (
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/redact/analyzer"
	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/operator"
)

// editor builds a redacted copy of a source text from rewrites of source
// ranges, and the findings (source ranges) in code points.
type editor struct {
	src      string
	op       *operator.Operator
	rewrites []rewrite
	found    []rawFinding
}

type rewrite struct {
	start, end int
	repl       string
}

type rawFinding struct {
	s          span
	start, end int
	hash       string
}

func newEditor(src string, op *operator.Operator) *editor { return &editor{src: src, op: op} }

// redact replaces source [start, end) with the operator's output for s.
func (e *editor) redact(s span, start, end int) {
	repl, hash := e.op.Apply(s.Type, e.src[start:end])
	e.rewrite(start, end, repl)
	e.find(s, start, end, hash)
}

func (e *editor) rewrite(start, end int, repl string) {
	e.rewrites = append(e.rewrites, rewrite{start, end, repl})
}

func (e *editor) find(s span, start, end int, hash string) {
	e.found = append(e.found, rawFinding{s, start, end, hash})
}

// finish applies the rewrites in source order. They never overlap by
// construction; if two ever did, the later one's source is skipped from
// where the earlier ended (widening, never leaving text unredacted).
func (e *editor) finish() (string, []Finding) {
	sort.SliceStable(e.rewrites, func(i, j int) bool { return e.rewrites[i].start < e.rewrites[j].start })
	var b strings.Builder
	b.Grow(len(e.src))
	done := 0
	for _, rw := range e.rewrites {
		b.WriteString(e.src[done:max(done, rw.start)])
		b.WriteString(rw.repl)
		done = max(done, rw.end)
	}
	b.WriteString(e.src[done:])
	sort.SliceStable(e.found, func(i, j int) bool { return e.found[i].start < e.found[j].start })
	conv := nlp.NewCPConverter(e.src)
	out := make([]Finding, 0, len(e.found))
	for _, f := range e.found {
		out = append(out, Finding{Type: string(f.s.Type), Start: conv.At(f.start), End: conv.At(f.end),
			Detector: f.s.Detector, Score: analyzer.Round2(f.s.Score), Hash: f.hash})
	}
	return b.String(), out
}
