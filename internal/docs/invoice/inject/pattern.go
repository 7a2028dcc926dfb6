package inject

import (
	"fmt"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/textnorm"
)

// A pattern is an instruction's shape rather than its words: slots of
// alternatives in order, with "..." between two slots allowing up to
// maxGap words in between. In a slot, '|' separates alternatives, '+'
// joins the words of one ("no+review"), a trailing '*' matches any ending
// ("approv*": approve, approved, approval; without it an alternative ends
// where a word ends), and "@" is any addressee (phrases.yaml). So
// "@ ... approv*|releas*" is an approval asked of a model, where
// "approve" alone would be an ordinary word of an invoice.
type pattern struct {
	code  string
	slots []slot
}

type slot struct {
	alts   []alt
	gapMax int // words allowed between the previous slot and this one
}

type alt struct {
	compact string
	prefix  bool // '*': any ending
}

// maxGap is how many words "..." lets through.
const maxGap = 6

func compilePattern(code, src string, addressees []string) (pattern, error) {
	p := pattern{code: code}
	gap := 0
	for _, tok := range strings.Fields(src) {
		if tok == "..." {
			gap = maxGap
			continue
		}
		var sl slot
		sl.gapMax, gap = gap, 0
		var alts []string
		for _, a := range strings.Split(tok, "|") {
			if a == "@" {
				alts = append(alts, addressees...)
				continue
			}
			alts = append(alts, a)
		}
		for _, a := range alts {
			prefix := strings.HasSuffix(a, "*")
			c := textnorm.Compact(strings.ReplaceAll(strings.TrimSuffix(a, "*"), "+", " "))
			if len(c) < 2 {
				return pattern{}, fmt.Errorf("pattern %q: alternative %q is too short", src, a)
			}
			sl.alts = append(sl.alts, alt{compact: c, prefix: prefix})
		}
		p.slots = append(p.slots, sl)
	}
	if len(p.slots) < 2 {
		return pattern{}, fmt.Errorf("pattern %q: want two slots or more (one is a phrase)", src)
	}
	return p, nil
}

// bounds are the offsets where a word (or a part of one a lost space
// joined) starts, plus the end of the text.
func (s stream) bounds() []int {
	var out []int
	for i, st := range s.starts {
		if i == 0 || st != s.starts[i-1] {
			out = append(out, st)
		}
	}
	for off := range s.soft {
		out = append(out, off)
	}
	sort.Ints(out)
	return slicesCompact(out)
}

func slicesCompact(xs []int) []int {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// findPatterns matches every pattern at every word start, skipping text
// a phrase already took.
func (m *Matcher) findPatterns(s stream, taken []bool) []Match {
	bs := s.bounds()
	var out []Match
	for _, p := range m.patterns {
		for bi := 0; bi < len(bs); bi++ {
			end, ok := p.match(s, bs, bi, 0)
			if !ok {
				continue
			}
			at := bs[bi]
			overlap := false
			for k := at; k < end; k++ {
				overlap = overlap || taken[k]
			}
			if overlap {
				continue
			}
			for k := at; k < end; k++ {
				taken[k] = true
			}
			out = append(out, Match{Code: p.code, First: s.wordAt(at), Last: s.wordAt(end - 1)})
		}
	}
	return out
}

// match tries slot k at bound bs[bi]; it returns where the match ends.
func (p pattern) match(s stream, bs []int, bi, k int) (int, bool) {
	at := bs[bi]
	for _, a := range p.slots[k].alts {
		if !strings.HasPrefix(s.text[at:], a.compact) {
			continue
		}
		end := at + len(a.compact)
		next := sort.SearchInts(bs, end)
		if !a.prefix && (next == len(bs) || bs[next] != end) && end != len(s.text) {
			continue // the alternative stops inside a word
		}
		for next < len(bs) && bs[next] < end {
			next++
		}
		if k == len(p.slots)-1 {
			return end, true
		}
		if a.prefix { // skip to the end of the word it began
			for next < len(bs) && !isWordStartAt(s, bs[next]) {
				next++
			}
		}
		for j := next; j < len(bs) && j <= next+p.slots[k+1].gapMax; j++ {
			if e, ok := p.match(s, bs, j, k+1); ok {
				return e, true
			}
		}
	}
	return 0, false
}

func isWordStartAt(s stream, off int) bool {
	w := s.wordAt(off)
	return w >= 0 && w < len(s.starts)-1 && s.starts[w] == off
}
