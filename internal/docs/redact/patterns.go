package redact

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// patternRec is one recogniser from patterns.yaml.
type patternRec struct {
	name           string
	typ            Type
	validate       validatorFunc
	boundary       string
	anchor         string
	prefilter      string
	rescan         bool
	boost, penalty float64
	maxDist        int
	requireContext bool
	pats           []compiledPattern
}

type compiledPattern struct {
	name  string
	re    *regexp.Regexp
	score float64
}

type patternsFile struct {
	Macros      map[string]string `yaml:"macros"`
	Recognizers []struct {
		Name            string  `yaml:"name"`
		Type            string  `yaml:"type"`
		Validator       string  `yaml:"validator"`
		Boundary        string  `yaml:"boundary"`
		Anchor          string  `yaml:"anchor"`
		Prefilter       string  `yaml:"prefilter"`
		Rescan          bool    `yaml:"rescan"`
		ContextBoost    float64 `yaml:"context_boost"`
		NegativePenalty float64 `yaml:"negative_penalty"`
		MaxDistance     int     `yaml:"max_distance"`
		RequireContext  bool    `yaml:"require_context"`
		Patterns        []struct {
			Name  string  `yaml:"name"`
			Regex string  `yaml:"regex"`
			Score float64 `yaml:"score"`
		} `yaml:"patterns"`
	} `yaml:"recognizers"`
}

func loadPatterns(lx *lexicon) error {
	var f patternsFile
	if err := strictYAML("patterns.yaml", &f); err != nil {
		return err
	}
	for _, r := range f.Recognizers {
		v, ok := validators[r.Validator]
		if !ok {
			return fmt.Errorf("recognizer %s: unknown validator %q", r.Name, r.Validator)
		}
		if !policy.Known(Type(r.Type)) {
			return fmt.Errorf("recognizer %s: unknown type %q", r.Name, r.Type)
		}
		switch r.Boundary {
		case "number", "word", "none":
		default:
			return fmt.Errorf("recognizer %s: unknown boundary %q", r.Name, r.Boundary)
		}
		if r.Prefilter != "" && r.Prefilter != "digit" {
			return fmt.Errorf("recognizer %s: unknown prefilter %q", r.Name, r.Prefilter)
		}
		pr := &patternRec{name: r.Name, typ: Type(r.Type), validate: v, boundary: r.Boundary,
			anchor: r.Anchor, prefilter: r.Prefilter, rescan: r.Rescan, boost: r.ContextBoost, penalty: r.NegativePenalty,
			maxDist: r.MaxDistance, requireContext: r.RequireContext}
		for _, p := range r.Patterns {
			re, err := regexp.Compile(expandMacros(p.Regex, f.Macros))
			if err != nil {
				return fmt.Errorf("recognizer %s pattern %s: %w", r.Name, p.Name, err)
			}
			pr.pats = append(pr.pats, compiledPattern{p.Name, re, p.Score})
		}
		lx.patterns = append(lx.patterns, pr)
	}
	return nil
}

// expandMacros replaces {NAME} with macros[NAME], repeatedly, so macros
// may use macros. Unknown names are left alone (regex repetition counts
// like {2,4} are not macros).
func expandMacros(s string, macros map[string]string) string {
	for range 5 {
		prev := s
		for k, v := range macros {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		if s == prev {
			break
		}
	}
	return s
}

// afterLabels searches only the text just after the type's own labels
// (a recogniser that requires context can match nowhere else), so
// expensive patterns like spelled-out dates cost nothing elsewhere.
func (p *patternRec) afterLabels(w *window, re *regexp.Regexp) [][]int {
	var out [][]int
	last := 0
	for _, l := range w.labels {
		if !l.has(p.typ) || l.end < last {
			continue
		}
		lo, hi := l.end, trimToRune(w.text, min(len(w.text), l.end+160))
		for _, m := range re.FindAllStringIndex(w.text[lo:hi], -1) {
			out = append(out, []int{lo + m[0], lo + m[1]})
		}
		last = hi
	}
	return out
}

// allMatches returns every match, including matches that start inside
// an earlier match: after each match the search resumes at the next token
// start after the match's start, so a long wrong candidate ("AA14..."
// swallowing a line) cannot hide the real one ("GB82 WEST ...") behind it.
// Overlapping candidates are fine: validation and overlap resolution sort
// them out.
func allMatches(text string, re *regexp.Regexp) [][]int {
	var out [][]int
	for pos := 0; pos < len(text); {
		m := re.FindStringIndex(text[pos:])
		if m == nil {
			break
		}
		s, e := pos+m[0], pos+m[1]
		out = append(out, []int{s, e})
		pos = nextTokenStart(text, s, e)
	}
	return out
}

// nextTokenStart returns the first position after s where a candidate
// could begin: a letter, digit, '+' or '(' not preceded by a letter or
// digit. Matches never nest inside a word, given the boundary rules, so
// nothing is missed; it is at most e (continuing after the match).
func nextTokenStart(text string, s, e int) int {
	_, n := utf8.DecodeRuneInString(text[s:])
	i := s + max(n, 1)
	for i < e {
		r, n := utf8.DecodeRuneInString(text[i:])
		if (isWordRune(r) || r == '+' || r == '(') && !isWordRune(runeBefore(text, i)) {
			return i
		}
		i += n
	}
	return e
}

// find runs the recogniser over the window and returns scored spans.
func (p *patternRec) find(w *window) []span {
	if p.prefilter == "digit" && !w.hasDigit {
		return nil
	}
	var out []span
	for _, pat := range p.pats {
		for _, loc := range p.candidates(w, pat.re) {
			for _, m := range p.validate(w.lx, w.text[loc[0]:loc[1]]) {
				s := span{start: loc[0] + m.start, end: loc[0] + m.end, typ: p.typ,
					score: pat.score, detector: p.name + "/" + pat.name}
				if m.score >= 0 {
					s.score = m.score
				}
				if !p.bounded(w.text, s.start, s.end) {
					continue
				}
				if s, ok := p.contextual(w, s); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// candidates returns regex matches; with an anchor only the text around
// each anchor is searched (matches must contain the anchor), which keeps
// patterns with no literal prefix cheap on huge inputs.
func (p *patternRec) candidates(w *window, re *regexp.Regexp) [][]int {
	switch {
	case p.requireContext:
		return p.afterLabels(w, re)
	case p.anchor == "" && p.rescan:
		return allMatches(w.text, re)
	case p.anchor == "":
		return re.FindAllStringIndex(w.text, -1)
	}
	var out [][]int
	last := -1
	for i := 0; ; {
		k := strings.Index(w.text[i:], p.anchor)
		if k < 0 {
			break
		}
		a := i + k
		i = a + len(p.anchor)
		if a < last {
			continue // inside the previous match
		}
		lo, hi := trimToRune(w.text, max(0, a-256)), trimToRune(w.text, min(len(w.text), a+256))
		for _, m := range re.FindAllStringIndex(w.text[lo:hi], -1) {
			if lo+m[0] <= a && a < lo+m[1] {
				out = append(out, []int{lo + m[0], lo + m[1]})
				last = lo + m[1]
			}
		}
	}
	return out
}

// bounded applies the recogniser's boundary rule.
func (p *patternRec) bounded(s string, start, end int) bool {
	before, after := runeBefore(s, start), runeAfter(s, end)
	switch p.boundary {
	case "word":
		return !isWordRune(before) && !isWordRune(after)
	case "number":
		if unicode.IsDigit(before) || unicode.IsDigit(after) {
			return false
		}
		// Digit groups right after "DE97 " continue an IBAN.
		if p.typ == CreditCard && ibanHead(s[max(0, start-8):start]) {
			return false
		}
		// "1.123-45-6789" or "123-45-6789-2": the digits go on.
		if (before == '.' || before == '-') && unicode.IsDigit(runeBefore(s, start-1)) {
			return false
		}
		if (after == '.' || after == '-') && unicode.IsDigit(runeAfter(s, end+1)) {
			return false
		}
		// A letter glued to the front ("v10.0.0.1", "A123456789") makes
		// it a code, not a bare number.
		return !unicode.IsLetter(before) || p.typ == SSN
	}
	return true
}

// contextual applies context words: boost, half boost, penalty, or (for
// recognisers that require it) rejection without context.
func (p *patternRec) contextual(w *window, s span) (span, bool) {
	switch w.contextFor(s.start, s.end, p.typ, p.maxDist) {
	case ctxOwn:
		s.score += p.boost
	case ctxOwnFar:
		s.score += p.boost / 2
	case ctxNegative:
		s.score -= p.penalty
		if p.requireContext {
			return s, false
		}
	default:
		if p.requireContext {
			return s, false
		}
	}
	s.score = min(1, max(0, s.score))
	return s, true
}
