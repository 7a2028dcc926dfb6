package redact

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is a run of letters, marks and digits (with apostrophes and
// hyphens inside a run of letters), in byte offsets of the window text.
// CJK runs are split from other scripts so "Name:王伟" and "王伟Smith" give
// separate tokens.
type token struct {
	start, end int
	letters    bool // has at least one letter
	digits     bool // has at least one digit
}

func tokenize(s string) []token {
	toks := make([]token, 0, len(s)/5+1)
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		t := token{start: i}
		cjk := isCJK(r)
		for i < len(s) {
			r, n = utf8.DecodeRuneInString(s[i:])
			if isWordRune(r) {
				if isCJK(r) != cjk && !unicode.Is(unicode.M, r) {
					break
				}
				if unicode.IsDigit(r) {
					t.digits = true
				} else if unicode.IsLetter(r) {
					t.letters = true
				}
				i += n
				continue
			}
			// An apostrophe or hyphen joins two letters ("O'Brien",
			// "Anne-Marie"), never digits ("123-45-6789" stays three
			// tokens so digit groups can be counted).
			if (r == '\'' || r == '’' || r == '-') && t.letters && !t.digits {
				r2, _ := utf8.DecodeRuneInString(s[i+n:])
				if unicode.IsLetter(r2) {
					i += n
					continue
				}
			}
			break
		}
		t.end = i
		toks = append(toks, t)
	}
	return toks
}

// tokenAt returns the index of the first token starting at or after pos.
func tokenAt(toks []token, pos int) int {
	return sort.Search(len(toks), func(i int) bool { return toks[i].start >= pos })
}

// phraseTrie maps folded word sequences ("date of birth") to types.
type phraseTrie struct {
	root *trieNode
}

type trieNode struct {
	next  map[string]*trieNode
	types []Type
}

func newPhraseTrie() *phraseTrie { return &phraseTrie{root: &trieNode{}} }

func (t *phraseTrie) add(phrase string, typ Type) {
	words := phraseWords(phrase)
	if len(words) == 0 {
		return
	}
	n := t.root
	for _, w := range words {
		if n.next == nil {
			n.next = map[string]*trieNode{}
		}
		c := n.next[w]
		if c == nil {
			c = &trieNode{}
			n.next[w] = c
		}
		n = c
	}
	for _, x := range n.types {
		if x == typ {
			return
		}
	}
	n.types = append(n.types, typ)
}

// phraseWords splits a phrase the way text is tokenised and folds it.
func phraseWords(p string) []string {
	var out []string
	for _, t := range tokenize(p) {
		out = append(out, foldWord(p[t.start:t.end]))
	}
	return out
}

// label is one context phrase found in the text.
type label struct {
	start, end       int // bytes
	firstTok, endTok int // token index range [firstTok, endTok)
	types            []Type
}

func (l *label) has(t Type) bool {
	for _, x := range l.types {
		if x == t {
			return true
		}
	}
	return false
}

// softGap reports whether two tokens of one phrase may be separated by
// text: spaces, or one of . / - ' (as in "d.o.b", "a/c"), or one line
// break where a paragraph wrapped ("Social\nSecurity number"); never a
// colon, which ends a label.
func softGap(g string) bool {
	if len(g) > 4 {
		return false
	}
	nl := 0
	for _, r := range g {
		switch {
		case r == '\n':
			nl++
		case !(r == ' ' || r == '\t' || r == '\r' || r == '.' || r == '/' || r == '-' || r == '\'' || r == '’' || r == 0xA0):
			return false
		}
	}
	return nl <= 1
}

// findLabels returns the longest context phrase starting at each token,
// without overlaps, in text order.
func findLabels(s string, toks []token, trie *phraseTrie) []label {
	var out []label
	for i := 0; i < len(toks); i++ {
		if !toks[i].letters {
			continue
		}
		n := trie.root.next[foldWord(s[toks[i].start:toks[i].end])]
		if n == nil {
			continue
		}
		best, bestEnd := n, i+1
		for j := i + 1; j < len(toks) && j < i+7 && n.next != nil; j++ {
			if !softGap(s[toks[j-1].end:toks[j].start]) {
				break
			}
			if n = n.next[foldWord(s[toks[j].start:toks[j].end])]; n == nil {
				break
			}
			if len(n.types) > 0 {
				best, bestEnd = n, j+1
			}
		}
		if len(best.types) == 0 {
			continue
		}
		out = append(out, label{start: toks[i].start, end: toks[bestEnd-1].end,
			firstTok: i, endTok: bestEnd, types: best.types})
		i = bestEnd - 1
	}
	return out
}

// countNewlines counts line breaks in s (CRLF counts once).
func countNewlines(s string) int { return strings.Count(s, "\n") }
