package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldName folds a word for name-list lookups: canonical decomposition,
// combining marks dropped, lower case, typographic apostrophe as ASCII.
// "José", "JOSE" and an NFD-decomposed "José" all fold to "jose", so the
// lists need one spelling and decomposed input is not a way around them.
func foldName(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r == '’' || r == 'ʼ' || r == '‘':
			b.WriteByte('\'')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// foldWord folds a token for context-phrase lookups: as foldName, and
// apostrophes and hyphens dropped ("Driver's" = "drivers", "E-mail" =
// "email").
func foldWord(s string) string {
	f := foldName(s)
	if strings.IndexByte(f, '\'') < 0 && strings.IndexByte(f, '-') < 0 {
		return f
	}
	return strings.Map(func(r rune) rune {
		if r == '\'' || r == '-' {
			return -1
		}
		return r
	}, f)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isWordRune is what tokens are made of: letters, combining marks (so NFD
// text stays one word) and digits.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// isCJK reports scripts written without spaces between words, where a
// name is a run of characters rather than a capitalised word.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isUncased reports letters of scripts without case (Arabic, Hebrew, CJK,
// Thai, ...): capitalisation tells nothing there.
func isUncased(r rune) bool {
	return unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsLower(r) && !unicode.IsTitle(r)
}

// runeBefore and runeAfter return the rune adjacent to a byte offset, or
// utf8.RuneError at the ends.
func runeBefore(s string, i int) rune {
	if i <= 0 {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

func runeAfter(s string, i int) rune {
	if i >= len(s) {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}
