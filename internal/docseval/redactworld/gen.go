package redactworld

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// Split names a part of the corpus.
type Split string

// The splits: Dev may be looked at while tuning detectors; Test is held
// out (disjoint value pools, and phrasings Dev never uses).
const (
	Dev  Split = "dev"
	Test Split = "test"
)

// gen draws a document's values from one seeded source, within a split.
type gen struct {
	r     *rand.Rand
	split Split
	// plant are canaries the document's next people take; planted
	// records those placed.
	plant   []person
	planted []string
}

func newGen(seed int64, split Split) *gen {
	salt := uint64(0x51ed270b27a9f3c1)
	if split == Test {
		salt = 0x2d358dccaa6c78a5
	}
	return &gen{r: rand.New(rand.NewPCG(uint64(seed), salt)), split: split}
}

// pick draws from the split's half of a pool: even positions for Dev,
// odd ones for Test, so the two never share a value.
func (g *gen) pick(pool []string) string {
	off := 0
	if g.split == Test && len(pool) > 1 {
		off = 1
	}
	n := (len(pool) - off + 1) / 2
	return pool[off+2*g.r.IntN(n)]
}

// any draws from the whole pool (values both splits share: words,
// formats, labels).
func (g *gen) any(pool []string) string { return pool[g.r.IntN(len(pool))] }

// variant picks one of n phrasings: Dev sees the first half of them,
// Test all.
func (g *gen) variant(n int) int {
	if g.split == Dev {
		return g.r.IntN((n + 1) / 2)
	}
	return g.r.IntN(n)
}

func (g *gen) n(lo, hi int) int      { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// doc writes a text document and records its entity spans in code
// points, its near misses and the canaries planted in it.
type doc struct {
	b        strings.Builder
	cp       int
	spans    []redactcorpus.Span
	near     map[string]int
	canaries []string
}

func newDoc() *doc { return &doc{near: map[string]int{}} }

// t appends plain text.
func (d *doc) t(s string) *doc {
	d.b.WriteString(s)
	d.cp += utf8.RuneCountInString(s)
	return d
}

// pii appends s as an entity of type typ.
func (d *doc) pii(typ, s string) *doc {
	start := d.cp
	d.t(s)
	d.spans = append(d.spans, redactcorpus.Span{Type: typ, Start: start, End: d.cp})
	return d
}

// miss appends a near miss of the given kind (text that must stay).
func (d *doc) miss(kind, s string) *doc {
	d.near[kind]++
	return d.t(s)
}

func (d *doc) build(name, format string) redactcorpus.Doc {
	return redactcorpus.Doc{Name: name, Format: format, Text: d.b.String(), Spans: d.spans, NearMisses: d.near, Canaries: d.canaries}
}
