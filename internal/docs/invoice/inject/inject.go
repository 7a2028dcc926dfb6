package inject

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/invoice/datafile"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

//go:embed phrases.yaml
var defaultPhrases []byte

type phraseFile struct {
	Phrases []struct {
		Code     string   `yaml:"code"`
		Text     []string `yaml:"text"`
		Patterns []string `yaml:"patterns"`
	} `yaml:"phrases"`
	// Addressees are the ways a text addresses a model or an automated
	// reader ("AI assistant", "invoice bot"); "@" in a pattern stands
	// for any of them.
	Addressees []string `yaml:"addressees"`
}

type phrase struct {
	code    string
	compact string
}

// Matcher finds phrases in sequences of words. It is immutable once built.
type Matcher struct {
	phrases  []phrase // longest first, so overlaps resolve to the most specific
	patterns []pattern
}

// Default returns the matcher for the shipped phrases.yaml.
func Default() (*Matcher, error) { return Parse("phrases.yaml", defaultPhrases) }

// Parse builds a matcher from a phrases file, refusing unknown codes and
// phrases that fold to nothing.
func Parse(name string, b []byte) (*Matcher, error) {
	var f phraseFile
	root, err := datafile.Decode(name, b, &f)
	if err != nil {
		return nil, err
	}
	valid := result.PhraseCodes()
	m := &Matcher{}
	var addressees []string
	for _, a := range f.Addressees {
		addressees = append(addressees, strings.ReplaceAll(a, " ", "+"))
	}
	for i, p := range f.Phrases {
		if !slices.Contains(valid, p.Code) {
			return nil, datafile.Errorf(name, datafile.Lookup(root, "phrases", i, "code"), "unknown phrase code %q", p.Code)
		}
		if len(p.Text) == 0 && len(p.Patterns) == 0 {
			return nil, datafile.Errorf(name, datafile.Lookup(root, "phrases", i), "code %s has no phrases", p.Code)
		}
		for j, src := range p.Patterns {
			pt, err := compilePattern(p.Code, src, addressees)
			if err != nil {
				return nil, datafile.Errorf(name, datafile.Lookup(root, "phrases", i, "patterns", j), "%v", err)
			}
			m.patterns = append(m.patterns, pt)
		}
		for j, t := range p.Text {
			c := textnorm.Compact(t)
			if len(c) < 6 {
				return nil, datafile.Errorf(name, datafile.Lookup(root, "phrases", i, "text", j), "phrase %q is too short to match safely", t)
			}
			m.phrases = append(m.phrases, phrase{code: p.Code, compact: c})
		}
	}
	if len(m.phrases)+len(m.patterns) == 0 {
		return nil, fmt.Errorf("%s: no phrases", name)
	}
	sort.SliceStable(m.phrases, func(i, j int) bool { return len(m.phrases[i].compact) > len(m.phrases[j].compact) })
	return m, nil
}

// Match is one phrase found in a word sequence: words First..Last
// (inclusive) hold it.
type Match struct {
	Code        string
	First, Last int
}

// stream is the compacted words with each word's start offset and the
// offsets where a word may start inside a printed word (after
// punctuation or at a lower-to-upper case change: OCR's "Note:Pay" and
// "invoiceIgnore" lost a space there).
type stream struct {
	text   string
	starts []int // starts[i] = offset of word i; starts[len] = len(text)
	soft   map[int]bool
}

func compactWords(words []string) stream {
	var b strings.Builder
	s := stream{starts: make([]int, 0, len(words)+1), soft: map[int]bool{}}
	for _, w := range words {
		s.starts = append(s.starts, b.Len())
		var prev rune
		for _, r := range w {
			breakHere := prev != 0 && (!unicode.IsLetter(prev) && !unicode.IsDigit(prev) || unicode.IsLower(prev) && unicode.IsUpper(r))
			for _, c := range textnorm.Fold(string(r)) {
				if unicode.IsLetter(c) || unicode.IsDigit(c) {
					if breakHere {
						s.soft[b.Len()] = true
						breakHere = false
					}
					b.WriteRune(c)
				}
			}
			prev = r
		}
	}
	s.starts = append(s.starts, b.Len())
	s.text = b.String()
	return s
}

// wordAt returns the index of the word holding byte offset off.
func (s stream) wordAt(off int) int {
	i := sort.Search(len(s.starts), func(i int) bool { return s.starts[i] > off })
	return i - 1
}

// isWordStart reports whether off begins a word, or a part of a printed
// word that a lost space joined to the one before.
func (s stream) isWordStart(off int) bool {
	w := s.wordAt(off)
	return w >= 0 && s.starts[w] == off || s.soft[off]
}

// Find returns the phrases in words (in reading order), longest match
// first where two overlap, sorted by position. A match must begin at a
// word start, so "asset total to date" does not read as "set total to".
func (m *Matcher) Find(words []string) []Match {
	s := compactWords(words)
	taken := make([]bool, len(s.text))
	var out []Match
	for _, p := range m.phrases {
		for from := 0; from < len(s.text); {
			i := strings.Index(s.text[from:], p.compact)
			if i < 0 {
				break
			}
			at := from + i
			from = at + 1
			end := at + len(p.compact)
			if !s.isWordStart(at) || slices.Contains(taken[at:end], true) {
				continue
			}
			for k := at; k < end; k++ {
				taken[k] = true
			}
			out = append(out, Match{Code: p.code, First: s.wordAt(at), Last: s.wordAt(end - 1)})
		}
	}
	out = append(out, m.findPatterns(s, taken)...)
	sort.Slice(out, func(i, j int) bool { return out[i].First < out[j].First })
	return out
}
