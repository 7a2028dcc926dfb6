package facts

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Facts is what Extract finds; the guest copies it into the Result.
type Facts struct {
	Parties      []result.Party
	KeyDates     result.KeyDates
	DefinedTerms []result.DefinedTerm
	Obligations  []result.Obligation
}

// Extract reads a contract's facts from its paragraphs. It never fails:
// what it cannot settle stays empty.
func Extract(paras []Paragraph) Facts {
	// The host refuses strings that are not UTF-8; a document's bytes
	// need not be.
	clean := make([]Paragraph, len(paras))
	for i, p := range paras {
		clean[i] = Paragraph{Text: strings.ToValidUTF8(p.Text, "\uFFFD"), Pages: p.Pages}
	}
	paras = clean
	sents := splitSentences(paras)
	headings := map[string]bool{}
	for _, p := range paras {
		t := strings.TrimSpace(p.Text)
		if t != "" && len(t) < 80 && !strings.HasSuffix(t, ".") {
			headings[t] = true
			// "7. Limitation of Liability" is a heading whose title counts too.
			if i := strings.IndexByte(t, ' '); i > 0 {
				headings[strings.TrimSpace(t[i+1:])] = true
			}
		}
	}
	parties := extractParties(paras)
	partyWords := map[string]bool{}
	var subjects []string
	for _, p := range parties {
		for _, n := range []string{p.Name, p.ShortName, p.Role} {
			if n == "" {
				continue
			}
			subjects = append(subjects, n)
			partyWords[n] = true
			for _, w := range strings.Fields(n) {
				partyWords[strings.Trim(w, ",.")] = true
			}
		}
		if p.Role != "" && strings.Contains(p.Role, " ") {
			subjects = append(subjects, "the "+p.Role)
		}
	}
	subjects = append(subjects, "Disclosing Party", "Receiving Party", "Recipient", "Discloser")
	var names []string
	for _, p := range parties {
		names = append(names, p.Name)
	}
	terms := extractTerms(sents, headings, partyWords, names)
	defs := map[string]string{}
	for _, t := range terms {
		if t.Definition != "" {
			defs[t.Term] = t.Definition
		}
	}
	kd, eff, exp := keyDates(sents, defs)
	triggers := map[string]time.Time{}
	for term, def := range defs {
		if t, ok := firstDate(def); ok && strings.Contains(term, "Date") {
			triggers[term] = t
		}
	}
	if !eff.IsZero() {
		triggers["Effective Date"] = eff
	}
	if !exp.IsZero() {
		for _, k := range []string{"expiration", "expiry", "end of the Term", "end of the term", "Expiration Date"} {
			triggers[k] = exp
		}
	}
	obls := extractObligations(sents, subjects, triggers)
	if parties == nil {
		parties = []result.Party{}
	}
	if terms == nil {
		terms = []result.DefinedTerm{}
	}
	if obls == nil {
		obls = []result.Obligation{}
	}
	return Facts{Parties: parties, KeyDates: kd, DefinedTerms: terms, Obligations: obls}
}

// Into copies the facts into a Result.
func (f Facts) Into(r *result.Result) {
	r.Parties, r.KeyDates, r.DefinedTerms, r.Obligations = f.Parties, f.KeyDates, f.DefinedTerms, f.Obligations
}

// Fit shrinks the facts in r until the result marshals within limit
// bytes (the host refuses a larger one): first the sentences quoted in
// obligations, notice deadlines and definitions go, then the lists are
// halved from the end. A real contract never gets here; a document built
// to overflow the result still gets its findings back.
func Fit(r *result.Result, limit int) {
	size := func() int {
		b, err := json.Marshal(r)
		if err != nil {
			return 0
		}
		return len(b)
	}
	if size() <= limit {
		return
	}
	for i := range r.Obligations {
		r.Obligations[i].TextSpan = ""
	}
	for i := range r.KeyDates.NoticeDeadlines {
		r.KeyDates.NoticeDeadlines[i].TextSpan = ""
	}
	for i := range r.DefinedTerms {
		r.DefinedTerms[i].Definition = bound(r.DefinedTerms[i].Definition, 200)
	}
	for size() > limit && (len(r.Obligations) > 0 || len(r.DefinedTerms) > 0) {
		r.Obligations = r.Obligations[:len(r.Obligations)/2]
		r.DefinedTerms = r.DefinedTerms[:len(r.DefinedTerms)/2]
	}
}
