package recognizer

import (
	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Type is an entity type.
type Type = policy.Type

// Recognizer finds entities of its types in a window of text.
type Recognizer interface {
	// Name is the registry entry's name (findings' detectors start
	// with it or with a name of the recognizer's own).
	Name() string
	// Types are the entity types Find may return.
	Types() []Type
	// Find returns candidate spans, scored, in any order and possibly
	// overlapping; the analyzer applies thresholds and settles overlaps.
	// enabled says which types the job's policy wants.
	Find(w *nlp.Window, enabled func(Type) bool) []Span
}

// Span is a candidate in byte offsets of the analysed text, before
// thresholds, overlap resolution and the conversion to code points.
type Span struct {
	Start, End int
	Type       Type
	Score      float64
	Detector   string
}

// Overlaps reports whether the spans share a byte.
func (s Span) Overlaps(o Span) bool { return s.Start < o.End && o.Start < s.End }

// Contains reports whether o lies inside s.
func (s Span) Contains(o Span) bool { return s.Start <= o.Start && o.End <= s.End }
