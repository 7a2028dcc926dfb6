package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A word broken at a line end ("limi-" / "tation") is re-joined. Whether
// the hyphen was only a line-break hyphen or part of the word
// ("self-" / "insured") cannot be known without a dictionary; the document
// itself is the dictionary: if the hyphenated form occurs elsewhere in it
// and the closed form does not, the hyphen stays.

const softHyphen = '\u00AD'

// hyphenated says s ends with a letter followed by a hyphen.
func hyphenated(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	if r != '-' && r != '\u2010' && r != softHyphen {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:len(s)-n])
	return unicode.IsLetter(before)
}

// joinLines appends next to text, re-joining a hyphenated word. A soft
// hyphen always goes; before a capital or a digit ("Anglo-" / "Saxon",
// "pre-" / "2020") a hyphen is part of the word and stays.
func joinLines(text, next string, vocab map[string]bool) string {
	if !hyphenated(text) {
		return text + " " + next
	}
	hy, n := utf8.DecodeLastRuneInString(text)
	stem := text[:len(text)-n]
	first, _ := utf8.DecodeRuneInString(next)
	switch {
	case hy == softHyphen:
		return stem + next
	case unicode.IsUpper(first) || unicode.IsDigit(first):
		return text + next
	case !unicode.IsLower(first):
		return text + " " + next
	}
	head, tail := lastWord(stem), firstWord(next)
	if strings.ContainsRune(head, '-') || vocab[head+"-"+tail] && !vocab[head+tail] {
		return text + next
	}
	return stem + next
}

// lastWord and firstWord are the letters-and-hyphens word at each end,
// lower-cased, for vocabulary lookups.
func lastWord(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !isWordRune(r) })
	return strings.ToLower(s[i+1:])
}

func firstWord(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) })
	if i < 0 {
		i = len(s)
	}
	return strings.ToLower(s[:i])
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || r == '-' }

// vocabulary is every word of the document that is not at a line end,
// lower-cased and stripped of surrounding punctuation.
func vocabulary(doc *Document) map[string]bool {
	v := map[string]bool{}
	for _, p := range doc.Pages {
		for _, l := range p.Lines {
			for i, w := range l.Words {
				if i == len(l.Words)-1 && hyphenated(w.Text) {
					continue
				}
				t := strings.ToLower(strings.TrimFunc(w.Text, func(r rune) bool { return !unicode.IsLetter(r) }))
				if t != "" {
					v[t] = true
				}
			}
		}
	}
	return v
}
