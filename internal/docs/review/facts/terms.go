package facts

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

var (
	// meansRE is a definition in a definitions list: "Term" means ...
	meansRE = regexp.MustCompile(`["“]([A-Z][^"”]{0,78})["”]\s*(?:means|shall mean|has the meaning|shall have the meaning|refers to|includes|is defined)`)
	// usedUndefinedRE is a capitalised phrase after a determiner in the
	// middle of a sentence: how defined terms are used.
	usedUndefinedRE = regexp.MustCompile(`\b(?:[Tt]he|any|each|such|all|this|that)\s+((?:[A-Z][a-z]+)(?:(?:[ -]|\s+(?:of|and|for)\s+)(?:[A-Z][a-z]+)){0,3})\b`)
)

// notTerms are capitalised words that are names, not defined terms.
var notTerms = map[string]bool{}

func init() {
	for _, w := range strings.Fields(strings.ReplaceAll(months, "|", " ") + ` Monday Tuesday Wednesday Thursday Friday
		Saturday Sunday State States United Kingdom Court Courts Section Sections Schedule Schedules Exhibit Exhibits
		Annex Appendix Article Articles Clause Clauses Party Parties Laws Act Republic Commonwealth Federal Rules
		Chamber Association Internet English Government County City Province Union European Code Regulation
		Directive Companies Bankruptcy Commercial Arbitration Centre Center International Institute Board
		Agreement Recitals Preamble Signature Page Whereas Witness Notice Name Title Note Introduction`) {
		notTerms[w] = true
	}
}

// institutions end the names of bodies and laws, which are not defined terms.
var institutions = map[string]bool{"Association": true, "Institute": true, "Chamber": true, "Court": true,
	"Courts": true, "Centre": true, "Center": true, "Commission": true, "Act": true, "Code": true, "Rules": true,
	"Regulation": true, "Directive": true, "Union": true, "Authority": true, "Office": true, "Bank": true}

type termDef struct {
	term, def  string
	page, sent int
	twice      bool
}

// extractTerms finds the definitions (quoted labels in parentheses, and
// "X" means ...), every use after them, and the problems.
func extractTerms(sents []sentence, headings map[string]bool, partyWords map[string]bool, partyNames []string) []result.DefinedTerm {
	var defs []*termDef
	byTerm := map[string]*termDef{}
	define := func(term string, s sentence, si int) {
		term = strings.TrimSpace(term)
		if term == "" || len(term) > result.MaxTermBytes || !startsUpper(term) {
			return
		}
		if _, ok := byTerm[term]; !ok && len(defs) >= result.MaxDefinedTerms {
			return // a hostile document's ten thousand definitions must not cost terms x sentences
		}
		if d, ok := byTerm[term]; ok {
			if d.sent != si && normWords(d.def) != normWords(s.text) {
				d.twice = true
			}
			return
		}
		d := &termDef{term: term, def: bound(s.text, result.MaxDefinitionBytes), page: s.page, sent: si}
		byTerm[term] = d
		defs = append(defs, d)
	}
	for si, s := range sents {
		for _, p := range quotedParenRE.FindAllStringSubmatch(s.text, -1) {
			for _, label := range quotedLabels(p[1]) {
				define(label, s, si)
			}
		}
		for _, m := range meansRE.FindAllStringSubmatch(s.text, -1) {
			define(m[1], s, si)
		}
	}
	uses := countUses(sents, defs, partyNames)
	var out []result.DefinedTerm
	for _, d := range defs {
		t := result.DefinedTerm{Term: d.term, Definition: d.def, Page: d.page, Uses: sortedPages(uses[d.term]), Problems: []string{}}
		if len(t.Uses) == 0 {
			t.Problems = append(t.Problems, result.ProblemUnused)
		}
		if d.twice {
			t.Problems = append(t.Problems, result.ProblemDefinedTwice)
		}
		out = append(out, t)
	}
	// Terms used as defined terms and defined nowhere.
	undefined := map[string][]int{}
	var order []string
	for _, s := range sents {
		if headings[s.text] {
			continue
		}
		for _, m := range usedUndefinedRE.FindAllStringSubmatchIndex(s.text, -1) {
			phrase := s.text[m[2]:m[3]]
			if m[3] < len(s.text) && (s.text[m[3]] == '"' || strings.HasPrefix(s.text[m[3]:], "”")) {
				continue
			}
			if isKnown(phrase, byTerm, headings, partyWords) {
				continue
			}
			if _, ok := undefined[phrase]; !ok {
				order = append(order, phrase)
			}
			undefined[phrase] = append(undefined[phrase], s.page)
		}
	}
	for _, p := range order {
		if len(out) >= result.MaxDefinedTerms {
			break
		}
		pages := undefined[p]
		if len(pages) > result.MaxUses {
			pages = pages[:result.MaxUses]
		}
		out = append(out, result.DefinedTerm{Term: bound(p, result.MaxTermBytes), Uses: sortedPages(pages),
			Problems: []string{result.ProblemUndefined}})
	}
	if len(out) > result.MaxDefinedTerms {
		out = out[:result.MaxDefinedTerms]
	}
	return out
}

func isKnown(phrase string, defs map[string]*termDef, headings, partyWords map[string]bool) bool {
	if headings[phrase] || partyWords[phrase] {
		return true
	}
	words := strings.FieldsFunc(phrase, func(r rune) bool { return r == ' ' || r == '-' })
	if institutions[words[len(words)-1]] {
		return true // "the American Arbitration Association" is a name
	}
	for i, w := range words {
		if i == 0 && notTerms[w] || partyWords[w] || monthRE.MatchString(w) {
			return true
		}
	}
	for t := range defs {
		if phrase == t || strings.TrimSuffix(phrase, "s") == t || strings.TrimSuffix(phrase, "es") == t ||
			strings.HasPrefix(t, phrase+" ") || strings.HasPrefix(phrase, t+" ") || strings.HasSuffix(phrase, " "+t) {
			return true
		}
	}
	return false
}

func startsUpper(s string) bool {
	return s != "" && strings.ToUpper(s[:1]) == s[:1] && strings.ToLower(s[:1]) != s[:1]
}

func normWords(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.Map(func(r rune) rune {
		if r == '"' || r == '“' || r == '”' || r == ',' || r == '.' || r == ';' {
			return ' '
		}
		return r
	}, s))), " ")
}

func sortedPages(p []int) []int {
	out := make([]int, 0, len(p))
	for _, v := range p {
		if v > 0 {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// countUses lists the page of every use of each term outside its defining
// sentence: the term (or its plural) at a word start, not in quotes, not
// followed by a letter. One pass over each sentence's words, looking up
// the terms by their first word, so a document with many terms and many
// sentences costs their sum, not their product.
func countUses(sents []sentence, defs []*termDef, partyNames []string) map[string][]int {
	byFirst := map[string][]*termDef{}
	var mask []string
	for _, d := range defs {
		byFirst[leadingWord(d.term)] = append(byFirst[leadingWord(d.term)], d)
		for _, n := range partyNames {
			if n != d.term && strings.Contains(n, d.term) && !slices.Contains(mask, n) {
				mask = append(mask, n) // a party's name is no use of its short name
			}
		}
	}
	uses := map[string][]int{}
	for si, s := range sents {
		text := s.text
		for _, n := range mask {
			text = strings.ReplaceAll(text, n, "_")
		}
		prev := rune(' ')
		for i, r := range text {
			atStart := unicode.IsLetter(r) && !unicode.IsLetter(prev) && prev != '"' && prev != '“'
			prev = r
			if !atStart {
				continue
			}
			for _, d := range byFirst[leadingWord(text[i:])] {
				if si == d.sent || !strings.HasPrefix(text[i:], d.term) {
					continue
				}
				rest := text[i+len(d.term):]
				rest = strings.TrimPrefix(rest, "es")
				rest = strings.TrimPrefix(rest, "s")
				next, _ := utf8.DecodeRuneInString(rest)
				if rest != "" && (unicode.IsLetter(next) || next == '"' || next == '”') {
					continue
				}
				if len(uses[d.term]) < result.MaxUses {
					uses[d.term] = append(uses[d.term], s.page)
				}
			}
		}
	}
	return uses
}

// leadingWord is the run of letters and digits s starts with.
func leadingWord(s string) string {
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return s[:i]
		}
	}
	return s
}
