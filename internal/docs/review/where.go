package review

import (
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// display returns the tokens [ta, tb) as written: whole paragraphs as
// they are (headings included), a paragraph the range only partly covers
// by its words, and paragraphs apart by blank lines.
func (an *analyzer) display(ta, tb int) string {
	if ta >= tb {
		return ""
	}
	u0, u1 := an.gtoks[ta].Para, an.gtoks[tb-1].Para
	parts := make([]string, 0, u1-u0+1)
	for u := u0; u <= u1; u++ {
		a, b := max(ta, an.unitTok[u]), min(tb, an.unitTok[u+1])
		switch {
		case a == an.unitTok[u] && b == an.unitTok[u+1]:
			parts = append(parts, an.doc.units[u].text) // whole, or a heading with no text
		case a < b:
			parts = append(parts, rawText(an.gtoks[a:b]))
		}
	}
	return strings.Join(parts, "\n\n")
}

// pages are the pages of the paragraphs the tokens [ta, tb) are in.
func (an *analyzer) pages(ta, tb int) []int {
	var out []int
	if ta >= tb {
		return []int{}
	}
	for u := an.gtoks[ta].Para; u <= an.gtoks[tb-1].Para; u++ {
		out = unionPages(out, an.doc.units[u].pages)
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// sentenceOf is the index of the sentence holding token t.
func (an *analyzer) sentenceOf(t int) int {
	return sort.Search(len(an.sents), func(i int) bool { return an.sents[i].b > t })
}

// where reports a location for a person to check: the titled section the
// text is in (the smallest that holds all of it), its first page and its
// sentences counted in that section.
func (an *analyzer) where(loc location) *result.Location {
	first, last := an.sentenceOf(loc.ta), an.sentenceOf(loc.tb-1)
	u0 := an.gtoks[loc.ta].Para
	sec := an.doc.innermostTitled(u0)
	if sec == nil {
		sec = an.doc.innermost(u0)
	}
	sa, sb := 0, len(an.sents)
	for sec != nil {
		sa, sb = an.sectionSentences(sec)
		if first >= sa && last < sb {
			break
		}
		sec = sec.parent
		if sec != nil && sec.h == nil {
			sec = nil // the root
		}
	}
	if sec == nil {
		sa, sb = 0, len(an.sents)
	}
	w := &result.Location{FirstSentence: first - sa + 1, LastSentence: last - sa + 1, SectionSentences: sb - sa}
	if sec != nil {
		w.Section, _ = truncateRunes(sec.h.text, result.MaxHeadingBytes)
	}
	if ps := an.doc.units[u0].pages; len(ps) > 0 {
		w.Page = ps[0]
	}
	return w
}
