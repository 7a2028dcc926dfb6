package review

import (
	"slices"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Location thresholds.
const (
	// headingFloor is the heading score a section needs to be taken as the
	// clause's: equal titles score 1, the same words in another order 0.95,
	// a synonym inside a longer title 0.6-0.9, an OCR-garbled title about
	// its character similarity minus 0.1.
	headingFloor = 0.7
	// headingExact is the score of a heading that is the clause's title or
	// a synonym (in any word order).
	headingExact = 0.95
	// contentFloor is the similarity a run of sentences needs to be taken
	// as the clause. A provision on a neighbouring subject (termination for
	// cause against termination for convenience) scores up to about 0.32
	// on the tune half of the draft corpus; another drafter's wording of
	// the clause 0.3 to 0.55.
	contentFloor = 0.42
	// headingContentFloor is the similarity that suffices under a heading
	// that names the clause, alone or beside another subject: a drafter's
	// own wording of the clause scores 0.3 and more.
	headingContentFloor = 0.3
	// headingOwnFloor is the similarity that suffices under such a heading
	// for a run that has a word of the clause's own (see attach.go): a
	// drafter's short version of the clause ("Neither party may assign
	// this Agreement without the other party's consent, ...").
	headingOwnFloor = 0.2
	// headingSubjectFloor and subjectWords: under such a heading a run
	// that has subjectWords of the clause's own and topic words suffices
	// at this similarity: another drafter's one-sentence version of the
	// clause ("Provider shall re-perform any Services that fail to
	// conform ... if Customer reports the failure within six (6)
	// months" under "Warranties and Undertakings").
	headingSubjectFloor = 0.12
	subjectWords        = 3
	// manySubjectWords: a run that opens a section under any title ("9.
	// Risk Allocation. 9.1 Each party's total liability ... is limited to
	// EUR 500,000 ... Neither party is liable for indirect or
	// consequential loss or lost profits.") and has this many of the
	// clause's own and topic words, one of them a topic word, is the
	// clause at headingSubjectFloor.
	manySubjectWords = 4
	// aboutFloor and aboutShare: a run of sentences less similar than
	// contentFloor is still the clause when it scores aboutFloor and has
	// aboutShare of the clause's own words (see attach.go): a clause
	// reworded by another drafter, under a heading the playbook does not
	// know. Neighbouring provisions have almost none of them.
	aboutFloor = 0.33
	aboutShare = 0.15
	// topicFloor and topicWords: a run of sentences is also the clause
	// when it scores topicFloor and has topicWords of the clause's topic
	// words (see attach.go): "Customer shall not hire any Provider
	// employee during ... two (2) years after it" for non-solicitation.
	topicFloor = 0.2
	topicWords = 2
	// rareTopicSents: one topic word is enough when the document uses it
	// in at most this many sentences: "Neither party may assign this
	// Agreement without ... consent" is the assignment clause in a
	// contract that says "assign" once more at most, while "terminate"
	// runs through a whole term-and-termination section and ties no one
	// sentence to termination for convenience.
	rareTopicSents = 2
	// coreFloor: a sentence with a core word of the clause (a word of
	// its standard text that its title or synonyms name it by, and no
	// other clause uses) that the document uses in at most rareTopicSents
	// sentences, alone or with sentences that each have a word of the
	// clause, is the clause at this similarity: "Customer may not
	// assign this Agreement within the first two (2) years without
	// Provider's consent" in a contract that says "assign" nowhere else.
	// Boilerplate with such a word ("This Agreement is written in
	// English, and any translation of it is for convenience only.")
	// scores up to 0.13 alone on the tune half of the draft corpus, and
	// more only padded with its neighbours.
	coreFloor = 0.15
	// ownWords: a run of sentences with this many of the clause's own
	// words (words of its standard text no other clause uses) is also the
	// clause at topicFloor: "Notices must be in writing and are effective
	// two (2) business days after sending by courier or ... by email."
	ownWords = 2
	// manyOwnWords: a run with this many of the clause's own words is the
	// clause at any similarity the search admits: "Disputes shall be
	// finally resolved by arbitration under the Rules of Arbitration of
	// the International Chamber of Commerce by three (3) arbitrators
	// seated in Paris" is short beside the standard text (0.14) but has
	// five of dispute resolution's own words.
	manyOwnWords = 4
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

// location is where a clause was found: a range of sentences, as the
// range [ta, tb) of the document's body tokens.
type location struct {
	by      string
	heading string // the heading shown with the finding: the section it was located in
	ta, tb  int
	// strength orders clauses for who keeps a sentence two of them match:
	// a heading for the clause alone first, then by similarity.
	strength float64
}

// window is a candidate run of sentences [a, b) and its similarity.
type window struct {
	a, b int
	sim  float64
}

// locate finds a clause, never in a sentence another clause holds
// (used):
//
//  1. by heading: the sections whose heading matches the clause's title
//     or a synonym, and in each the run of sentences most like the
//     standard text. A section headed for the clause alone
//     (headingExact) holds it even when its text is unlike the
//     standard: it is the clause, changed, when that text is about the
//     clause or a mere placeholder. A section whose heading only
//     contains a synonym ("Governing Law and Disputes") holds it only
//     when some sentences are like it.
//  2. by content: else the run of sentences anywhere most like the
//     standard text, when it is similar enough, or somewhat similar and
//     about the same subject (the clause's own words).
func (an *analyzer) locate(cs *clauseSpec, used []bool) (location, bool) {
	if loc, ok := an.locateByHeading(cs, used); ok {
		return loc, true
	}
	return an.locateByContent(cs, used)
}

func (an *analyzer) locateByHeading(cs *clauseSpec, used []bool) (location, bool) {
	var best *section
	var bw window
	bestScore, bestOK, bestJoint := 0.0, false, false
	for i, s := range an.doc.sections {
		score := an.scores[cs.index][i]
		if score < headingFloor {
			continue
		}
		sa, sb := an.sectionSentences(s)
		if sa == sb {
			continue
		}
		w := an.bestWindow(cs, sa, sb, used, true)
		ok := w.sim >= contentFloor || w.sim >= headingContentFloor ||
			w.sim >= headingOwnFloor && w.b > w.a && an.ownShared(cs, sentence{an.sents[w.a].a, an.sents[w.b-1].b}) >= 1
		if !ok {
			// A short version of the clause, less like the standard than
			// the section's most similar run ("The laws of Switzerland
			// govern this Agreement." beside "The courts of Zurich ...
			// This Agreement is signed in two originals ...").
			short := an.bestWindowWhere(cs, sa, sb, used, true, func(w window) bool {
				return w.sim >= headingSubjectFloor && an.subjectWords(cs, w) >= subjectWords ||
					w.sim >= coreFloor && an.rareCore(cs, an.gtoks[an.sents[w.a].a:an.sents[w.b-1].b])
			})
			if short.b > short.a {
				w, ok = short, true
			}
		}
		// A section whose text is like the clause beats one whose heading
		// is; then the better heading, then the more similar text.
		if best == nil || ok && !bestOK || ok == bestOK && (score > bestScore || score == bestScore && w.sim > bw.sim) {
			best, bw, bestScore, bestOK, bestJoint = s, w, score, ok, an.joint[cs.index][i]
		}
	}
	if best == nil {
		return location{}, false
	}
	exact := bestScore >= headingExact
	loc := location{by: result.LocatedByHeading, heading: best.h.text}
	sa, sb := an.sectionSentences(best)
	switch {
	case bestOK && bw.b > bw.a:
		// A modified title ("Giving Notice") is the clause's own section
		// as much as its exact title is: what follows the clause there is
		// part of it.
		own := exact || bestScore >= modifiedTitleScore && !bestJoint
		loc.ta, loc.tb = an.sents[bw.a].a, an.sents[an.extend(cs, best, bw, sb, used, own)-1].b
		loc.strength = 1 + bw.sim
		if exact {
			loc.strength++
		}
	case exact && (!bestJoint || an.placeholderOrAbout(cs, sa, sb, used)):
		// The clause's own section, its text unlike the standard's: the
		// clause, changed (or replaced by "Intentionally omitted"). Under
		// a heading that names another subject too ("Fees and Payment")
		// only text about the clause, or a placeholder, is.
		a := sa
		for a < sb && used[a] {
			a++
		}
		b := a
		for b < sb && !used[b] {
			b++
		}
		if a == b {
			return location{}, false
		}
		loc.ta, loc.tb, loc.strength = an.sents[a].a, an.sents[b-1].b, 2
	default:
		return location{}, false
	}
	// Under the smallest titled subsection of the section that holds it
	// ("5.2 Duration." in "5. CONFIDENTIALITY").
	if sub := an.doc.innermostTitled(an.gtoks[loc.ta].Para); sub != nil && sub != best && best.contains(sub.first) &&
		sub.contains(an.gtoks[loc.tb-1].Para) {
		loc.heading = sub.h.text
	}
	return loc, true
}

// placeholderOrAbout reports whether a section's free text stands for the
// clause though unlike its standard text: one short sentence (a
// placeholder), or text with at least two of the clause's own words.
func (an *analyzer) placeholderOrAbout(cs *clauseSpec, sa, sb int, used []bool) bool {
	free, words, own, last := 0, 0, 0, -1
	for i := sa; i < sb; i++ {
		if used[i] {
			continue
		}
		free, last = free+1, i
		words += an.sents[i].b - an.sents[i].a
		own += an.ownShared(cs, an.sents[i])
	}
	return free == 1 && words <= 25 && an.placeholder(an.sents[last]) || own >= 2
}

// placeholderWords mark a clause a drafter left out on purpose.
var placeholderWords = setOf("omitted", "reserved", "deleted", "intentionally", "applicable", "used")

// placeholder reports "Intentionally omitted.", "[Reserved]", "Not
// used."
func (an *analyzer) placeholder(s sentence) bool {
	for _, t := range an.gtoks[s.a:s.b] {
		if placeholderWords[t.Plain] {
			return true
		}
	}
	return false
}

// extend grows a located run of sentences w of section s (ending at
// sentence sb) by what belongs to the clause after it: the rest of the
// section when the section is the clause's own and the run opens it, up
// to a sentence of another clause's standard text (a scan that lost the
// next heading leaves the arbitration clause under "Governing Law"),
// else the neighbours that read as part of it (see attach.go). It
// returns the new end (a sentence index).
func (an *analyzer) extend(cs *clauseSpec, s *section, w window, sb int, used []bool, exact bool) int {
	b := w.b
	if exact && s != nil && !an.jointHeading(cs, s) && an.opensSection(s, w.a, used) && an.soleHeading(cs, s) {
		own := an.ownEnd(s, w.a)
		for b < own && !used[b] && !an.fragment(b) && !an.otherClause(cs, b) {
			b++
		}
		if b < own {
			return b
		}
		// Beyond the section, paragraphs under no title of their own may
		// still go on with the clause ("14.2 Notices." then "14.3 A party
		// may change its address for notices ...").
		sb = len(an.sents)
		if p := s.parent; p != nil && p.h != nil {
			_, sb = an.sectionSentences(p)
		}
	}
	titled := an.opensOwnTitle(cs, w.a, used)
	for {
		for b < sb && !used[b] && !an.titledStart(b) && !an.endOfBody(b) {
			prev, next := an.sents[b-1], an.sents[b]
			sameUnit := an.gtoks[prev.b-1].Para == an.gtoks[next.a].Para
			if sameUnit && !an.joinsInParagraph(cs, b, titled) || !sameUnit && !an.joinsAsParagraph(cs, b, titled) {
				return b
			}
			b++
		}
		// Under a title of the clause's own ("14.3 Assignment and
		// Transfer."), the untitled paragraphs after its section are read
		// like the section's own ("14.4 This Agreement binds ... the
		// parties' permitted successors and assigns.").
		if b != sb || !titled || s == nil || s.parent == nil || s.parent.h == nil {
			break
		}
		_, pb := an.sectionSentences(s.parent)
		if pb <= sb {
			break
		}
		sb = pb
	}
	// Past the section's end, untitled paragraphs that are sentences of
	// the clause's own standard text go on with it ("17.5 Choice of Law
	// and Courts. This Agreement shall be governed by ..." then "17.6
	// Each party irrevocably submits to the exclusive jurisdiction ...").
	if b != sb {
		return b
	}
	for b < len(an.sents) && !used[b] && !an.titledStart(b) && an.standardSentence(cs, b) && !an.otherClause(cs, b) {
		b++
	}
	return b
}

// endOfBody reports whether sentence i opens the signature block or an
// exhibit ("IN WITNESS WHEREOF, the parties have executed this Agreement
// ..."), which is in no clause.
func (an *analyzer) endOfBody(i int) bool {
	u := an.gtoks[an.sents[i].a].Para
	return an.unitTok[u] == an.sents[i].a && closesBody(&an.doc.units[u])
}

// fragmentWords: a paragraph of fewer words that does not end a sentence
// is a fragment, not prose: a table's cells or a page's furniture that
// extraction put after the clause ("Consultant, per day").
const fragmentWords = 5

// fragment reports whether sentence i is a whole paragraph that is a
// fragment.
func (an *analyzer) fragment(i int) bool {
	s := an.sents[i]
	if s.b-s.a >= fragmentWords {
		return false
	}
	u := an.gtoks[s.a].Para
	if an.gtoks[s.b-1].Para != u || an.unitTok[u] != s.a || an.unitTok[u+1] != s.b {
		return false
	}
	body := strings.TrimSpace(an.doc.units[u].body)
	return body != "" && !strings.ContainsAny(body[len(body)-1:], ".;:!?)")
}

// jointHeading reports whether the synonym s's heading matched names a
// second subject too.
func (an *analyzer) jointHeading(cs *clauseSpec, s *section) bool {
	i := an.sectionIndex(s)
	return i >= 0 && an.joint[cs.index][i]
}

// headingScoreOf is the heading score of section s for the clause (0 for
// a section not in the tree).
func (an *analyzer) headingScoreOf(cs *clauseSpec, s *section) float64 {
	if i := an.sectionIndex(s); i >= 0 {
		return an.scores[cs.index][i]
	}
	return 0
}

// sectionIndex is the index of s in the document's sections, -1 if none.
func (an *analyzer) sectionIndex(s *section) int {
	return slices.Index(an.doc.sections, s)
}

// opensSection reports whether sentence a is the first of section s that
// no other clause holds.
func (an *analyzer) opensSection(s *section, a int, used []bool) bool {
	sa, _ := an.sectionSentences(s)
	for i := sa; i < a; i++ {
		if !used[i] {
			return false
		}
	}
	return true
}

// soleHeading reports whether no other clause's heading matches s.
func (an *analyzer) soleHeading(cs *clauseSpec, s *section) bool {
	i := an.sectionIndex(s)
	if i < 0 {
		return true
	}
	for c, row := range an.scores {
		if c != cs.index && row[i] >= headingFloor {
			return false
		}
	}
	return true
}

// ownEnd is the end (a sentence index) of the part of section s that
// sentence a is in: up to the first titled subsection after it, which is
// a provision of its own.
func (an *analyzer) ownEnd(s *section, a int) int {
	unit := an.gtoks[an.sents[a].a].Para
	end := s.end
	for _, c := range an.doc.sections {
		if c.first > unit && c.first < end && s.contains(c.first) && c.h.title != "" {
			end = c.first
			break
		}
	}
	for u := unit + 1; u < end; u++ {
		if an.doc.units[u].h == nil && foreignNumber(s.h, an.doc.units[u].text) {
			end = u
			break
		}
	}
	return an.sentenceAtUnit(end)
}

// foreignNumber reports whether a paragraph read as no heading opens with
// a subsection number of another section than h's ("8.2 Provider warrants
// ..." under "7. Indemnities."): a scan that read two columns across
// lost the heading of section 8, and what follows is not section 7's.
func foreignNumber(h *heading, text string) bool {
	if h == nil || h.style != "dotted-1" {
		return false
	}
	m := reNumberMarker.FindString(text)
	if m == "" {
		return false
	}
	first, _, _ := strings.Cut(m, ".")
	return first != h.number
}

func (an *analyzer) locateByContent(cs *clauseSpec, used []bool) (location, bool) {
	w := an.bestWindow(cs, 0, len(an.sents), used, false)
	if w.b == w.a {
		return location{}, false
	}
	if w.sim < contentFloor && !(w.sim >= aboutFloor && an.about(cs, w) >= aboutShare) {
		// The drafter's own short version of the clause: less like the
		// standard than a neighbouring provision may be, but naming its
		// subject in the words the playbook's headings use, or opening
		// with its name ("Notices shall be in writing and shall be deemed
		// received seven (7) days after posting ...").
		w = an.bestWindowWhere(cs, 0, len(an.sents), used, false, func(w window) bool {
			toks := an.gtoks[an.sents[w.a].a:an.sents[w.b-1].b]
			if w.sim < topicFloor && an.ownInRun(cs, w) < manyOwnWords {
				return w.sim >= coreFloor && an.rareCore(cs, toks) && !an.nearSubject(cs, w.a) && an.everySentenceOnSubject(cs, w) ||
					w.sim >= headingSubjectFloor && an.subjectWords(cs, w) >= subjectWords && an.opensTopicalSection(cs, w.a, used) ||
					w.sim >= headingSubjectFloor && an.subjectWords(cs, w) >= manySubjectWords &&
						cs.topicShared(toks) > 0 && an.opensTitled(w.a, used)
			}
			return cs.topicShared(toks) >= topicWords || an.rareTopic(cs, toks) && !an.nearSubject(cs, w.a) ||
				an.ownInRun(cs, w) >= ownWords && !an.nearSubject(cs, w.a) ||
				an.opensWithName(cs, an.sents[w.a]) && !an.nearSubject(cs, w.a)
		})
		if w.b == w.a {
			return location{}, false
		}
	}
	s := an.doc.innermostTitled(an.gtoks[an.sents[w.a].a].Para)
	sb := len(an.sents)
	if s != nil {
		_, sb = an.sectionSentences(s)
		// Untitled paragraphs after a titled one ("20.4 Events Outside a
		// Party's Control. ..." then "20.5 Provider shall ... limit the
		// effect of such events.") may go on with it: extend stops at
		// the next titled heading and joins only what reads as part.
		if p := s.parent; p != nil && p.h != nil {
			_, sb = an.sectionSentences(p)
		}
	}
	loc := location{by: result.LocatedByContent, strength: w.sim}
	end := an.extend(cs, nil, w, sb, used, false)
	if s != nil && an.topicalHeading(cs, s) && an.opensSection(s, w.a, used) && an.soleHeading(cs, s) {
		// Under a heading that names the clause's subject in words the
		// playbook's headings do not ("Resolving Disputes", "Caps and
		// Exclusions"), the clause opens the section and the untitled
		// paragraphs after it are part of it: a sentence a drafter added
		// there ("17.2 Either party may seek interim relief ...") is
		// compared, not left out to make the clause look standard.
		own := an.ownEnd(s, w.a)
		for end < own && !used[end] {
			end++
		}
	}
	loc.ta, loc.tb = an.sents[w.a].a, an.sents[end-1].b
	if s != nil {
		loc.heading = s.h.text
	}
	return loc, true
}

// opensTopicalSection reports whether sentence a opens the innermost
// titled section it stands in, under a heading that names the clause's
// subject in words the playbook's headings do not ("Caps and
// Exclusions"): there a run is held to the floor of a heading that names
// the clause beside another subject (headingSubjectFloor).
func (an *analyzer) opensTopicalSection(cs *clauseSpec, a int, used []bool) bool {
	s := an.doc.innermostTitled(an.gtoks[an.sents[a].a].Para)
	return s != nil && an.topicalHeading(cs, s) && an.opensSection(s, a, used)
}

// opensTitled reports whether sentence a opens the innermost titled
// section it stands in (the sentences before it there held by other
// clauses).
func (an *analyzer) opensTitled(a int, used []bool) bool {
	s := an.doc.innermostTitled(an.gtoks[an.sents[a].a].Para)
	return s != nil && an.opensSection(s, a, used)
}

// topicalHeading reports whether section s's title has a topic word of
// the clause and none of another clause's: "Resolving Disputes" for
// dispute resolution, not "Indemnities and Liability" for limitation of
// liability.
func (an *analyzer) topicalHeading(cs *clauseSpec, s *section) bool {
	if s.h == nil || s.h.title == "" {
		return false
	}
	toks := tokenize(cleanText(s.h.title), 0)
	if cs.topicShared(toks) == 0 {
		return false
	}
	for _, o := range an.specs {
		if o != cs && o.topicShared(toks) > 0 {
			return false
		}
	}
	return true
}

// nearSubject reports whether sentence a stands under a titled heading
// that shares a word with the clause's title yet did not locate the
// clause: a variant of its subject ("Termination for Cause" beside
// termination for convenience), whose text one topic word must not claim.
func (an *analyzer) nearSubject(cs *clauseSpec, a int) bool {
	s := an.doc.innermostTitled(an.gtoks[an.sents[a].a].Para)
	if s == nil || s.h == nil {
		return false
	}
	title := titleWords(cs.clause.Title)
	for _, w := range titleWords(s.h.title) {
		if slices.Contains(title, w) {
			return true
		}
	}
	return false
}

// ownInRun counts the clause's own words in a run of sentences.
func (an *analyzer) ownInRun(cs *clauseSpec, w window) int {
	return an.ownShared(cs, sentence{an.sents[w.a].a, an.sents[w.b-1].b})
}

// everySentenceOnSubject reports whether a run is one sentence, or every
// sentence of it has a word of the clause's own or topic words ("The
// laws of Switzerland govern this Agreement. The courts of Zurich have
// exclusive jurisdiction."): a sentence with a core word is not padded
// with its neighbours ("Signed by the authorised representatives ...")
// to reach coreFloor.
func (an *analyzer) everySentenceOnSubject(cs *clauseSpec, w window) bool {
	if w.b-w.a == 1 {
		return true
	}
	for i := w.a; i < w.b; i++ {
		if an.subjectWords(cs, window{i, i + 1, 0}) == 0 {
			return false
		}
	}
	return true
}

// subjectWords counts the distinct own and topic words of the clause in
// a run of sentences.
func (an *analyzer) subjectWords(cs *clauseSpec, w window) int {
	seen := map[string]bool{}
	for _, tok := range an.gtoks[an.sents[w.a].a:an.sents[w.b-1].b] {
		if w := docStem(tok.Plain); cs.own[w] || cs.topic[w] {
			seen[w] = true
		}
	}
	return len(seen)
}

// about is the share of the clause's own words a run of sentences has.
func (an *analyzer) about(cs *clauseSpec, w window) float64 {
	if len(cs.own) == 0 {
		return 0
	}
	seen := map[string]bool{}
	for _, tok := range an.gtoks[an.sents[w.a].a:an.sents[w.b-1].b] {
		if w := docStem(tok.Plain); cs.own[w] {
			seen[w] = true
		}
	}
	return float64(len(seen)) / float64(len(cs.own))
}

// bestWindow finds the run of at most a few more sentences than the
// standard has, within sentences [sa, sb) and none of them used, most
// similar to the standard text. Outside a heading's section (inSection
// false) a run never crosses a titled heading.
func (an *analyzer) bestWindow(cs *clauseSpec, sa, sb int, used []bool, inSection bool) window {
	return an.bestWindowWhere(cs, sa, sb, used, inSection, nil)
}

// bestWindowWhere is bestWindow over the runs keep accepts (all when nil).
func (an *analyzer) bestWindowWhere(cs *clauseSpec, sa, sb int, used []bool, inSection bool, keep func(window) bool) window {
	m := difflib.NewMatcherWithJunk(nil, cs.stdKeys, false, nil)
	bound := an.overlapBound(cs)
	best := window{a: sa, b: sa}
	maxLen := len(cs.stdSents) + 3
	for a := sa; a < sb; a++ {
		if used[a] {
			continue
		}
		if an.foreign(cs, a) || an.continuesOther(cs, a) {
			continue
		}
		for b := a + 1; b <= sb && b-a <= maxLen && !used[b-1]; b++ {
			if b-1 > a && !inSection && an.titledStart(b-1) {
				break
			}
			if b-1 > a && an.foreign(cs, b-1) {
				continue
			}
			ta, tb := an.sents[a].a, an.sents[b-1].b
			if tb-ta > maxCompareWords {
				break
			}
			if bound(ta, tb) <= best.sim {
				continue
			}
			m.SetSeq1(keys(an.gtoks[ta:tb]))
			if m.RealQuickRatio() <= best.sim || m.QuickRatio() <= best.sim {
				continue
			}
			if r := m.Ratio(); r > best.sim && (keep == nil || keep(window{a, b, r})) {
				best = window{a, b, r}
			}
		}
	}
	return best
}

// continuesOther reports whether sentence a goes on, in its paragraph,
// with a sentence of another clause's standard text and has no word
// naming this clause's subject: "A party may change its address for notices ..." after
// the notices clause is no start of governing law, even where a scan
// lost the heading between them.
func (an *analyzer) continuesOther(cs *clauseSpec, a int) bool {
	s := an.sents[a]
	return a > 0 && an.gtoks[an.sents[a-1].b-1].Para == an.gtoks[s.a].Para && an.otherClause(cs, a-1) &&
		cs.topicShared(an.gtoks[s.a:s.b]) == 0
}

// titledStart reports whether a titled heading stands between sentence
// i and the one before it.
func (an *analyzer) titledStart(i int) bool {
	if i == 0 {
		return false
	}
	prev, u := an.gtoks[an.sents[i-1].b-1].Para, an.gtoks[an.sents[i].a].Para
	for k := prev + 1; k <= u; k++ {
		if h := an.doc.units[k].h; h != nil && h.title != "" {
			return true
		}
	}
	return false
}

// overlapBound returns an upper bound on the similarity of the tokens
// [ta, tb) to the clause's standard text, from prefix sums of the tokens
// that occur in the standard text at all. It lets the search skip
// difflib for all but a few candidates.
func (an *analyzer) overlapBound(cs *clauseSpec) func(ta, tb int) float64 {
	if cs.overlap == nil {
		inStd := make(map[string]bool, len(cs.stdKeys))
		for _, k := range cs.stdKeys {
			inStd[k] = true
		}
		cs.overlap = make([]int, len(an.gtoks)+1)
		for i, t := range an.gtoks {
			cs.overlap[i+1] = cs.overlap[i]
			if inStd[t.Key] {
				cs.overlap[i+1]++
			}
		}
	}
	std := len(cs.stdKeys)
	return func(ta, tb int) float64 {
		l := tb - ta
		if l == 0 {
			return 0
		}
		matches := min(cs.overlap[tb]-cs.overlap[ta], l, std)
		return 2 * float64(matches) / float64(l+std)
	}
}

// sectionSentences is the range of sentences in section s.
func (an *analyzer) sectionSentences(s *section) (int, int) {
	return an.sentenceAtUnit(max(s.first, 0)), an.sentenceAtUnit(s.end)
}

// sentenceAtUnit is the index of the first sentence at or after the first
// token of unit u.
func (an *analyzer) sentenceAtUnit(u int) int {
	t := an.unitTok[u]
	return sort.Search(len(an.sents), func(i int) bool { return an.sents[i].a >= t })
}
