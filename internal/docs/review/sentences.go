package review

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The analysis locates and compares clauses by sentence: a clause may be
// a few sentences of a section that holds other provisions ("Term and
// Termination"), or run into a paragraph with them. Sentences are ranges
// of the document's body tokens (all units' tokens in order); a sentence
// may run over a paragraph break that cut it (a page turn), never over a
// heading.

// sentence is a range [a, b) of an analyzer's gtoks (or of a standard
// text's tokens).
type sentence struct{ a, b int }

// sentenceAbbrevs are words whose full stop does not end a sentence.
var sentenceAbbrevs = setOf("inc", "ltd", "co", "corp", "llc", "no", "nos", "sec", "art", "cl", "para", "mr", "mrs",
	"ms", "dr", "st", "jr", "sr", "eg", "ie", "etc", "vs", "v", "us", "am", "pm", "plc", "pte", "sa", "bv", "ag", "nv",
	"pp", "p", "vol", "approx", "dept", "est", "fig", "op", "cit", "viz", "cf")

// splitSentences splits toks into sentences. Units are told apart by
// token.Para; heads says which units start with a heading (a sentence
// never runs into one).
func splitSentences(toks []token, heads func(unit int) bool) []sentence {
	var out []sentence
	start := 0
	for i := range toks {
		if i+1 < len(toks) && !sentenceEndsAt(toks, i, heads) {
			continue
		}
		out = append(out, sentence{start, i + 1})
		start = i + 1
	}
	return out
}

// sentenceEndsAt reports whether a sentence ends after toks[i] (which is
// not the last token).
func sentenceEndsAt(toks []token, i int, heads func(int) bool) bool {
	cur, next := toks[i], toks[i+1]
	final := endsSentenceWord(cur.Raw) && !sentenceAbbrevs[cur.Plain] && !initials(cur.Raw)
	if next.Para != cur.Para {
		if next.Para > cur.Para+1 || heads(next.Para) {
			return true // a heading (or a heading-only paragraph) between
		}
		// A paragraph cut at a page turn or a footnote goes on in lower case.
		first, _ := utf8.DecodeRuneInString(strings.TrimLeft(next.Raw, "\"'("))
		return final || !(unicode.IsLower(first) || unicode.IsDigit(first))
	}
	if !final {
		return false
	}
	if i > 0 && isDigits(cur.Plain) && refWord(toks[i-1].Plain) {
		return false // "as set out in Section 7. The parties" does end, but "Section 7." rarely does
	}
	first, _ := utf8.DecodeRuneInString(strings.TrimLeft(next.Raw, "\"'(“‘"))
	return unicode.IsUpper(first) || unicode.IsDigit(first)
}

// endsSentenceWord reports a word ending in a full stop, question or
// exclamation mark (before any closing quote or bracket).
func endsSentenceWord(raw string) bool {
	s := strings.TrimRight(raw, "\"')]”’")
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!")
}

// initials reports "A.M." or "U.S.": letters each followed by a full stop.
func initials(raw string) bool {
	s := strings.TrimRight(raw, ".,")
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return len([]rune(s)) == 1 && strings.HasSuffix(raw, ".") // "A." as in "Schedule A."? too rare to split on
	}
	for _, p := range parts {
		if len([]rune(p)) != 1 {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' {
			return false
		}
	}
	return true
}

func refWord(plain string) bool {
	switch plain {
	case "section", "sections", "clause", "clauses", "article", "articles", "paragraph", "schedule", "exhibit", "annex", "appendix":
		return true
	}
	return false
}
