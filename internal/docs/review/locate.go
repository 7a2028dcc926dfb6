package review

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Location thresholds.
const (
	// headingFloor is the heading score a section needs to be taken as the
	// clause: equal titles score 1, the same words in another order 0.95,
	// a synonym inside a longer title 0.6-0.9, an OCR-garbled title about
	// its character similarity minus 0.1.
	headingFloor = 0.7
	// contentFloor is the similarity a paragraph or section needs to be
	// taken as the clause when no heading matched. Unrelated clauses of a
	// contract share boilerplate ("either party", "this Agreement") and
	// score 0.2-0.4 against each other; a reworded clause scores 0.6 and
	// more.
	contentFloor = 0.5
	// refineMargin is how much better a subsection must match than the
	// whole headed section to be reported instead of it. A standard text
	// spread over several subsections matches none of them alone better
	// than the whole, so it stays whole.
	refineMargin = 0.05
	// maxWindow bounds the paragraph windows tried when locating by content
	// (the standard's paragraphs and a few more: a clause may be split at
	// sentences or page turns).
	maxWindow = 6
)

var titleStopWords = setOf("of", "the", "a", "an", "and", "or", "on", "to", "for", "in", "by", "with",
	"under", "upon", "its", "this", "agreement", "mutual", "clause", "provision", "provisions")

// titleWords normalises a heading for matching: words folded like every
// comparison, plurals singular, small words and "&" gone. "Limitations
// on Liability" and "LIMITATION OF LIABILITY" both give [limitation
// liability].
func titleWords(s string) []string {
	var out []string
	for w := range strings.FieldsSeq(strings.ReplaceAll(cleanText(s), "-", " ")) {
		p := plainWord(w)
		if p == "" || titleStopWords[p] {
			continue
		}
		out = append(out, foldPlain(singular(p)))
	}
	return out
}

func singular(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// titleScore scores a section title against one synonym (both already
// through titleWords).
func titleScore(title, syn []string) float64 {
	if len(title) == 0 || len(syn) == 0 {
		return 0
	}
	if equalWords(title, syn) {
		return 1
	}
	if sameSet(title, syn) {
		return 0.95
	}
	if len(syn) >= 2 && containsRun(title, syn) {
		coverage := float64(len(syn)) / float64(len(title))
		if coverage >= 0.5 {
			return 0.6 + 0.3*coverage
		}
	}
	if d := len(title) - len(syn); d >= -1 && d <= 1 {
		a, b := strings.Join(title, " "), strings.Join(syn, " ")
		if len(a) >= 6 && 2*float64(min(len(a), len(b)))/float64(len(a)+len(b)) >= 0.88 {
			r := charRatio(a, b)
			if r >= 0.88 {
				return r - 0.1
			}
		}
	}
	return 0
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, w := range a {
		m[w]++
	}
	for _, w := range b {
		m[w]--
		if m[w] < 0 {
			return false
		}
	}
	return true
}

func containsRun(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if equalWords(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// charRatio is difflib's ratio over characters, for short strings only
// (headings).
func charRatio(a, b string) float64 {
	return difflib.NewMatcherWithJunk(strings.Split(a, ""), strings.Split(b, ""), false, nil).Ratio()
}

// location is where a clause was found.
type location struct {
	by      string
	heading string
	sp      span
}

// locate finds a clause: by heading first (the best-scoring headed
// section at any depth; ties go to the more similar text), else by
// content (the most similar section, paragraph or run of paragraphs above
// contentFloor). claimed holds sections whose heading another clause
// matched exactly: they are not candidates for a content match.
func (an *analyzer) locate(cs *clauseSpec, claimed map[*section]bool) (location, bool) {
	var best *section
	bestScore, bestSim := 0.0, 0.0
	for i, s := range an.doc.sections {
		score := an.scores[cs.index][i]
		if score < headingFloor || len(an.doc.bodies(span{s.first, s.end})) == 0 {
			continue
		}
		if score < bestScore {
			continue
		}
		sim := an.similarity(cs, span{s.first, s.end})
		if score > bestScore || sim > bestSim {
			best, bestScore, bestSim = s, score, sim
		}
	}
	if best != nil {
		return an.refine(cs, best, bestSim), true
	}
	return an.locateByContent(cs, claimed)
}

// refine reports a subsection (or the section's own text before its
// subsections) instead of the whole headed section when it matches the
// standard text clearly better: "Confidentiality" with subsections
// "Definition", "Obligations" and "Term" for a clause about the term.
func (an *analyzer) refine(cs *clauseSpec, s *section, whole float64) location {
	loc := location{by: result.LocatedByHeading, heading: s.h.text, sp: span{s.first, s.end}}
	if len(s.children) == 0 {
		return loc
	}
	bestSim := whole
	try := func(sp span, heading string) {
		if len(an.doc.bodies(sp)) == 0 {
			return
		}
		if sim := an.similarity(cs, sp); sim > bestSim+refineMargin {
			bestSim, loc.sp, loc.heading = sim, sp, heading
		}
	}
	try(span{s.first, s.ownEnd()}, s.h.text)
	for _, c := range s.children {
		try(span{c.first, c.end}, c.h.text)
	}
	return loc
}

// locateByContent scores every unclaimed section, paragraph and window of
// up to maxWindow paragraphs against the standard text.
func (an *analyzer) locateByContent(cs *clauseSpec, claimed map[*section]bool) (location, bool) {
	m := difflib.NewMatcherWithJunk(nil, cs.stdKeys, false, nil)
	bound := an.overlapBound(cs)
	best, bestSim := span{}, 0.0
	try := func(sp span) {
		if bound(sp) < max(bestSim, contentFloor) {
			return // cannot beat the best so far: skip difflib
		}
		toks := an.tokens(sp)
		if len(toks) == 0 {
			return
		}
		m.SetSeq1(keys(toks))
		if m.RealQuickRatio() <= bestSim || m.QuickRatio() <= bestSim {
			return
		}
		if r := m.Ratio(); r > bestSim {
			best, bestSim = sp, r
		}
	}
	for _, s := range an.doc.sections {
		if !claimed[s] {
			try(span{s.first, s.end})
			try(span{s.first, s.ownEnd()})
		}
	}
	window := min(maxWindow, cs.paras+3)
	for a := range an.doc.units {
		for w := 1; w <= window && a+w <= len(an.doc.units); w++ {
			try(span{a, a + w})
		}
	}
	if bestSim < contentFloor {
		return location{}, false
	}
	loc := location{by: result.LocatedByContent, sp: best}
	if s := an.doc.innermost(best.a); s != nil {
		loc.heading = s.h.text
	}
	return loc, true
}

// overlapBound returns an upper bound on the similarity of any span to
// the clause's standard text, from prefix sums of the units' lengths and
// of their words that occur in the standard text at all. It makes the
// content search linear in the document for all but a few candidates.
func (an *analyzer) overlapBound(cs *clauseSpec) func(span) float64 {
	inStd := make(map[string]bool, len(cs.stdKeys))
	for _, k := range cs.stdKeys {
		inStd[k] = true
	}
	n := len(an.utoks)
	length, overlap := make([]int, n+1), make([]int, n+1)
	for i, toks := range an.utoks {
		o := 0
		for _, t := range toks {
			if inStd[t.Key] {
				o++
			}
		}
		length[i+1], overlap[i+1] = length[i]+len(toks), overlap[i]+o
	}
	std := len(cs.stdKeys)
	return func(sp span) float64 {
		l := min(length[sp.b]-length[sp.a], maxCompareWords)
		if l == 0 {
			return 0
		}
		matches := min(overlap[sp.b]-overlap[sp.a], l, std)
		return 2 * float64(matches) / float64(l+std)
	}
}

// similarity is the ratio of a span's compared tokens to the standard's.
func (an *analyzer) similarity(cs *clauseSpec, sp span) float64 {
	toks := an.tokens(sp)
	if len(toks) == 0 {
		return 0
	}
	return difflib.NewMatcherWithJunk(keys(toks), cs.stdKeys, false, nil).Ratio()
}
