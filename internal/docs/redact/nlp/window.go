package nlp

import "sort"

// Window is one piece of text being analysed, with its tokens and the
// context phrases found in it. Recognizers read it; it is not safe for
// concurrent use (folds are cached on first use).
type Window struct {
	Text     string
	Toks     []Token
	Labels   []Label
	HasDigit bool
	folds    []string // FoldWord of each token, filled on first use
}

// NewWindow tokenises text and finds the trie's phrases in it.
func NewWindow(text string, trie *PhraseTrie) *Window {
	w := &Window{Text: text, Toks: Tokenize(text)}
	w.Labels = FindLabels(text, w.Toks, trie)
	for _, t := range w.Toks {
		if t.Digits {
			w.HasDigit = true
			break
		}
	}
	return w
}

// Fold returns token i folded for word lookups, computing each once.
func (w *Window) Fold(i int) string {
	if w.folds == nil {
		w.folds = make([]string, len(w.Toks))
	}
	if w.folds[i] == "" {
		t := w.Toks[i]
		w.folds[i] = FoldWord(w.Text[t.Start:t.End])
	}
	return w.folds[i]
}

// Context outcomes for a candidate, from the labels before it.
const (
	CtxNone     = iota
	CtxOwn      // the nearest label names the candidate's type
	CtxOwnFar   // a label of its type is in reach, another is nearer
	CtxNegative // the nearest label is a negative one (order, ISBN, ...)
	CtxOther    // only labels of other types are in reach
)

// ContextFor finds the labels before the span (within maxDist tokens and
// at most two line breaks, so a form's label on the line above counts)
// and, when there are none, right after it ("123-45-6789 (SSN)").
func (w *Window) ContextFor(start, end int, typ Type, maxDist int) int {
	spanTok := TokenAt(w.Toks, start)
	// Labels whose last token is before the span, nearest first.
	k := sort.Search(len(w.Labels), func(i int) bool { return w.Labels[i].EndTok > spanTok }) - 1
	result := CtxNone
	for ; k >= 0; k-- {
		l := &w.Labels[k]
		if l.End > start {
			continue
		}
		if spanTok-l.EndTok > maxDist || CountNewlines(w.Text[l.End:start]) > 2 {
			break
		}
		switch {
		case l.Has(typ):
			if result == CtxNone {
				return CtxOwn
			}
			return CtxOwnFar
		case l.Has(NegativeLabel):
			if result == CtxNone {
				result = CtxNegative
			}
		case l.HasContextType():
			if result == CtxNone {
				result = CtxOther
			}
		}
		// A label opening the candidate's line starts its field: labels
		// above it belong to other fields ("born 1990.\nCardholder: Kim
		// (02/22/2024)").
		if LineStart(w.Text, l.Start) && CountNewlines(w.Text[l.End:start]) == 0 {
			break
		}
	}
	if result != CtxNone {
		return result
	}
	return w.contextAfter(end, typ)
}

func (w *Window) contextAfter(end int, typ Type) int {
	endTok := TokenAt(w.Toks, end)
	k := sort.Search(len(w.Labels), func(i int) bool { return w.Labels[i].FirstTok >= endTok })
	if k < len(w.Labels) {
		l := &w.Labels[k]
		if l.FirstTok-endTok <= 1 && CountNewlines(w.Text[end:l.Start]) == 0 && l.Has(typ) {
			return CtxOwnFar
		}
	}
	return CtxNone
}
