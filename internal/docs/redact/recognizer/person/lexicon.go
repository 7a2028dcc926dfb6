package person

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// lexicon is what the name rules know, loaded once and never modified.
type lexicon struct {
	first, surname, ambiguous     map[string]bool
	titles, weakTitles, particles map[string]bool
	suffixes, stop                map[string]bool
	cjkSuffixes                   []string
	hyphenParticles, familyFirst  map[string]bool
	saidVerbs, subjectWords       map[string]bool
	surnameEndings                []string
	// notNames holds places and organisations that read like names
	// (phrases of folded words).
	notNames *nlp.PhraseTrie
}

// settings are a person entry's fields (see registry.yaml).
type settings struct {
	recognizer.Common `yaml:",inline"`
	FirstNames        string `yaml:"first_names"`
	Surnames          string `yaml:"surnames"`
	Ambiguous         string `yaml:"ambiguous"`
}

// Kinds of phrases that read like names but are none.
const (
	placeKind nlp.Type = "place"
	orgKind   nlp.Type = "organisation"
)

// Recognizer is the registry entry of kind "person".
type Recognizer struct {
	name string
	lx   *lexicon
}

// New is the "person" kind's factory.
func New(spec *recognizer.Spec, env *recognizer.Env) (recognizer.Recognizer, error) {
	var s settings
	if err := spec.Decode(&s); err != nil {
		return nil, err
	}
	if s.Type != policy.Person || len(s.Types) > 0 || s.Data == "" {
		return nil, fmt.Errorf("a person recognizer finds %s, with its lexicon as data", policy.Person)
	}
	lx := &lexicon{}
	if err := lx.loadLists(env, s); err != nil {
		return nil, err
	}
	if err := lx.loadLexicon(env, s.Data); err != nil {
		return nil, err
	}
	return &Recognizer{name: s.Name, lx: lx}, nil
}

// Name implements recognizer.Recognizer.
func (r *Recognizer) Name() string { return r.name }

// Types implements recognizer.Recognizer.
func (r *Recognizer) Types() []policy.Type { return []policy.Type{policy.Person} }

func foldSet(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[nlp.FoldName(strings.TrimSuffix(w, "."))] = true
	}
	return m
}

func (lx *lexicon) loadLists(env *recognizer.Env, s settings) error {
	for _, l := range []struct {
		file string
		dst  *map[string]bool
	}{
		{s.FirstNames, &lx.first},
		{s.Surnames, &lx.surname},
		{s.Ambiguous, &lx.ambiguous},
	} {
		w, err := env.WordList(l.file)
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

func (lx *lexicon) loadLexicon(env *recognizer.Env, name string) error {
	var raw struct {
		Titles      []string `yaml:"titles"`
		WeakTitles  []string `yaml:"weak_titles"`
		CJKSuffixes []string `yaml:"cjk_suffixes"`
		Particles   []string `yaml:"particles"`
		Suffixes    []string `yaml:"suffixes"`
		Stop        []string `yaml:"stop"`
		Hyphen      []string `yaml:"hyphen_particles"`
		FamilyFirst []string `yaml:"family_first"`
		Endings     []string `yaml:"surname_endings"`
		Said        []string `yaml:"said_verbs"`
		Subject     []string `yaml:"name_subject_words"`
		Places      []string `yaml:"places"`
		Orgs        []string `yaml:"organisations"`
	}
	if err := env.StrictYAML(name, &raw); err != nil {
		return err
	}
	lx.hyphenParticles, lx.familyFirst = foldSet(raw.Hyphen), foldSet(raw.FamilyFirst)
	lx.saidVerbs, lx.subjectWords = foldSet(raw.Said), foldSet(raw.Subject)
	lx.surnameEndings = raw.Endings
	lx.notNames = nlp.NewPhraseTrie()
	for _, set := range []struct {
		words []string
		kind  nlp.Type
	}{{raw.Places, placeKind}, {raw.Orgs, orgKind}} {
		for _, w := range set.words {
			lx.notNames.Add(w, set.kind)
		}
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
	return nil
}
