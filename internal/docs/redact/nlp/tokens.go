package nlp

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token is a run of letters, marks and digits (with apostrophes and
// hyphens inside a run of letters), in byte offsets of the window text.
// CJK runs are split from other scripts so "Name:王伟" and "王伟Smith" give
// separate tokens.
type Token struct {
	Start, End int
	Letters    bool // has at least one letter
	Digits     bool // has at least one digit
}

// Tokenize cuts s into tokens.
func Tokenize(s string) []Token {
	toks := make([]Token, 0, len(s)/5+1)
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !IsWordRune(r) {
			i += n
			continue
		}
		t := Token{Start: i}
		i = t.scan(s, i, IsCJK(r))
		toks = append(toks, t)
	}
	return toks
}

// scan extends the token from i to its end and returns that end.
func (t *Token) scan(s string, i int, cjk bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if IsWordRune(r) {
			if IsCJK(r) != cjk && !unicode.Is(unicode.M, r) {
				break
			}
			if unicode.IsDigit(r) {
				t.Digits = true
			} else if unicode.IsLetter(r) {
				t.Letters = true
			}
			i += n
			continue
		}
		// An apostrophe or hyphen joins two letters ("O'Brien",
		// "Anne-Marie"), never digits ("123-45-6789" stays three
		// tokens so digit groups can be counted).
		if (r == '\'' || r == '’' || r == '-') && t.Letters && !t.Digits {
			r2, _ := utf8.DecodeRuneInString(s[i+n:])
			if unicode.IsLetter(r2) {
				i += n
				continue
			}
		}
		break
	}
	t.End = i
	return i
}

// TokenAt returns the index of the first token starting at or after pos.
func TokenAt(toks []Token, pos int) int {
	return sort.Search(len(toks), func(i int) bool { return toks[i].Start >= pos })
}

// CountNewlines counts line breaks in s (CRLF counts once).
func CountNewlines(s string) int { return strings.Count(s, "\n") }

// LineStart reports whether only spaces stand between pos and the start
// of its line.
func LineStart(s string, pos int) bool {
	i := pos
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i == 0 || s[i-1] == '\n'
}

// CPConverter maps increasing byte offsets to code-point offsets in one
// pass over the text.
type CPConverter struct {
	s          string
	byteAt, cp int
}

// NewCPConverter returns a converter for s.
func NewCPConverter(s string) *CPConverter { return &CPConverter{s: s} }

// At returns the code-point offset of byte offset b; calls must not go
// backwards by more than they have to (it restarts if they do).
func (c *CPConverter) At(b int) int {
	if b < c.byteAt {
		c.byteAt, c.cp = 0, 0
	}
	c.cp += utf8.RuneCountInString(c.s[c.byteAt:b])
	c.byteAt = b
	return c.cp
}
