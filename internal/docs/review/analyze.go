package review

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// analyzer holds one document's analysis state; nothing outlives a call
// to Analyze.
type analyzer struct {
	t     *tables
	doc   *document
	utoks [][]token // compared tokens of each unit's body
	// gtoks are all units' tokens in order (token.Para is the unit);
	// unitTok[u] is the index of unit u's first token (len(units)+1
	// entries); sents are the document's sentences over gtoks.
	gtoks   []token
	unitTok []int
	sents   []sentence
	// scores[c][s] is the heading score of section s for clause c;
	// joint[c][s] says the synonym it matched names two subjects.
	scores [][]float64
	joint  [][]bool
	// docCount counts the document's words (fold keys); vocab holds the
	// words of the playbook's standard texts. Both tell a real word from
	// OCR garbage.
	docCount map[string]int
	vocab    map[string]bool
	// specs are the playbook's clauses; sentClause caches each sentence's
	// similarity to each clause's standard sentences (see otherClause).
	specs      []*clauseSpec
	sentClause map[int][]float64
	// stemSents counts, for each word stem, the sentences it occurs in
	// (built on first use by rareTopic).
	stemSents map[string]int
	// foreignMemo caches foreign(clause, sentence).
	foreignMemo map[[2]int]bool
}

// clauseSpec is a playbook clause prepared for matching.
type clauseSpec struct {
	clause   *playbook.Clause
	index    int // in the playbook
	std      []token
	stdKeys  []string
	stdTerms []term
	stdSents []sentence // over std
	pins     []pin
	syns     [][]string // titleWords of the title, the key and each heading
	// joint[i] says syns[i] names two subjects ("Fees and Payment",
	// "Assignment; Change of Control").
	joint []bool
	// own are the stems of words of the clause no other clause of the
	// playbook has (see attach.go).
	own map[string]bool
	// topic are the stems of its title and synonyms no other clause has.
	topic map[string]bool
	// words are the stems of its standard text's and title's words, other
	// clauses' too, less the generic ones ("court", "competent").
	words map[string]bool
	// overlap[i] counts the document's tokens before i that occur in the
	// standard text (built on first use by overlapBound).
	overlap []int
}

// pin is a playbook key_terms entry with the terms read from its text.
type pin struct {
	name, text string
	worseIf    string
	terms      []term
	keys       []string // used when the text has no number or place in it
}

// Analyze reviews a contract against a playbook. Errors are classified
// docs errors: invalid_input for a missing or empty playbook, too_large
// for a document over the input limits, unreadable for a document with
// no words.
func Analyze(paras []Paragraph, pb *playbook.Playbook) (*Result, error) {
	if pb == nil || len(pb.Clauses) == 0 {
		return nil, docs.Errorf(docs.CodeInvalidArg, "playbook has no clauses")
	}
	if err := checkInput(paras); err != nil {
		return nil, err
	}
	an := newAnalyzer(paras)
	if len(an.gtoks) == 0 {
		return nil, docs.Errorf(docs.CodeUnreadable, "the document has no text to review")
	}
	specs := make([]*clauseSpec, len(pb.Clauses))
	for i := range pb.Clauses {
		specs[i] = prepareClause(&pb.Clauses[i], i)
		for _, k := range specs[i].stdKeys {
			an.vocab[k] = true
		}
	}
	setOwnWords(an.t, specs)
	an.specs = specs
	an.scoreHeadings(specs)
	res := &Result{
		Playbook: PlaybookRef{Name: pb.Name, Version: pb.Version},
		Findings: make([]Finding, len(specs)),
	}
	used := make([]bool, len(an.sents))
	for _, i := range an.order(specs) {
		cs := specs[i]
		loc, ok := an.locate(cs, used)
		if !ok {
			res.Findings[i] = missing(cs)
			continue
		}
		for s := range an.sents {
			if an.sents[s].a >= loc.ta && an.sents[s].b <= loc.tb {
				used[s] = true
			}
		}
		res.Findings[i] = an.compare(cs, loc)
	}
	res.Summary = result.Summarize(res.Findings)
	// The host will refuse a result that does not validate; finding out
	// here turns a bug into a classified internal error, not a lost job.
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("review: inconsistent result: %w", err)
	}
	return res, nil
}

// newAnalyzer builds the document's sections, tokens and sentences.
func newAnalyzer(paras []Paragraph) *analyzer {
	an := &analyzer{t: getTables(), doc: buildDocument(paras), docCount: map[string]int{}, vocab: map[string]bool{}}
	an.unitTok = make([]int, 0, len(an.doc.units)+1)
	for i, u := range an.doc.units {
		an.utoks = append(an.utoks, tokenize(u.body, i))
		an.unitTok = append(an.unitTok, len(an.gtoks))
		an.gtoks = append(an.gtoks, an.utoks[i]...)
		for _, t := range an.utoks[i] {
			an.docCount[t.Key]++
		}
	}
	an.unitTok = append(an.unitTok, len(an.gtoks))
	an.sents = splitSentences(an.gtoks, func(u int) bool { return an.doc.units[u].h != nil })
	return an
}

// order is the order clauses are located in: each keeps the sentences it
// is found in, so the clause whose location is surest goes first. A
// clause's first location (with every sentence free) measures how sure:
// a heading for the clause alone, then similarity.
func (an *analyzer) order(specs []*clauseSpec) []int {
	free := make([]bool, len(an.sents))
	strength := make([]float64, len(specs))
	for i, cs := range specs {
		if loc, ok := an.locate(cs, free); ok {
			strength[i] = loc.strength
		}
	}
	idx := make([]int, len(specs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return strength[idx[a]] > strength[idx[b]] })
	return idx
}

func checkInput(paras []Paragraph) error {
	if len(paras) > MaxParagraphs {
		return docs.Errorf(docs.CodeTooLarge, "%d paragraphs, limit %d", len(paras), MaxParagraphs)
	}
	total := 0
	for i, p := range paras {
		if len(p.Text) > MaxParagraphBytes {
			return docs.Errorf(docs.CodeTooLarge, "paragraph %d: %d bytes, limit %d", i+1, len(p.Text), MaxParagraphBytes)
		}
		total += len(p.Text)
	}
	if total > MaxDocumentBytes {
		return docs.Errorf(docs.CodeTooLarge, "%d bytes of text, limit %d", total, MaxDocumentBytes)
	}
	return nil
}

func prepareClause(c *playbook.Clause, index int) *clauseSpec {
	std := cleanText(c.StandardText)
	cs := &clauseSpec{clause: c, index: index, std: tokenize(std, 0), stdTerms: extractTerms(std)}
	cs.stdKeys = keys(cs.std)
	cs.stdSents = splitSentences(cs.std, func(int) bool { return false })
	names := append([]string{c.Title, strings.ReplaceAll(c.Key, "_", " ")}, c.Headings...)
	for _, n := range names {
		if w := titleWords(n); len(w) > 0 {
			cs.syns = append(cs.syns, w)
			cs.joint = append(cs.joint, jointTitle(n))
		}
	}
	for _, kt := range c.KeyTerms {
		t := cleanText(kt.Text)
		cs.pins = append(cs.pins, pin{name: kt.Name, text: kt.Text, worseIf: kt.WorseIf, terms: extractTerms(t), keys: keys(tokenize(t, 0))})
	}
	return cs
}

// jointTitle reports a title that joins two subjects: "X and Y", "X &
// Y", "X; Y", "X, Y".
func jointTitle(s string) bool {
	s = " " + strings.ToLower(s) + " "
	return strings.Contains(s, " and ") || strings.ContainsAny(s, "&;,")
}

// headingScore is the best score of a section title against the clause's
// title and synonyms, and whether the best synonym is a joint one (an
// equal single one wins).
func (cs *clauseSpec) headingScore(tw []string) (float64, bool) {
	best, joint := 0.0, false
	for i, syn := range cs.syns {
		sc := titleScore(tw, syn)
		if sc > best || sc == best && joint && !cs.joint[i] {
			best, joint = sc, cs.joint[i]
		}
	}
	return best, joint
}

// scoreHeadings scores every section heading against every clause once.
func (an *analyzer) scoreHeadings(specs []*clauseSpec) {
	titles := make([][]string, len(an.doc.sections))
	parts := make([][][]string, len(an.doc.sections))
	for i, s := range an.doc.sections {
		titles[i] = titleWords(s.h.title)
		parts[i] = titleParts(s.h.title)
	}
	an.scores = make([][]float64, len(specs))
	an.joint = make([][]bool, len(specs))
	for c, cs := range specs {
		an.scores[c] = make([]float64, len(titles))
		an.joint[c] = make([]bool, len(titles))
		for i, tw := range titles {
			an.scores[c][i], an.joint[c][i] = cs.headingScore(tw)
			if an.scores[c][i] >= headingExact {
				continue
			}
			// One subject of a joint title ("Confidentiality and Data
			// Protection", "Liability and Indemnities") is the clause.
			for _, p := range parts[i] {
				if sc, _ := cs.headingScore(p); sc >= headingExact && jointPartScore > an.scores[c][i] {
					an.scores[c][i], an.joint[c][i] = jointPartScore, true
				}
			}
			if an.scores[c][i] < modifiedTitleScore && cs.modifiedTitle(tw, specs) {
				an.scores[c][i], an.joint[c][i] = modifiedTitleScore, false
			}
		}
	}
}

// jointPartScore is the heading score of a joint title one of whose
// subjects is the clause's title or a synonym: between headingFloor and
// headingExact, so the section holds the clause only where its text is
// like it.
const jointPartScore = 0.8

// modifiedTitleScore is the heading score of the clause's one-word title
// or synonym with one word more that names no other clause's subject
// ("Service Warranty", "Giving Notice", "Formal Notices"): like a joint
// title's part, the section holds the clause only where its text is like
// it.
const modifiedTitleScore = jointPartScore

// modifiedTitle reports whether a two-word title (through titleWords) is
// one of the clause's one-word names and a word no other clause's title,
// synonyms or topic words have: "Limited Warranty", but not "Term" and
// "Termination" for a clause called "Term".
func (cs *clauseSpec) modifiedTitle(tw []string, specs []*clauseSpec) bool {
	if len(tw) != 2 {
		return false
	}
	for _, syn := range cs.syns {
		if len(syn) != 1 || tw[0] != syn[0] && tw[1] != syn[0] {
			continue
		}
		other := tw[0]
		if other == syn[0] {
			other = tw[1]
		}
		return !namesOtherClause(other, cs, specs)
	}
	return false
}

// namesOtherClause reports whether a title word is in a name or among the
// topic words of a clause other than cs.
func namesOtherClause(w string, cs *clauseSpec, specs []*clauseSpec) bool {
	for _, o := range specs {
		if o == cs {
			continue
		}
		if o.topic[docStem(w)] {
			return true
		}
		for _, syn := range o.syns {
			if slices.Contains(syn, w) {
				return true
			}
		}
	}
	return false
}

// titleParts splits a joint title into its subjects' titleWords; nil for
// a title of one subject.
func titleParts(title string) [][]string {
	f := strings.FieldsFunc(strings.ReplaceAll(strings.ToLower(title), " and ", ";"), func(r rune) bool {
		return r == ';' || r == '&' || r == ','
	})
	if len(f) < 2 {
		return nil
	}
	var out [][]string
	for _, p := range f {
		if w := titleWords(p); len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

func missing(cs *clauseSpec) Finding {
	f := baseFinding(cs)
	f.Status = StatusMissing
	f.ExpectedValues, _ = expectedValues(cs)
	f.FoundValues = map[string]string{}
	return f
}

func baseFinding(cs *clauseSpec) Finding {
	c := cs.clause
	sev := c.Severity
	if sev == "" {
		sev = result.SeverityMedium // a Playbook built in code rather than parsed
	}
	return Finding{
		Clause:   c.Key,
		Title:    c.Title,
		Severity: sev,
		Guidance: c.Guidance,
		Redline:  []Segment{},
		Pages:    []int{},
	}
}
