package review

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// cleanText is the first step for every text the analysis reads (the
// document and the playbook alike): NFKC (ligatures, full-width forms),
// straight quotes, ASCII hyphens for every dash, no soft hyphens,
// zero-width or control characters, and single spaces. Paragraph breaks
// do not survive: callers join paragraphs themselves.
func cleanText(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			r = ' '
		case strings.ContainsRune("\u2018\u2019\u201a\u201b\u2032\u00b4`", r):
			r = '\''
		case strings.ContainsRune("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", r):
			r = '"'
		case strings.ContainsRune("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", r):
			r = '-'
		case r == '\u00ad' || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff':
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r):
			r = ' '
		}
		if r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// token is one whitespace-delimited word of a text. Raw is the word as
// written (with punctuation, and any punctuation-only words that followed
// it); Plain is its letters and digits lower-cased (a '.' between digits
// is kept so 1.5 and 15 differ); Key is Plain after OCR folding, the unit
// difflib compares.
type token struct {
	Raw, Plain, Key string
	Para            int // index of the paragraph (of the compared text) it came from
}

// tokenize splits a cleaned text into tokens. Words without letters or
// digits ("-", "§") are attached to the previous token's Raw so the
// redline still shows them but they never count as a difference.
func tokenize(s string, para int) []token {
	var toks []token
	pending := ""
	for w := range strings.FieldsSeq(s) {
		p := plainWord(w)
		if p == "" {
			if len(toks) > 0 && toks[len(toks)-1].Para == para {
				toks[len(toks)-1].Raw += " " + w
			} else {
				pending += w + " "
			}
			continue
		}
		toks = append(toks, token{Raw: pending + w, Plain: p, Key: foldPlain(p), Para: para})
		pending = ""
	}
	return toks
}

// plainWord lower-cases w and keeps letters and digits, and a '.' between
// digits so 1.5 and 15 differ (thousands commas go: 1,000,000 is 1000000).
func plainWord(w string) string {
	var b strings.Builder
	rs := []rune(w)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '|' && len(rs) > 1:
			b.WriteRune('l') // OCR's l inside a word ("sha|l")
		case r == '.' && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// foldWord is plainWord then foldPlain: the key of a single word.
func foldWord(w string) string { return foldPlain(plainWord(w)) }

// foldPlain maps the characters OCR confuses most to one representative,
// on both sides of every comparison, so "LIMITATI0N", "Iimitation" and
// "limitation" compare equal: i, l, 1 and | are one letter, and inside
// words (not numbers like 1.5x, 12th or 1990s) 0 is o, 5 is s and 8 is b. Only
// one-for-one letters are folded, so folding a joined word equals joining
// folded words; misreadings of two letters as one ("rn" for m) are left
// to the edit distance (tables.distance). Folding both sides is harmless
// for the words of a contract; the rare pairs it merges (tail/tall) are
// not ones a deviation hinges on.
func foldPlain(p string) string {
	if p == "" {
		return p
	}
	if hasLetter(p) && hasDigit(p) && !numericLike(p) {
		if d, ok := digitFix(p); ok {
			return d
		}
		p = digitLetters.Replace(p)
	}
	if !hasLetter(p) {
		return p
	}
	p = letterFolds.Replace(p)
	return p
}

// digitFix reads a word of digits and the letters OCR puts for digits
// (l2, 3O, 1B) as the number it was: o is 0, l, i and | are 1, s is 5,
// b is 8.
// It applies only when every letter is one of those.
func digitFix(p string) (string, bool) {
	if !hasDigit(p) {
		return p, false
	}
	// s and b stand for 5 and 8 only among several digits: "1s" is "is".
	sure := strings.IndexFunc(p, unicode.IsDigit) != strings.LastIndexFunc(p, unicode.IsDigit)
	var b strings.Builder
	for _, r := range p {
		switch r {
		case 'o', 'O':
			r = '0'
		case 'l', 'i', 'I', '|':
			r = '1'
		case 's', 'S':
			if !sure {
				return p, false
			}
			r = '5'
		case 'b', 'B':
			if !sure {
				return p, false
			}
			r = '8'
		default:
			if unicode.IsLetter(r) {
				return p, false
			}
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// Replacers are safe for concurrent use and never change.
var (
	digitLetters = strings.NewReplacer("0", "o", "1", "l", "5", "s", "8", "b")
	letterFolds  = strings.NewReplacer("i", "l")
)

// numericLike reports a number with a unit or ordinal suffix glued on:
// 1.5x, 12th, 2nd, 1990s, 500k.
func numericLike(p string) bool {
	i := 0
	for i < len(p) && (p[i] >= '0' && p[i] <= '9' || p[i] == '.') {
		i++
	}
	if i == 0 {
		return false
	}
	switch p[i:] {
	case "x", "st", "nd", "rd", "th", "k", "m", "mm", "bn", "pm", "am":
		return true
	case "s":
		return i >= 2 // 1990s, 20s; "1s" is a misread "is"
	}
	return false
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// keyWords returns the keys of the words of s, for matching word
// sequences (places, headings) rather than whole texts.
func keyWords(s string) []string {
	var out []string
	for _, t := range tokenize(cleanText(s), 0) {
		out = append(out, t.Key)
	}
	return out
}

// keys returns the Key of each token.
func keys(toks []token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Key
	}
	return out
}

// truncateRunes cuts s to at most n bytes on a rune boundary, marking the
// cut with an ellipsis; it reports whether it cut.
func truncateRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…", true
}
