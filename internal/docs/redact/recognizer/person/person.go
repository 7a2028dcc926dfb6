package person

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// ntok is a token with what the name detector needs to know about it.
type ntok struct {
	fold                       string
	word                       bool // letters and no digits
	cap, allCaps, uncased, cjk bool
	initial                    bool // one upper-case letter ("J." or "J")
	first, sur, amb, stop      bool
	title, weakTitle           bool
	particle, suffix           bool
	place                      bool // a one-word place that is also a name ("Charlotte")
}

// persons holds one window's name-detection state.
type persons struct {
	lx         *lexicon
	w          *nlp.Window
	nt         []ntok
	claimed    []bool
	labelStart []bool
	out        []recognizer.Span
	outTok     [][2]int // each span of out as tokens [from, to)
}

func (lx *lexicon) nameTokens(w *nlp.Window) []ntok {
	nt := make([]ntok, len(w.Toks))
	for i, t := range w.Toks {
		if !t.Letters || t.Digits {
			continue
		}
		s := w.Text[t.Start:t.End]
		r0, _ := utf8.DecodeRuneInString(s)
		n := ntok{word: true, fold: nlp.FoldName(s)}
		n.cap = unicode.IsUpper(r0) || unicode.IsTitle(r0)
		n.uncased, n.cjk = nlp.IsUncased(r0), nlp.IsCJK(r0)
		n.allCaps = n.cap && strings.ToUpper(s) == s && utf8.RuneCountInString(s) > 1
		n.initial = n.cap && utf8.RuneCountInString(s) == 1
		n.particle = lx.particles[n.fold]
		if !n.cap && lx.hyphenJoined(s, n.fold) {
			n.cap = true // "al-Hakim": a family name, written with its particle
		}
		if n.cap || n.uncased {
			n.first, n.sur, n.amb = lx.first[n.fold], lx.surname[n.fold], lx.ambiguous[n.fold]
			n.stop, n.suffix = lx.stop[n.fold], lx.suffixes[n.fold]
			n.title, n.weakTitle = lx.titles[n.fold], lx.weakTitles[n.fold]
			if !n.first && !n.sur && strings.ContainsRune(n.fold, '-') {
				n.first, n.sur = hyphenParts(lx, n.fold)
			}
			if lx.hyphenJoined(s, n.fold) {
				n.sur = true
			}
		}
		nt[i] = n
	}
	return nt
}

// hyphenJoined reports a family name joined to its particle by a
// hyphen ("al-Hakim", "El-Amin", "AL-HAKIM"): the particle, then a
// capitalised name.
func (lx *lexicon) hyphenJoined(s, fold string) bool {
	part, rest, ok := strings.Cut(fold, "-")
	if !ok || !lx.hyphenParticles[part] || utf8.RuneCountInString(rest) < 2 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[strings.IndexByte(s, '-')+1:])
	return unicode.IsUpper(r)
}

// hyphenParts: "anne-marie" is a first name if all parts are, likewise
// "smith-jones" a surname.
func hyphenParts(lx *lexicon, f string) (first, sur bool) {
	parts := strings.Split(f, "-")
	first, sur = true, true
	for _, p := range parts {
		first = first && lx.first[p]
		sur = sur && (lx.surname[p] || lx.first[p])
	}
	return first, sur
}

// Find runs the name rules in order of strength: labels, titles,
// "Last, First", "First Last", then an unknown first name before a known
// surname. Each token belongs to at most one name.
func (r *Recognizer) Find(w *nlp.Window, enabled func(policy.Type) bool) []recognizer.Span {
	if !enabled(policy.Person) {
		return nil
	}
	p := &persons{lx: r.lx, w: w, nt: r.lx.nameTokens(w), claimed: make([]bool, len(w.Toks)),
		labelStart: make([]bool, len(w.Toks))}
	for _, l := range w.Labels {
		p.labelStart[l.FirstTok] = true
	}
	for k := range w.Labels {
		p.fromLabel(&w.Labels[k])
	}
	p.notNames()
	rules := []func(int) (int, int, float64, string){p.chatSpeaker, p.recitalParty, p.title, p.lastFirst,
		p.familyFirst, p.givenThenFamily, p.firstLast, p.unknownFirst, p.saidName, p.cjkSuffix}
	for i := range p.nt {
		if p.claimed[i] || !p.nt[i].word {
			continue
		}
		for _, rule := range rules {
			if from, to, score, det := rule(i); score > 0 {
				p.add(from, to, score, det)
				break
			}
		}
	}
	p.sameNames()
	return p.out
}

func (p *persons) add(from, to int, score float64, det string) {
	if to <= from {
		return
	}
	for k := from; k < to; k++ {
		p.claimed[k] = true
	}
	t := p.w.Toks
	end := t[to-1].End
	if (p.nt[to-1].initial || p.nt[to-1].suffix) && end < len(p.w.Text) && p.w.Text[end] == '.' {
		end++
	}
	p.out = append(p.out, recognizer.Span{Start: t[from].Start, End: end, Type: policy.Person, Score: score, Detector: "person/" + det})
	p.outTok = append(p.outTok, [2]int{from, to})
}

// gap returns the text between tokens i-1 and i.
func (p *persons) gap(i int) string {
	return p.w.Text[p.w.Toks[i-1].End:p.w.Toks[i].Start]
}

func spaceGap(g string) bool {
	if g == "" || len(g) > 3 {
		return false
	}
	for _, r := range g {
		if r != ' ' && r != '\t' && r != 0xA0 {
			return false
		}
	}
	return true
}

// nameGap: between two parts of one name; ". " after an initial or a
// title abbreviation.
func (p *persons) nameGap(i int) bool {
	g := p.gap(i)
	if spaceGap(g) {
		return true
	}
	if strings.HasPrefix(g, ".") && (p.nt[i-1].initial || p.nt[i-1].title || p.nt[i-1].weakTitle || p.nt[i-1].suffix) {
		return g == "." || spaceGap(g[1:])
	}
	return false
}

// namePart reports whether token k can continue a name.
func (p *persons) namePart(k int, allowLower bool) bool {
	n := &p.nt[k]
	if !n.word || p.startsLabel(k) {
		return false
	}
	if n.initial || n.suffix {
		return true
	}
	if n.stop && !(allowLower && (n.first || n.sur)) && !p.surnameWord(k) {
		return false
	}
	if n.cap || n.uncased {
		return true
	}
	if n.particle && p.particlesBeforeName(k) {
		return true
	}
	return allowLower && (p.lx.first[n.fold] || p.lx.surname[n.fold])
}

func (p *persons) startsLabel(k int) bool { return p.labelStart[k] }

// surnameWord: a listed family name that is also a stop word ("Park",
// "Hall", "House") ends a name when no capitalised word follows it on
// its line ("Herr Park,", "Ji-hoon Park", not "Park Avenue").
func (p *persons) surnameWord(k int) bool {
	n := &p.nt[k]
	if !n.sur || !n.cap || n.allCaps {
		return false
	}
	return k+1 >= len(p.nt) || !spaceGap(p.gap(k+1)) || !p.nt[k+1].cap
}

// particlesBeforeName reports whether the particles from token k on
// ("de la", "van der", "von und zu") lead to a capitalised name.
func (p *persons) particlesBeforeName(k int) bool {
	j := k + 1
	for j < len(p.nt) && j-k < 4 && p.nameGap(j) && p.nt[j].particle && !p.nt[j].cap {
		j++
	}
	return j < len(p.nt) && p.nameGap(j) && p.nt[j].cap && !p.nt[j].stop
}

// extend returns the end (exclusive) of the name parts from token i on.
func (p *persons) extend(i, maxParts int, allowLower bool) int {
	j := i
	for j < len(p.nt) && j-i < maxParts && !p.claimed[j] && p.namePart(j, allowLower) {
		if j > i && !p.nameGap(j) {
			break
		}
		j++
	}
	// A trailing particle or lone initial after a full name is not a name.
	for j > i+1 && p.nt[j-1].particle && !p.nt[j-1].cap {
		j--
	}
	return j
}

// listBacked reports whether a token in [from,to) is on the name lists
// and not an ordinary word.
func (p *persons) listBacked(from, to int) bool {
	for k := from; k < to; k++ {
		n := &p.nt[k]
		if (n.first || n.sur || p.lx.first[n.fold] || p.lx.surname[n.fold]) && !n.amb || n.uncased {
			return true
		}
	}
	return false
}
