package review

import (
	"strings"
	"sync"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
)

// A located clause is the run of sentences that matches its standard
// text best; what stands next to it decides how far it reaches. Inside a
// section headed for the clause alone, the clause runs to the end of the
// section: whatever the drafter put under that heading is part of it. In
// a combined section, a general section or a paragraph that runs several
// provisions together, a neighbour joins the clause only when it reads as
// part of it:
//
//   - a sentence after the clause in its paragraph, unless it opens like
//     a provision of its own ("Either party may terminate ...", "This
//     Agreement is written in English") and has no link to the clause,
//     or has a core word of another clause and no word of this one ("The
//     laws of Switzerland govern this Agreement." after arbitration);
//   - the paragraph after it, only when linked: a reference back ("such
//     notice", "this section", "the foregoing", "also"), two or more of
//     the clause's own words (words of its standard text and title that
//     no other clause of the playbook uses), or one when it does not open
//     like a provision of its own ("The arbitration shall be conducted in
//     English."); under a title of the clause's own ("15.2 Law."), any
//     untitled paragraph that does not open like a provision of its own
//     and is not plainly another clause's ("15.3 The United Nations
//     Convention ... does not apply to this Agreement."), or that does
//     but has two words of the clause's standard text and names no other
//     clause's subject ("15.2 Either party may seek interim relief from
//     any competent court at any time." after the arbitration clause).
//     Such a title reaches past its own subsection to the untitled
//     paragraphs after it ("14.3 Assignment and Transfer. ..." then
//     "14.4 This Agreement binds ... successors and assigns.").
//
// The signature block and what follows it are never part of a clause.
// A sentence before the clause never joins it: what precedes a clause in
// its section is another provision (the term before termination for
// convenience) or a lead-in.

// stem reduces a plain word to a crude stem, so "insured", "insurance"
// and "insurers" share one, as do "terminate" and "termination".
func stem(p string) string {
	for _, suf := range []string{"ations", "ation", "ances", "ance", "ences", "ence", "ings", "ing", "ions", "ion",
		"ers", "er", "ed", "es", "s", "e"} {
		if len(p)-len(suf) >= 4 && strings.HasSuffix(p, suf) {
			return p[:len(p)-len(suf)]
		}
	}
	return p
}

// kindredStems map a contract's word to the stem the playbook's texts
// name the same thing by, for telling what a sentence is about (never for
// comparing it): drafters "recruit" or "poach" "staff" where the standard
// text "solicit"s and "hire"s "employees".
var kindredStems = map[string]string{
	"recruit": "solicit", "poach": "solicit", "staff": "employe", "employ": "hire",
}

// docStem is a contract word's stem for telling what its sentence is
// about: stem, then its kindred stem.
func docStem(p string) string {
	w := stem(p)
	if k, ok := kindredStems[w]; ok {
		return k
	}
	return w
}

// vocabWords are the stems of a text's content words (four letters or
// more, not common words).
func vocabWords(t *tables, s string) map[string]bool {
	out := map[string]bool{}
	for _, tok := range tokenize(cleanText(s), 0) {
		if len(tok.Plain) < 4 || t.common[tok.Key] || t.protected[tok.Key] || hasDigit(tok.Plain) {
			continue
		}
		out[stem(tok.Plain)] = true
	}
	return out
}

// setOwnWords gives each clause its own words: the stems of its standard
// text and title that no other clause has, and its topic words, the
// stems of its title and heading synonyms no other clause's title or
// synonyms have (the words a drafter names the clause's subject by:
// "hire", "employees" and "solicitation" for non-solicitation, which
// another drafter's wording of the clause is likely to use even when it
// shares little else with the standard text). The other clauses are the
// playbook's and the default playbook's, so a playbook of one or two
// clauses still tells a clause's words from a contract's common ones.
func setOwnWords(t *tables, specs []*clauseSpec) {
	others := []*playbook.Clause{}
	keys := map[string]bool{}
	for _, cs := range specs {
		keys[cs.clause.Key] = true
	}
	if def, err := defaultPlaybook(); err == nil {
		for i := range def.Clauses {
			if !keys[def.Clauses[i].Key] {
				others = append(others, &def.Clauses[i])
			}
		}
	}
	text := func(c *playbook.Clause) string { return c.StandardText + " " + c.Title }
	names := func(c *playbook.Clause) string {
		return c.Title + " " + strings.ReplaceAll(c.Key, "_", " ") + " " + strings.Join(c.Headings, " ")
	}
	own, topic := uniqueWords(t, specs, others, text), uniqueWords(t, specs, others, names)
	for i, cs := range specs {
		cs.own, cs.topic = own[i], topic[i]
		cs.words = vocabWords(t, text(cs.clause))
		for w := range cs.words {
			if genericWords[w] {
				delete(cs.words, w)
			}
		}
		// The words of its key terms ("percent" of "one percent (1%) per
		// month") say how much, not what about: "Provider may adjust the
		// charges ... up to a maximum of four percent (4%)" is not about
		// payment terms.
		for _, tm := range cs.stdTerms {
			for w := range vocabWords(t, tm.Text) {
				if !cs.topic[w] {
					delete(cs.own, w)
				}
			}
		}
	}
}

// defaultPlaybook is the default playbook, parsed once and only read.
var defaultPlaybook = sync.OnceValues(playbook.DefaultPlaybook)

// uniqueWords returns, for each spec, the stems of words(clause) that no
// other spec's nor any of others' words have.
func uniqueWords(t *tables, specs []*clauseSpec, others []*playbook.Clause, words func(*playbook.Clause) string) []map[string]bool {
	all := make([]map[string]bool, len(specs))
	count := map[string]int{}
	for i, cs := range specs {
		all[i] = vocabWords(t, words(cs.clause))
		for w := range all[i] {
			count[w]++
		}
	}
	for _, c := range others {
		for w := range vocabWords(t, words(c)) {
			count[w]++
		}
	}
	out := make([]map[string]bool, len(specs))
	for i := range specs {
		out[i] = map[string]bool{}
		for w := range all[i] {
			if count[w] == 1 && !genericWords[w] {
				out[i][w] = true
			}
		}
	}
	return out
}

// topicShared counts the clause's topic words among the tokens.
func (cs *clauseSpec) topicShared(toks []token) int {
	seen := map[string]bool{}
	for _, tok := range toks {
		if w := docStem(tok.Plain); cs.topic[w] {
			seen[w] = true
		}
	}
	n := families(seen)
	if cs.namedInFull(toks) {
		n++
	}
	return n
}

// families counts stems, one for a stem and those it is a prefix of:
// "terminate" and "termination" (stems "terminat" and "termin") are one
// word naming the subject, not two.
func families(stems map[string]bool) int {
	n := 0
	for w := range stems {
		n++
		for p := range stems {
			if len(p) < len(w) && strings.HasPrefix(w, p) {
				n--
				break
			}
		}
	}
	return n
}

// namedInFull reports whether the tokens hold one of the clause's names
// of two words or more ("early termination", "termination at will").
func (cs *clauseSpec) namedInFull(toks []token) bool {
	var words []string
	for _, tok := range toks {
		if p := tok.Plain; p != "" && !titleStopWords[p] {
			words = append(words, foldPlain(singular(p)))
		}
	}
	for _, syn := range cs.syns {
		if len(syn) >= 2 && containsRun(words, syn) {
			return true
		}
	}
	return false
}

// rareTopic reports whether the tokens have a topic word of the clause
// that the document uses in at most rareTopicSents sentences.
func (an *analyzer) rareTopic(cs *clauseSpec, toks []token) bool {
	if an.stemSents == nil {
		an.stemSents = map[string]int{}
		for _, s := range an.sents {
			seen := map[string]bool{}
			for _, tok := range an.gtoks[s.a:s.b] {
				if w := docStem(tok.Plain); !seen[w] {
					seen[w] = true
					an.stemSents[w]++
				}
			}
		}
	}
	for _, tok := range toks {
		if w := docStem(tok.Plain); cs.topic[w] && an.stemSents[w] <= rareTopicSents {
			return true
		}
	}
	return false
}

// rareCore reports whether the tokens have a core word of the clause
// (one of its topic words that its standard text has too, and no other
// clause: "assign", not "change" from the synonym "Assignment; Change of
// Control") that the document uses in at most rareTopicSents sentences.
func (an *analyzer) rareCore(cs *clauseSpec, toks []token) bool {
	for _, tok := range toks {
		if w := docStem(tok.Plain); cs.topic[w] && cs.own[w] && an.rareTopic(cs, []token{tok}) {
			return true
		}
	}
	return false
}

// foreign reports whether sentence i is plainly another clause's: none
// of cs's own or topic words, and two or more of another clause's (its
// own words, or its topic words). A run of sentences located for cs
// neither starts nor ends with one: under "Law and Disputes" the
// governing-law run stops before "Disputes shall be finally resolved by
// arbitration ...".
func (an *analyzer) foreign(cs *clauseSpec, i int) bool {
	if an.foreignMemo == nil {
		an.foreignMemo = map[[2]int]bool{}
	}
	key := [2]int{cs.index, i}
	if v, ok := an.foreignMemo[key]; ok {
		return v
	}
	s := an.sents[i]
	toks := an.gtoks[s.a:s.b]
	v := false
	if an.ownShared(cs, s) == 0 && cs.topicShared(toks) == 0 {
		for _, o := range an.specs {
			if o != cs && (an.ownShared(o, s) >= 2 || o.topicShared(toks) >= 2) {
				v = true
				break
			}
		}
	}
	an.foreignMemo[key] = v
	return v
}

// genericWords are contract words too general to tie a sentence to one
// clause even when only one standard text uses them.
var genericWords = setOf("agreement", "agre", "party", "parti", "provider", "customer", "servic", "service", "section", "claus",
	"clause", "shall", "other", "under", "this", "that", "such", "with", "without", "written", "writing", "notic",
	"notice", "period", "term", "terms", "date", "days", "within", "after", "before", "upon", "applicable", "law",
	"laws", "right", "rights", "obligation", "obligations", "perform", "performanc", "relat", "relating", "aris",
	"arising", "connection", "respect", "provid", "provided", "request", "reason", "reasonabl", "reasonable",
	// "Change of Control" names assignment only as a phrase: "No change to
	// this Agreement is valid unless in writing" is not about it.
	"chang", "change")

// ownShared counts the clause's own words among the sentence's.
func (an *analyzer) ownShared(cs *clauseSpec, s sentence) int {
	return an.countWords(cs.own, s)
}

// countWords counts the distinct stems of words among the sentence's.
func (an *analyzer) countWords(words map[string]bool, s sentence) int {
	seen := map[string]bool{}
	for _, tok := range an.gtoks[s.a:s.b] {
		if w := docStem(tok.Plain); words[w] {
			seen[w] = true
		}
	}
	return len(seen)
}

// wordsShared counts the words of the clause's standard text and title
// among the sentence's, its own and others'.
func (an *analyzer) wordsShared(cs *clauseSpec, s sentence) int {
	return an.countWords(cs.words, s)
}

// otherSubject reports whether sentence s names another clause's
// subject (one of its topic words) or has two of its own words.
func (an *analyzer) otherSubject(cs *clauseSpec, s sentence) bool {
	toks := an.gtoks[s.a:s.b]
	for _, o := range an.specs {
		if o != cs && (o.topicShared(toks) > 0 || an.ownShared(o, s) >= 2) {
			return true
		}
	}
	return false
}

// otherCore reports whether sentence s has a core word of another
// clause (one of its topic words its standard text has too, "govern").
func (an *analyzer) otherCore(cs *clauseSpec, s sentence) bool {
	for _, tok := range an.gtoks[s.a:s.b] {
		w := docStem(tok.Plain)
		for _, o := range an.specs {
			if o != cs && o.topic[w] && o.own[w] {
				return true
			}
		}
	}
	return false
}

// backReferences are words by which a sentence refers to the provision
// before it.
var backReferenceAfterThis = setOf("section", "clause", "paragraph", "right", "rights", "obligation", "obligations",
	"warranty", "limitation", "limit", "limits", "indemnity", "restriction", "provision", "undertaking", "cap",
	"exclusion", "period", "notice", "event")

// Kinds of back reference.
const (
	noReference = iota
	// sectionReference: "this section", "this clause", which in a
	// section holding several provisions may mean all of them.
	sectionReference
	// provisionReference: "such", "the foregoing", "this warranty".
	provisionReference
)

// backReference tells how sentence s refers to what comes before it:
// "such", "also", "the foregoing", "in addition" or "this" with a word
// naming a provision ("this warranty"; "this section"), not "this
// Agreement".
func (an *analyzer) backReference(s sentence) int {
	toks := an.gtoks[s.a:s.b]
	out := noReference
	for i, tok := range toks {
		switch tok.Plain {
		case "such", "also", "foregoing", "thereof", "thereunder", "same":
			return provisionReference
		case "addition":
			if i > 0 && toks[i-1].Plain == "in" {
				return provisionReference
			}
		case "this", "these":
			if i+1 < len(toks) && backReferenceAfterThis[toks[i+1].Plain] {
				switch toks[i+1].Plain {
				case "section", "clause", "paragraph":
					out = sectionReference
				default:
					return provisionReference
				}
			}
		}
	}
	return out
}

// linksBack reports whether sentence i refers back to the clause: a
// reference to the provision before it, or to "this section" when the
// clause opens a section titled for it alone (titled and soleSection), or the sentence has a word
// of the clause ("The limits in this section do not apply ...") or a key
// term of any kind ("Provider's total liability under this section shall
// not exceed $2,000,000."): "The parties agree that the allocation of
// risk in this section is reflected in the fees" after a liability cap,
// in a section that also holds the indemnities, speaks of the whole
// section and changes nothing in the clause.
func (an *analyzer) linksBack(cs *clauseSpec, i int, titled bool) bool {
	s := an.sents[i]
	switch an.backReference(s) {
	case provisionReference:
		return true
	case sectionReference:
		return titled && an.soleSection(cs, i) || an.subjectWords(cs, window{i, i + 1, 0}) > 0 ||
			len(extractTerms(rawText(an.gtoks[s.a:s.b]))) > 0
	}
	return false
}

// provisionSubjects open a sentence that stands on its own: a party or
// the agreement as its subject.
var provisionSubjects = [][]string{
	{"either", "party"}, {"each", "party"}, {"neither", "party"}, {"the", "parties"}, {"a", "party"}, {"no", "party"},
	{"both", "parties"}, {"the", "provider"}, {"the", "customer"}, {"this", "agreement"}, {"the", "agreement"},
	{"provider"}, {"customer"}, {"supplier"}, {"client"}, {"the", "supplier"}, {"the", "client"},
}

// opensProvision reports a sentence whose subject is a party or the
// agreement.
func (an *analyzer) opensProvision(s sentence) bool {
	toks := an.gtoks[s.a:s.b]
	for _, subj := range provisionSubjects {
		if len(toks) < len(subj) {
			continue
		}
		ok := true
		for i, w := range subj {
			if toks[i].Plain != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// joinsInParagraph reports whether sentence i, right after the clause
// in its paragraph, is part of it.
func (an *analyzer) joinsInParagraph(cs *clauseSpec, i int, titled bool) bool {
	s := an.sents[i]
	if an.otherClause(cs, i) || an.otherCore(cs, s) && an.subjectWords(cs, window{i, i + 1, 0}) == 0 {
		return false
	}
	return !an.opensProvision(s) || an.linksBack(cs, i, titled) || an.ownShared(cs, s) >= 1 || an.standardSentence(cs, i)
}

// joinsAsParagraph reports whether sentence i, opening the paragraph
// after the clause, is part of it. Under a title of the clause's own
// (titled: "15.2 Law." or "Giving Notice" opens the run), an untitled
// paragraph that does not open like a provision of its own and is not
// plainly another clause's goes on with it too ("15.3 The United Nations
// Convention on Contracts for the International Sale of Goods does not
// apply to this Agreement."): left out, a drafter's addition would make
// the clause look standard.
func (an *analyzer) joinsAsParagraph(cs *clauseSpec, i int, titled bool) bool {
	s := an.sents[i]
	if an.otherClause(cs, i) {
		return false
	}
	own := an.ownShared(cs, s)
	if own == 0 && cs.topicShared(an.gtoks[s.a:s.b]) > 0 {
		// A word naming the clause's subject ("All other warranties ...
		// are excluded") links like one of its own words.
		own = 1
	}
	return an.linksBack(cs, i, titled) || own >= 2 || own == 1 && !an.opensProvision(s) || an.standardSentence(cs, i) ||
		titled && (!an.opensProvision(s) || an.wordsShared(cs, s) >= 2 && !an.otherSubject(cs, s)) && !an.foreign(cs, i) ||
		an.opensWithName(cs, s)
}

// opensWithName reports whether sentence s opens with the clause's title
// or a synonym as its subject ("Notices to Customer must be copied to its
// legal department." after the notices clause).
func (an *analyzer) opensWithName(cs *clauseSpec, s sentence) bool {
	var raw []string
	for _, tok := range an.gtoks[s.a:min(s.b, s.a+6)] {
		raw = append(raw, tok.Raw)
	}
	first := titleWords(strings.Join(raw, " "))
	for _, syn := range cs.syns {
		if len(syn) > 0 && len(syn) <= len(first) && equalWords(first[:len(syn)], syn) {
			return true
		}
	}
	return false
}

// soleSection reports whether the innermost titled section of sentence i
// names the clause alone: its heading names no second subject and
// matches no other clause, so "this section" there is the clause.
func (an *analyzer) soleSection(cs *clauseSpec, i int) bool {
	s := an.doc.innermostTitled(an.gtoks[an.sents[i].a].Para)
	return s != nil && s.h != nil && !an.jointHeading(cs, s) && an.soleHeading(cs, s)
}

// opensOwnTitle reports whether sentence a opens the innermost titled
// section it stands in, and that section's title names the clause (its
// heading matched, or it has a topic word of the clause and no other
// clause's).
func (an *analyzer) opensOwnTitle(cs *clauseSpec, a int, used []bool) bool {
	s := an.doc.innermostTitled(an.gtoks[an.sents[a].a].Para)
	if s == nil || s.h == nil || !an.opensSection(s, a, used) {
		return false
	}
	return an.topicalHeading(cs, s) || an.headingScoreOf(cs, s) >= headingFloor
}

// standardSentence reports whether sentence i is a sentence of the
// clause's own standard text, or close to one (otherClauseFloor): the
// clause's second half in a paragraph of its own ("17.6 Each party
// irrevocably submits to the exclusive jurisdiction ..." after "17.5
// Choice of Law and Courts. This Agreement shall be governed by ...").
func (an *analyzer) standardSentence(cs *clauseSpec, i int) bool {
	return an.clauseSims(i)[cs.index] >= otherClauseFloor
}

// otherClauseFloor is the similarity to a sentence of another clause's
// standard text above which a sentence is that clause's, not an
// addition to this one.
const otherClauseFloor = 0.6

// otherClause reports whether sentence i is a sentence of another
// clause's standard text, or close to one.
func (an *analyzer) otherClause(cs *clauseSpec, i int) bool {
	sims := an.clauseSims(i)
	for c, sim := range sims {
		if c != cs.index && sim >= otherClauseFloor && sim > sims[cs.index] {
			return true
		}
	}
	return false
}

// clauseSims is sentence i's best similarity to a sentence of each
// clause's standard text (computed once per sentence).
func (an *analyzer) clauseSims(i int) []float64 {
	if an.sentClause == nil {
		an.sentClause = map[int][]float64{}
	}
	sims, ok := an.sentClause[i]
	if !ok {
		sims = make([]float64, len(an.specs))
		s := an.sents[i]
		m := difflib.NewMatcherWithJunk(keys(an.gtoks[s.a:s.b]), nil, false, nil)
		for c, other := range an.specs {
			for _, ss := range other.stdSents {
				m.SetSeq2(other.stdKeys[ss.a:ss.b])
				if m.RealQuickRatio() > sims[c] && m.QuickRatio() > sims[c] {
					sims[c] = max(sims[c], m.Ratio())
				}
			}
		}
		an.sentClause[i] = sims
	}
	return sims
}
