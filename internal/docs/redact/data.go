package redact

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

//go:embed data/*
var dataFS embed.FS

// lexicon is everything the detectors know, loaded once from the embedded
// data files and never modified afterwards (safe to share between
// goroutines and jobs).
type lexicon struct {
	first, surname, ambiguous     map[string]bool
	titles, weakTitles, particles map[string]bool
	suffixes, stop                map[string]bool
	cjkSuffixes                   []string
	labels                        *phraseTrie
	ibans                         map[string]ibanSpec
	iins                          []iinRange
	tlds, tldDeny                 map[string]bool
	invalidSSN                    map[string]bool
	patterns                      []*patternRec
	addresses                     []*addressTemplate
}

var loadLexicon = sync.OnceValues(buildLexicon)

func buildLexicon() (*lexicon, error) {
	lx := &lexicon{}
	steps := []struct {
		name string
		fn   func(*lexicon) error
	}{
		{"name lists", loadNameLists},
		{"name_lexicon.yaml", loadNameLexicon},
		{"context.yaml", loadContext},
		{"iban.txt", loadIBAN},
		{"iin.txt", loadIIN},
		{"tlds.txt", loadTLDs},
		{"invalid_ssn.txt", loadInvalidSSN},
		{"patterns.yaml", loadPatterns},
		{"address.yaml", loadAddresses},
	}
	for _, s := range steps {
		if err := s.fn(lx); err != nil {
			return nil, fmt.Errorf("redact data %s: %w", s.name, err)
		}
	}
	return lx, nil
}

// wordList reads a whitespace-separated list with '#' comments.
func wordList(name string) ([]string, error) {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		out = append(out, strings.Fields(line)...)
	}
	return out, sc.Err()
}

func foldSet(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[foldName(strings.TrimSuffix(w, "."))] = true
	}
	return m
}

func loadNameLists(lx *lexicon) error {
	for _, l := range []struct {
		file string
		dst  *map[string]bool
	}{
		{"first_names.txt", &lx.first},
		{"surnames.txt", &lx.surname},
		{"ambiguous_words.txt", &lx.ambiguous},
	} {
		w, err := wordList(l.file)
		if err != nil {
			return err
		}
		*l.dst = foldSet(w)
	}
	if len(lx.first) < 1000 || len(lx.surname) < 1000 {
		return fmt.Errorf("name lists too small: %d first, %d surnames", len(lx.first), len(lx.surname))
	}
	return nil
}

func loadNameLexicon(lx *lexicon) error {
	var raw struct {
		Titles      []string `yaml:"titles"`
		WeakTitles  []string `yaml:"weak_titles"`
		CJKSuffixes []string `yaml:"cjk_suffixes"`
		Particles   []string `yaml:"particles"`
		Suffixes    []string `yaml:"suffixes"`
		NameLabels  []string `yaml:"name_labels"`
		RoleLabels  []string `yaml:"role_labels"`
		NonPerson   []string `yaml:"non_person_labels"`
		Openers     []string `yaml:"openers"`
		Cues        []string `yaml:"cues"`
		Stop        []string `yaml:"stop"`
	}
	if err := strictYAML("name_lexicon.yaml", &raw); err != nil {
		return err
	}
	lx.titles, lx.weakTitles = foldSet(raw.Titles), foldSet(raw.WeakTitles)
	lx.particles, lx.suffixes, lx.stop = foldSet(raw.Particles), foldSet(raw.Suffixes), foldSet(raw.Stop)
	lx.cjkSuffixes = raw.CJKSuffixes
	// Particles are never surnames on their own ("van der Berg" was split
	// into words by the list format).
	for p := range lx.particles {
		delete(lx.surname, p)
		delete(lx.first, p)
	}
	if lx.labels == nil {
		lx.labels = newPhraseTrie()
	}
	for _, set := range []struct {
		words []string
		typ   Type
	}{{raw.NameLabels, personLabel}, {raw.RoleLabels, personRole}, {raw.Openers, personOpener}, {raw.Cues, personCue}, {raw.NonPerson, nonPerson}} {
		for _, l := range set.words {
			lx.labels.add(l, set.typ)
		}
	}
	return nil
}

func loadContext(lx *lexicon) error {
	raw := map[string][]string{}
	if err := strictYAML("context.yaml", &raw); err != nil {
		return err
	}
	if lx.labels == nil {
		lx.labels = newPhraseTrie()
	}
	for k, words := range raw {
		t := Type(k)
		if t != negativeLabel && !policy.Known(t) {
			return fmt.Errorf("unknown type %q", k)
		}
		for _, w := range words {
			lx.labels.add(w, t)
		}
	}
	return nil
}

func strictYAML(name string, v any) error {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// ibanSpec is a country's IBAN length and BBAN structure.
type ibanSpec struct {
	length int
	bban   []bbanPart
}

type bbanPart struct {
	n    int
	kind byte // 'n' digits, 'a' upper-case letters, 'c' either
}

func loadIBAN(lx *lexicon) error {
	b, err := dataFS.ReadFile("data/iban.txt")
	if err != nil {
		return err
	}
	lx.ibans = map[string]ibanSpec{}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.SplitN(line, "#", 2)[0])
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if len(f) > 3 || len(f) < 2 || len(f[0]) != 2 || err != nil {
			return fmt.Errorf("line %d: want COUNTRY LENGTH [STRUCTURE]", i+1)
		}
		spec := ibanSpec{length: n}
		if len(f) == 3 {
			if spec.bban, err = parseBBAN(f[2], n-4); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
		lx.ibans[f[0]] = spec
	}
	return nil
}

func parseBBAN(s string, want int) ([]bbanPart, error) {
	var parts []bbanPart
	total := 0
	for _, p := range strings.Split(s, ",") {
		if len(p) < 2 {
			return nil, fmt.Errorf("bad structure %q", s)
		}
		n, err := strconv.Atoi(p[:len(p)-1])
		k := p[len(p)-1]
		if err != nil || n <= 0 || (k != 'n' && k != 'a' && k != 'c') {
			return nil, fmt.Errorf("bad structure part %q", p)
		}
		parts = append(parts, bbanPart{n, k})
		total += n
	}
	if total != want {
		return nil, fmt.Errorf("structure %q is %d long, want %d", s, total, want)
	}
	return parts, nil
}

// iinRange is a card brand's prefix range and allowed lengths.
type iinRange struct {
	brand   string
	lo, hi  int
	digits  int
	lengths map[int]bool
}

func loadIIN(lx *lexicon) error {
	b, err := dataFS.ReadFile("data/iin.txt")
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.SplitN(line, "#", 2)[0])
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return fmt.Errorf("line %d: want BRAND PREFIX LENGTHS", i+1)
		}
		r := iinRange{brand: f[0], lengths: map[int]bool{}}
		lo, hi, _ := strings.Cut(f[1], "-")
		if hi == "" {
			hi = lo
		}
		var e1, e2 error
		r.lo, e1 = strconv.Atoi(lo)
		r.hi, e2 = strconv.Atoi(hi)
		r.digits = len(lo)
		if e1 != nil || e2 != nil || len(hi) != len(lo) || r.lo > r.hi {
			return fmt.Errorf("line %d: bad prefix range %q", i+1, f[1])
		}
		for _, l := range strings.Split(f[2], ",") {
			n, err := strconv.Atoi(l)
			if err != nil || n < 12 || n > 19 {
				return fmt.Errorf("line %d: bad length %q", i+1, l)
			}
			r.lengths[n] = true
		}
		lx.iins = append(lx.iins, r)
	}
	return nil
}

func loadTLDs(lx *lexicon) error {
	w, err := wordList("tlds.txt")
	if err != nil {
		return err
	}
	lx.tlds, lx.tldDeny = map[string]bool{}, map[string]bool{}
	dst := lx.tlds
	for _, t := range w {
		if t == "deny:" {
			dst = lx.tldDeny
			continue
		}
		dst[strings.ToLower(t)] = true
	}
	return nil
}

func loadInvalidSSN(lx *lexicon) error {
	w, err := wordList("invalid_ssn.txt")
	if err != nil {
		return err
	}
	lx.invalidSSN = map[string]bool{}
	for _, s := range w {
		if len(s) != 9 {
			return fmt.Errorf("%q is not nine digits", s)
		}
		lx.invalidSSN[s] = true
	}
	return nil
}
