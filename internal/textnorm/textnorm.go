package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// confusable maps look-alike letters from other scripts (after
// lowercasing) to the Latin letter they imitate.
func confusable(r rune) rune {
	switch r {
	case 'а', 'α':
		return 'a'
	case 'в':
		return 'b'
	case 'е', 'ε', 'ё':
		return 'e'
	case 'о', 'ο', 'σ':
		return 'o'
	case 'р', 'ρ':
		return 'p'
	case 'с', 'ς':
		return 'c'
	case 'у', 'γ':
		return 'y'
	case 'х', 'χ':
		return 'x'
	case 'і', 'ι', 'ї':
		return 'i'
	case 'ј':
		return 'j'
	case 'ѕ':
		return 's'
	case 'к', 'κ':
		return 'k'
	case 'м':
		return 'm'
	case 'н', 'η':
		return 'n'
	case 'т', 'τ':
		return 't'
	case 'ν':
		return 'v'
	case 'ß':
		return 's' // folded to "ss" by foldRune
	}
	return r
}

// invisible reports characters that render as nothing and are used to
// split words for a matcher but not for a reader.
func invisible(r rune) bool {
	switch r {
	case '\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u180e':
		return true
	}
	return false
}

// foldRune appends r's folded form to dst.
func foldRune(dst []byte, r rune) []byte {
	if invisible(r) {
		return dst
	}
	if r == 'ß' || r == 'ẞ' {
		return append(dst, "ss"...)
	}
	for _, c := range norm.NFKD.String(string(r)) {
		if unicode.Is(unicode.Mn, c) {
			continue
		}
		c = confusable(unicode.ToLower(c))
		dst = utf8.AppendRune(dst, c)
	}
	return dst
}

// Fold returns s in compatibility form, lower case, without diacritics
// and with look-alikes mapped to Latin letters.
func Fold(s string) string {
	f, _ := FoldMap(s)
	return f
}

// FoldMap is Fold that also returns, for every byte of the folded string,
// the byte offset in s of the rune it came from, plus a final entry
// len(s), so a match in folded text maps back to the original.
func FoldMap(s string) (string, []int) {
	out := make([]byte, 0, len(s))
	offs := make([]int, 0, len(s)+1)
	for i, r := range s {
		n := len(out)
		out = foldRune(out, r)
		for range len(out) - n {
			offs = append(offs, i)
		}
	}
	offs = append(offs, len(s))
	return string(out), offs
}

// Compact folds s and keeps only letters and digits, so spacing,
// punctuation and hyphenation cannot hide a phrase.
func Compact(s string) string {
	var b strings.Builder
	for _, r := range Fold(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MaskDigits replaces each run of minRun or more digits with '#', so an
// excerpt can show that a number was there without carrying it.
func MaskDigits(s string, minRun int) string {
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && unicode.IsDigit(rs[j]) {
			j++
		}
		if j-i >= minRun {
			for k := i; k < j; k++ {
				rs[k] = '#'
			}
		}
		if j == i {
			j++
		}
		i = j
	}
	return string(rs)
}

// Excerpt returns at most n runes of s with control characters dropped
// and long digit runs masked.
func Excerpt(s string, n int) string {
	var b strings.Builder
	k := 0
	for _, r := range s {
		if k >= n {
			break
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		b.WriteRune(r)
		k++
	}
	return MaskDigits(b.String(), 5)
}
