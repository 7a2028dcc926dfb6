package address

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// addressTemplate is one postal address form from address.yaml.
type addressTemplate struct {
	name   string
	score  float64
	anchor *regexp.Regexp  // or:
	words  map[string]bool // a token folded is one of these, or
	suffix []string        // a token folded ends with one of these
	re     *regexp.Regexp
	head   *regexp.Regexp // re anchored at the start: "^(?:re)"
}

type addressFile struct {
	Lists     map[string][]string `yaml:"lists"`
	Macros    map[string]string   `yaml:"macros"`
	Templates []templateEntry     `yaml:"templates"`
}

type templateEntry struct {
	Name         string  `yaml:"name"`
	Score        float64 `yaml:"score"`
	Anchor       string  `yaml:"anchor"`
	AnchorWords  string  `yaml:"anchor_words"`
	AnchorSuffix string  `yaml:"anchor_suffix"`
	Regex        string  `yaml:"regex"`
}

// Recognizer is the registry entry of kind "address": every template
// of its data file.
type Recognizer struct {
	name      string
	templates []*addressTemplate
}

// New is the "address" kind's factory.
func New(spec *recognizer.Spec, env *recognizer.Env) (recognizer.Recognizer, error) {
	var c struct {
		recognizer.Common `yaml:",inline"`
	}
	if err := spec.Decode(&c); err != nil {
		return nil, err
	}
	if c.Type != policy.StreetAddress || len(c.Types) > 0 || c.Data == "" {
		return nil, fmt.Errorf("an address recognizer finds %s, with templates from its data file", policy.StreetAddress)
	}
	var f addressFile
	if err := env.StrictYAML(c.Data, &f); err != nil {
		return nil, err
	}
	macros := map[string]string{}
	for k, v := range f.Macros {
		macros[k] = v
	}
	for name, words := range f.Lists {
		macros[strings.ToUpper(name)] = alternation(words)
	}
	r := &Recognizer{name: c.Name}
	for _, t := range f.Templates {
		at, err := compileTemplate(t, f.Lists, macros)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", t.Name, err)
		}
		r.templates = append(r.templates, at)
	}
	return r, nil
}

func compileTemplate(t templateEntry, lists map[string][]string, macros map[string]string) (*addressTemplate, error) {
	re, err := regexp.Compile(recognizer.ExpandMacros(t.Regex, macros))
	if err != nil {
		return nil, err
	}
	at := &addressTemplate{name: t.Name, score: t.Score, re: re,
		head: regexp.MustCompile(`^(?:` + re.String() + `)`)}
	switch {
	case t.Anchor != "":
		if at.anchor, err = regexp.Compile(recognizer.ExpandMacros(t.Anchor, macros)); err != nil {
			return nil, fmt.Errorf("anchor: %w", err)
		}
	case t.AnchorWords != "":
		words, ok := lists[t.AnchorWords]
		if !ok {
			return nil, fmt.Errorf("no list %q", t.AnchorWords)
		}
		at.words = map[string]bool{}
		for _, w := range words {
			at.words[nlp.FoldWord(w)] = true
		}
	case t.AnchorSuffix != "":
		words, ok := lists[t.AnchorSuffix]
		if !ok {
			return nil, fmt.Errorf("no list %q", t.AnchorSuffix)
		}
		for _, w := range words {
			at.suffix = append(at.suffix, nlp.FoldWord(w))
		}
	default:
		return nil, fmt.Errorf("no anchor")
	}
	return at, nil
}

// Name implements recognizer.Recognizer.
func (r *Recognizer) Name() string { return r.name }

// Types implements recognizer.Recognizer.
func (r *Recognizer) Types() []policy.Type { return []policy.Type{policy.StreetAddress} }

// anchors returns the byte ranges where the template could match.
func (t *addressTemplate) anchors(w *nlp.Window) [][]int {
	if t.anchor != nil {
		return t.anchor.FindAllStringIndex(w.Text, -1)
	}
	var out [][]int
	for i, tok := range w.Toks {
		if !tok.Letters {
			continue
		}
		f := w.Fold(i)
		hit := t.words[f]
		for _, suf := range t.suffix {
			if !hit && strings.HasSuffix(f, suf) {
				hit = true
			}
		}
		if hit {
			out = append(out, []int{tok.Start, tok.End})
		}
	}
	return out
}

// alternation quotes words into a regex alternation, longest first so
// "Street" wins over "St", each required to end at a word boundary.
func alternation(words []string) string {
	ws := append([]string(nil), words...)
	sort.SliceStable(ws, func(i, j int) bool { return len(ws[i]) > len(ws[j]) })
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = regexp.QuoteMeta(w)
	}
	return `(?:` + strings.Join(q, "|") + `)\b`
}

// Address matches start at most startTokens tokens before their anchor
// and are at most maxAddress bytes long.
const (
	startTokens = 12
	maxAddress  = 320
)

// Find tries each template, anchored, at the token starts just before
// and at each of its anchors, keeping the longest bounded match that
// contains the anchor. The regexes thus only ever run on short slices
// near street words, postcodes and the like.
func (r *Recognizer) Find(w *nlp.Window, enabled func(policy.Type) bool) []recognizer.Span {
	if !enabled(policy.StreetAddress) {
		return nil
	}
	var out []recognizer.Span
	for _, t := range r.templates {
		seen := map[[2]int]bool{}
		for _, a := range t.anchors(w) {
			m, ok := t.matchAt(w, a)
			if !ok || seen[m] {
				continue
			}
			seen[m] = true
			m[0] = postalMark(w.Text, m[0])
			e := trimAddressEnd(w.Text, m[0], m[1])
			out = append(out, recognizer.Span{Start: m[0], End: e, Type: policy.StreetAddress,
				Score: addressContext(w, m[0], e, t.score), Detector: "address/" + t.name})
		}
	}
	return out
}

// matchAt returns the longest match of t that starts at one of the
// startTokens token starts before the anchor (or at the anchor) and
// covers it.
func (t *addressTemplate) matchAt(w *nlp.Window, a []int) ([2]int, bool) {
	k := nlp.TokenAt(w.Toks, a[0])
	best, found := [2]int{}, false
	for i := max(0, k-startTokens); i <= k && i < len(w.Toks); i++ {
		s := w.Toks[i].Start
		if s > a[0] {
			break
		}
		// Addresses begin with a number or a capital ("12 ...", "Flat 3",
		// "Via ..."), or at the anchor word itself ("rue", "calle").
		if r := nlp.RuneAfter(w.Text, s); i < k && !unicode.IsDigit(r) && !unicode.IsUpper(r) {
			continue
		}
		hi := nlp.TrimToRune(w.Text, min(len(w.Text), s+maxAddress))
		m := t.head.FindStringIndex(w.Text[s:hi])
		if m == nil || s+m[1] <= a[0] || !addressBounded(w.Text, s, s+m[1]) {
			continue
		}
		if !found || m[1]-m[0] > best[1]-best[0] {
			best, found = [2]int{s, s + m[1]}, true
		}
	}
	return best, found
}

// postalMark moves a start back over the postal mark Japan writes
// before a postcode ("〒150-0002"), which is no word and so starts no
// match.
func postalMark(s string, start int) int {
	i := start
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if strings.HasSuffix(s[:i], "〒") {
		return i - len("〒")
	}
	return start
}

// addressBounded rejects matches glued to a word or number on either side.
func addressBounded(s string, start, end int) bool {
	return !nlp.IsWordRune(nlp.RuneBefore(s, start)) && !nlp.IsWordRune(nlp.RuneAfter(s, end))
}

// trimAddressEnd drops trailing spaces and commas a pattern kept, and a
// sentence's full stop after a long final word ("Paris.", not "St.").
func trimAddressEnd(s string, start, end int) int {
	for end > start && strings.ContainsRune(" \t\r\n,", rune(s[end-1])) {
		end--
	}
	if end > start && s[end-1] == '.' {
		w := end - 1
		for w > start && nlp.IsWordRune(nlp.RuneBefore(s, w)) {
			w -= utf8.RuneLen(nlp.RuneBefore(s, w))
		}
		if utf8.RuneCountInString(s[w:end-1]) > 4 {
			end--
		}
	}
	return end
}

// addressContext lifts a street-only match after an address label.
func addressContext(w *nlp.Window, s, e int, score float64) float64 {
	if w.ContextFor(s, e, policy.StreetAddress, 4) == nlp.CtxOwn {
		score += 0.1
	}
	return min(score, 1)
}
