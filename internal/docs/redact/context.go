package redact

import (
	"sort"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// Context outcomes for a candidate, from the labels before it.
const (
	ctxNone     = iota
	ctxOwn      // the nearest label names the candidate's type
	ctxOwnFar   // a label of its type is in reach, another is nearer
	ctxNegative // the nearest label is a negative one (order, ISBN, ...)
	ctxOther    // only labels of other types are in reach
)

// contextFor finds the labels before the span (within maxDist tokens and
// at most two line breaks, so a form's label on the line above counts)
// and, when there are none, right after it ("123-45-6789 (SSN)").
func (w *window) contextFor(start, end int, typ Type, maxDist int) int {
	spanTok := tokenAt(w.toks, start)
	// Labels whose last token is before the span, nearest first.
	k := sort.Search(len(w.labels), func(i int) bool { return w.labels[i].endTok > spanTok }) - 1
	result := ctxNone
	for ; k >= 0; k-- {
		l := &w.labels[k]
		if l.end > start {
			continue
		}
		if spanTok-l.endTok > maxDist || countNewlines(w.text[l.end:start]) > 2 {
			break
		}
		switch {
		case l.has(typ):
			if result == ctxNone {
				return ctxOwn
			}
			return ctxOwnFar
		case l.has(negativeLabel):
			if result == ctxNone {
				result = ctxNegative
			}
		case l.hasContextType():
			if result == ctxNone {
				result = ctxOther
			}
		}
		// A label opening the candidate's line starts its field: labels
		// above it belong to other fields ("born 1990.\nCardholder: Kim
		// (02/22/2024)").
		if lineStart(w.text, l.start) && countNewlines(w.text[l.end:start]) == 0 {
			break
		}
	}
	if result != ctxNone {
		return result
	}
	return w.contextAfter(end, typ)
}

func (w *window) contextAfter(end int, typ Type) int {
	endTok := tokenAt(w.toks, end)
	k := sort.Search(len(w.labels), func(i int) bool { return w.labels[i].firstTok >= endTok })
	if k < len(w.labels) {
		l := &w.labels[k]
		if l.firstTok-endTok <= 1 && countNewlines(w.text[end:l.start]) == 0 && l.has(typ) {
			return ctxOwnFar
		}
	}
	return ctxNone
}

// hasContextType reports whether the label names an entity type (person
// labels and openers do not compete with numeric context).
func (l *label) hasContextType() bool {
	for _, t := range l.types {
		if policy.Known(t) {
			return true
		}
	}
	return false
}

// lineStart reports whether only spaces stand between pos and the start
// of its line.
func lineStart(s string, pos int) bool {
	i := pos
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i == 0 || s[i-1] == '\n'
}
