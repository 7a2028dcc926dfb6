package nlp

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FoldName folds a word for name-list lookups: canonical decomposition,
// combining marks dropped, lower case, typographic apostrophe as ASCII.
// "José", "JOSE" and an NFD-decomposed "José" all fold to "jose", so the
// lists need one spelling and decomposed input is not a way around them.
func FoldName(s string) string {
	if IsASCII(s) {
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

// FoldWord folds a token for context-phrase lookups: as FoldName, and
// apostrophes and hyphens dropped ("Driver's" = "drivers", "E-mail" =
// "email").
func FoldWord(s string) string {
	f := FoldName(s)
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

// IsASCII reports whether s is all ASCII.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// IsWordRune is what tokens are made of: letters, combining marks (so NFD
// text stays one word) and digits.
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// IsCJK reports scripts written without spaces between words, where a
// name is a run of characters rather than a capitalised word.
func IsCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// IsUncased reports letters of scripts without case (Arabic, Hebrew, CJK,
// Thai, ...): capitalisation tells nothing there.
func IsUncased(r rune) bool {
	return unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsLower(r) && !unicode.IsTitle(r)
}

// RuneBefore and RuneAfter return the rune adjacent to a byte offset, or
// utf8.RuneError at the ends.
func RuneBefore(s string, i int) rune {
	if i <= 0 {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

// RuneAfter: see RuneBefore.
func RuneAfter(s string, i int) rune {
	if i >= len(s) {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// TrimToRune cuts a byte offset back to a rune boundary.
func TrimToRune(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// IsDigits reports a non-empty run of ASCII digits.
func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// DigitsOf returns the ASCII digits of s.
func DigitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// DigitGroup is a run of digits inside a candidate (byte offsets).
type DigitGroup struct{ Start, End int }

// DigitGroups returns the runs of ASCII digits in s.
func DigitGroups(s string) []DigitGroup {
	var gs []DigitGroup
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		gs = append(gs, DigitGroup{i, j})
		i = j
	}
	return gs
}
