package review

import (
	"fmt"
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
	// scores[c][s] is the heading score of section s for clause c.
	scores [][]float64
	// docCount counts the document's words (fold keys); vocab holds the
	// words of the playbook's standard texts. Both tell a real word from
	// OCR garbage.
	docCount map[string]int
	vocab    map[string]bool
}

// clauseSpec is a playbook clause prepared for matching.
type clauseSpec struct {
	clause   *playbook.Clause
	index    int // in the playbook
	std      []token
	stdKeys  []string
	stdTerms []term
	pins     []pin
	syns     [][]string // titleWords of the title, the key and each heading
	paras    int        // paragraphs in the standard text
}

// pin is a playbook key_terms entry with the terms read from its text.
type pin struct {
	name, text string
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
	an := &analyzer{t: getTables(), doc: buildDocument(paras)}
	words := 0
	an.docCount, an.vocab = map[string]int{}, map[string]bool{}
	for i, u := range an.doc.units {
		an.utoks = append(an.utoks, tokenize(u.body, i))
		words += len(an.utoks[i])
		for _, t := range an.utoks[i] {
			an.docCount[t.Key]++
		}
	}
	if words == 0 {
		return nil, docs.Errorf(docs.CodeUnreadable, "the document has no text to review")
	}
	specs := make([]*clauseSpec, len(pb.Clauses))
	for i := range pb.Clauses {
		specs[i] = prepareClause(&pb.Clauses[i], i)
		for _, k := range specs[i].stdKeys {
			an.vocab[k] = true
		}
	}
	an.scoreHeadings(specs)
	claimed := an.claimed()
	res := &Result{
		Playbook: PlaybookRef{Name: pb.Name, Version: pb.Version},
		Findings: make([]Finding, 0, len(specs)),
	}
	for _, cs := range specs {
		loc, ok := an.locate(cs, claimed)
		if !ok {
			res.Findings = append(res.Findings, missing(cs))
			continue
		}
		res.Findings = append(res.Findings, an.compare(cs, loc))
	}
	res.Summary = result.Summarize(res.Findings)
	// The host will refuse a result that does not validate; finding out
	// here turns a bug into a classified internal error, not a lost job.
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("review: inconsistent result: %w", err)
	}
	return res, nil
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
	cs := &clauseSpec{clause: c, index: index, std: tokenize(std, 0), stdTerms: extractTerms(std), paras: 1}
	cs.stdKeys = keys(cs.std)
	cs.paras = max(1, strings.Count(strings.TrimSpace(c.StandardText), "\n\n")+1)
	names := append([]string{c.Title, strings.ReplaceAll(c.Key, "_", " ")}, c.Headings...)
	for _, n := range names {
		if w := titleWords(n); len(w) > 0 {
			cs.syns = append(cs.syns, w)
		}
	}
	for _, kt := range c.KeyTerms {
		t := cleanText(kt.Text)
		cs.pins = append(cs.pins, pin{name: kt.Name, text: kt.Text, terms: extractTerms(t), keys: keys(tokenize(t, 0))})
	}
	return cs
}

// headingScore is the best score of a section title against the clause's
// title and synonyms.
func (cs *clauseSpec) headingScore(tw []string) float64 {
	best := 0.0
	for _, syn := range cs.syns {
		best = max(best, titleScore(tw, syn))
	}
	return best
}

// scoreHeadings scores every section heading against every clause once.
func (an *analyzer) scoreHeadings(specs []*clauseSpec) {
	titles := make([][]string, len(an.doc.sections))
	for i, s := range an.doc.sections {
		titles[i] = titleWords(s.h.title)
	}
	an.scores = make([][]float64, len(specs))
	for c, cs := range specs {
		an.scores[c] = make([]float64, len(titles))
		for i, tw := range titles {
			an.scores[c][i] = cs.headingScore(tw)
		}
	}
}

// claimed returns the sections some clause's heading matches outright.
func (an *analyzer) claimed() map[*section]bool {
	out := map[*section]bool{}
	for _, row := range an.scores {
		for i, score := range row {
			if score >= 0.95 {
				out[an.doc.sections[i]] = true
			}
		}
	}
	return out
}

// tokens returns the compared tokens of a span, bounded to
// maxCompareWords.
func (an *analyzer) tokens(sp span) []token {
	var out []token
	for i := sp.a; i < sp.b && len(out) < maxCompareWords; i++ {
		out = append(out, an.utoks[i]...)
	}
	if len(out) > maxCompareWords {
		out = out[:maxCompareWords]
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
