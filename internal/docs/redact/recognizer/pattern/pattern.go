package pattern

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// Recognizer is one registry entry of kind "pattern".
type Recognizer struct {
	name           string
	typ            policy.Type
	tb             *Tables
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

// settings are a pattern entry's fields (see registry.yaml).
type settings struct {
	recognizer.Common `yaml:",inline"`
	Validator         string  `yaml:"validator"`
	Boundary          string  `yaml:"boundary"`
	Anchor            string  `yaml:"anchor"`
	Prefilter         string  `yaml:"prefilter"`
	Rescan            bool    `yaml:"rescan"`
	ContextBoost      float64 `yaml:"context_boost"`
	NegativePenalty   float64 `yaml:"negative_penalty"`
	MaxDistance       int     `yaml:"max_distance"`
	RequireContext    bool    `yaml:"require_context"`
	Patterns          []struct {
		Name  string  `yaml:"name"`
		Regex string  `yaml:"regex"`
		Score float64 `yaml:"score"`
	} `yaml:"patterns"`
}

// New is the "pattern" kind's factory.
func New(spec *recognizer.Spec, env *recognizer.Env) (recognizer.Recognizer, error) {
	var s settings
	if err := spec.Decode(&s); err != nil {
		return nil, err
	}
	v, ok := validators[s.Validator]
	if !ok {
		return nil, fmt.Errorf("unknown validator %q", s.Validator)
	}
	if s.Type == "" || len(s.Types) > 0 {
		return nil, fmt.Errorf("a pattern recognizer finds one type")
	}
	switch s.Boundary {
	case "number", "word", "none":
	default:
		return nil, fmt.Errorf("unknown boundary %q", s.Boundary)
	}
	if s.Prefilter != "" && s.Prefilter != "digit" {
		return nil, fmt.Errorf("unknown prefilter %q", s.Prefilter)
	}
	tb, err := LoadTables(env)
	if err != nil {
		return nil, err
	}
	pr := &Recognizer{name: s.Name, typ: s.Type, tb: tb, validate: v, boundary: s.Boundary,
		anchor: s.Anchor, prefilter: s.Prefilter, rescan: s.Rescan, boost: s.ContextBoost, penalty: s.NegativePenalty,
		maxDist: s.MaxDistance, requireContext: s.RequireContext}
	for _, p := range s.Patterns {
		re, err := regexp.Compile(recognizer.ExpandMacros(p.Regex, env.Macros))
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, err)
		}
		pr.pats = append(pr.pats, compiledPattern{p.Name, re, p.Score})
	}
	return pr, nil
}

// Name implements recognizer.Recognizer.
func (p *Recognizer) Name() string { return p.name }

// Types implements recognizer.Recognizer.
func (p *Recognizer) Types() []policy.Type { return []policy.Type{p.typ} }

// Find runs the recogniser over the window and returns scored spans.
func (p *Recognizer) Find(w *nlp.Window, enabled func(policy.Type) bool) []recognizer.Span {
	if !enabled(p.typ) || p.prefilter == "digit" && !w.HasDigit {
		return nil
	}
	var out []recognizer.Span
	for _, pat := range p.pats {
		for _, loc := range p.candidates(w, pat.re) {
			for _, m := range p.validate(p.tb, w.Text[loc[0]:loc[1]]) {
				s := recognizer.Span{Start: loc[0] + m.start, End: loc[0] + m.end, Type: p.typ,
					Score: pat.score, Detector: p.name + "/" + pat.name}
				if m.score >= 0 {
					s.Score = m.score
				}
				if !p.bounded(w.Text, s.Start, s.End) {
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

// afterLabels searches only the text just after the type's own labels
// (a recogniser that requires context can match nowhere else), so
// expensive patterns like spelled-out dates cost nothing elsewhere.
func (p *Recognizer) afterLabels(w *nlp.Window, re *regexp.Regexp) [][]int {
	var out [][]int
	last := 0
	for _, l := range w.Labels {
		if !l.Has(p.typ) || l.End < last {
			continue
		}
		lo, hi := l.End, nlp.TrimToRune(w.Text, min(len(w.Text), l.End+160))
		for _, m := range re.FindAllStringIndex(w.Text[lo:hi], -1) {
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
		if (nlp.IsWordRune(r) || r == '+' || r == '(') && !nlp.IsWordRune(nlp.RuneBefore(text, i)) {
			return i
		}
		i += n
	}
	return e
}

// candidates returns regex matches; with an anchor only the text around
// each anchor is searched (matches must contain the anchor), which keeps
// patterns with no literal prefix cheap on huge inputs.
func (p *Recognizer) candidates(w *nlp.Window, re *regexp.Regexp) [][]int {
	switch {
	case p.requireContext:
		return p.afterLabels(w, re)
	case p.anchor == "" && p.rescan:
		return allMatches(w.Text, re)
	case p.anchor == "":
		return re.FindAllStringIndex(w.Text, -1)
	}
	var out [][]int
	last := -1
	for i := 0; ; {
		k := strings.Index(w.Text[i:], p.anchor)
		if k < 0 {
			break
		}
		a := i + k
		i = a + len(p.anchor)
		if a < last {
			continue // inside the previous match
		}
		lo, hi := nlp.TrimToRune(w.Text, max(0, a-256)), nlp.TrimToRune(w.Text, min(len(w.Text), a+256))
		for _, m := range re.FindAllStringIndex(w.Text[lo:hi], -1) {
			if lo+m[0] <= a && a < lo+m[1] {
				out = append(out, []int{lo + m[0], lo + m[1]})
				last = lo + m[1]
			}
		}
	}
	return out
}

// bounded applies the recogniser's boundary rule.
func (p *Recognizer) bounded(s string, start, end int) bool {
	before, after := nlp.RuneBefore(s, start), nlp.RuneAfter(s, end)
	switch p.boundary {
	case "word":
		return !nlp.IsWordRune(before) && !nlp.IsWordRune(after)
	case "number":
		if unicode.IsDigit(before) || unicode.IsDigit(after) {
			return false
		}
		// Digit groups right after "DE97 " continue an IBAN.
		if p.typ == policy.CreditCard && ibanHead(s[max(0, start-8):start]) {
			return false
		}
		// "1.123-45-6789" or "123-45-6789-2": the digits go on.
		if (before == '.' || before == '-') && unicode.IsDigit(nlp.RuneBefore(s, start-1)) {
			return false
		}
		if (after == '.' || after == '-') && unicode.IsDigit(nlp.RuneAfter(s, end+1)) {
			return false
		}
		// A letter glued to the front ("v10.0.0.1", "A123456789") makes
		// it a code, not a bare number.
		return !unicode.IsLetter(before) || p.typ == policy.SSN
	}
	return true
}

// contextual applies context words: boost, half boost, penalty, or (for
// recognisers that require it) rejection without context.
func (p *Recognizer) contextual(w *nlp.Window, s recognizer.Span) (recognizer.Span, bool) {
	switch w.ContextFor(s.Start, s.End, p.typ, p.maxDist) {
	case nlp.CtxOwn:
		s.Score += p.boost
	case nlp.CtxOwnFar:
		s.Score += p.boost / 2
	case nlp.CtxNegative:
		s.Score -= p.penalty
		if p.requireContext {
			return s, false
		}
	default:
		if p.requireContext {
			return s, false
		}
	}
	s.Score = min(1, max(0, s.Score))
	return s, true
}
