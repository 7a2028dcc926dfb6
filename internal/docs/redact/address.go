package redact

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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
	Templates []struct {
		Name         string  `yaml:"name"`
		Score        float64 `yaml:"score"`
		Anchor       string  `yaml:"anchor"`
		AnchorWords  string  `yaml:"anchor_words"`
		AnchorSuffix string  `yaml:"anchor_suffix"`
		Regex        string  `yaml:"regex"`
	} `yaml:"templates"`
}

func loadAddresses(lx *lexicon) error {
	var f addressFile
	if err := strictYAML("address.yaml", &f); err != nil {
		return err
	}
	macros := map[string]string{}
	for k, v := range f.Macros {
		macros[k] = v
	}
	for name, words := range f.Lists {
		macros[strings.ToUpper(name)] = alternation(words)
	}
	for _, t := range f.Templates {
		re, err := regexp.Compile(expandMacros(t.Regex, macros))
		if err != nil {
			return fmt.Errorf("template %s: %w", t.Name, err)
		}
		at := &addressTemplate{name: t.Name, score: t.Score, re: re,
			head: regexp.MustCompile(`^(?:` + re.String() + `)`)}
		switch {
		case t.Anchor != "":
			if at.anchor, err = regexp.Compile(expandMacros(t.Anchor, macros)); err != nil {
				return fmt.Errorf("template %s anchor: %w", t.Name, err)
			}
		case t.AnchorWords != "":
			words, ok := f.Lists[t.AnchorWords]
			if !ok {
				return fmt.Errorf("template %s: no list %q", t.Name, t.AnchorWords)
			}
			at.words = map[string]bool{}
			for _, w := range words {
				at.words[foldWord(w)] = true
			}
		case t.AnchorSuffix != "":
			words, ok := f.Lists[t.AnchorSuffix]
			if !ok {
				return fmt.Errorf("template %s: no list %q", t.Name, t.AnchorSuffix)
			}
			for _, w := range words {
				at.suffix = append(at.suffix, foldWord(w))
			}
		default:
			return fmt.Errorf("template %s has no anchor", t.Name)
		}
		lx.addresses = append(lx.addresses, at)
	}
	return nil
}

// anchors returns the byte ranges where the template could match.
func (t *addressTemplate) anchors(w *window) [][]int {
	if t.anchor != nil {
		return t.anchor.FindAllStringIndex(w.text, -1)
	}
	var out [][]int
	for i, tok := range w.toks {
		if !tok.letters {
			continue
		}
		f := w.fold(i)
		hit := t.words[f]
		for _, suf := range t.suffix {
			if !hit && strings.HasSuffix(f, suf) {
				hit = true
			}
		}
		if hit {
			out = append(out, []int{tok.start, tok.end})
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

// findAddresses tries each template, anchored, at the token starts just
// before and at each of its anchors, keeping the longest bounded match
// that contains the anchor. The regexes thus only ever run on short
// slices near street words, postcodes and the like.
func findAddresses(w *window) []span {
	var out []span
	for _, t := range w.lx.addresses {
		seen := map[[2]int]bool{}
		for _, a := range t.anchors(w) {
			m, ok := t.matchAt(w, a)
			if !ok || seen[m] {
				continue
			}
			seen[m] = true
			e := trimAddressEnd(w.text, m[0], m[1])
			out = append(out, span{start: m[0], end: e, typ: StreetAddress,
				score: addressContext(w, m[0], e, t.score), detector: "address/" + t.name})
		}
	}
	return out
}

// matchAt returns the longest match of t that starts at one of the
// startTokens token starts before the anchor (or at the anchor) and
// covers it.
func (t *addressTemplate) matchAt(w *window, a []int) ([2]int, bool) {
	k := tokenAt(w.toks, a[0])
	best, found := [2]int{}, false
	for i := max(0, k-startTokens); i <= k && i < len(w.toks); i++ {
		s := w.toks[i].start
		if s > a[0] {
			break
		}
		// Addresses begin with a number or a capital ("12 ...", "Flat 3",
		// "Via ..."), or at the anchor word itself ("rue", "calle").
		if r := runeAfter(w.text, s); i < k && !unicode.IsDigit(r) && !unicode.IsUpper(r) {
			continue
		}
		hi := trimToRune(w.text, min(len(w.text), s+maxAddress))
		m := t.head.FindStringIndex(w.text[s:hi])
		if m == nil || s+m[1] <= a[0] || !addressBounded(w.text, s, s+m[1]) {
			continue
		}
		if !found || m[1]-m[0] > best[1]-best[0] {
			best, found = [2]int{s, s + m[1]}, true
		}
	}
	return best, found
}

// addressBounded rejects matches glued to a word or number on either side.
func addressBounded(s string, start, end int) bool {
	return !isWordRune(runeBefore(s, start)) && !isWordRune(runeAfter(s, end))
}

// trimAddressEnd drops trailing spaces and commas a pattern kept, and a
// sentence's full stop after a long final word ("Paris.", not "St.").
func trimAddressEnd(s string, start, end int) int {
	for end > start && strings.ContainsRune(" \t\r\n,", rune(s[end-1])) {
		end--
	}
	if end > start && s[end-1] == '.' {
		w := end - 1
		for w > start && isWordRune(runeBefore(s, w)) {
			w -= utf8.RuneLen(runeBefore(s, w))
		}
		if utf8.RuneCountInString(s[w:end-1]) > 4 {
			end--
		}
	}
	return end
}

// addressContext lifts a street-only match after an address label.
func addressContext(w *window, s, e int, score float64) float64 {
	if w.contextFor(s, e, StreetAddress, 4) == ctxOwn {
		score += 0.1
	}
	return min(score, 1)
}
