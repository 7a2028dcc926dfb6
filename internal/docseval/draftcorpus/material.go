package draftcorpus

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

//go:embed data/drafts.yaml
var draftsYAML []byte

// The two halves of the material (see data/drafts.yaml).
const (
	SplitTune    = "tune"
	SplitHeldout = "heldout"
)

// halves holds one value per half of the material.
type halves[T any] struct {
	Tune    T `yaml:"tune"`
	Heldout T `yaml:"heldout"`
}

func (h halves[T]) of(split string) T {
	if split == SplitHeldout {
		return h.Heldout
	}
	return h.Tune
}

type material struct {
	Clauses     map[string]clauseMaterial `yaml:"clauses"`
	Groups      []group                   `yaml:"groups"`
	General     general                   `yaml:"general"`
	Fillers     halves[[]section]         `yaml:"fillers"`
	Parties     halves[[][2]string]       `yaml:"parties"`
	Signatories halves[[]string]          `yaml:"signatories"`
	KeyTerms    halves[[][2]string]       `yaml:"key_terms_tables"`
	Footnotes   halves[[]string]          `yaml:"footnotes"`
}

type clauseMaterial struct {
	Terms           []string              `yaml:"terms"`
	Headings        halves[[]string]      `yaml:"headings"`
	Numeric         halves[[][][2]string] `yaml:"numeric"`
	Reworded        halves[[]string]      `yaml:"reworded"`
	RewordedNumeric halves[[]string]      `yaml:"reworded_numeric"`
	Additions       halves[[]addition]    `yaml:"additions"`
	Lookalike       halves[section]       `yaml:"lookalike"`
}

type addition struct {
	Text    string `yaml:"text"`
	Numeric bool   `yaml:"numeric"`
}

type section struct {
	Heading string   `yaml:"heading"`
	Text    []string `yaml:"text"`
}

type group struct {
	Key      string           `yaml:"key"`
	Clauses  []string         `yaml:"clauses"`
	Headings halves[[]string] `yaml:"headings"`
	Before   halves[[]string] `yaml:"before"`
	After    halves[[]string] `yaml:"after"`
}

type general struct {
	Clauses    []string            `yaml:"clauses"`
	Headings   halves[[]string]    `yaml:"headings"`
	Companions halves[[]companion] `yaml:"companions"`
}

type companion struct {
	Title string `yaml:"title"`
	Text  string `yaml:"text"`
}

func loadMaterial() (*material, error) {
	dec := yaml.NewDecoder(bytes.NewReader(draftsYAML))
	dec.KnownFields(true)
	var m material
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("draft corpus material: %w", err)
	}
	for _, split := range []string{SplitTune, SplitHeldout} {
		if err := m.check(split); err != nil {
			return nil, fmt.Errorf("draft corpus material, %s half: %w", split, err)
		}
	}
	return &m, nil
}

// check makes sure every draw the generator makes has something to draw
// from.
func (m *material) check(split string) error {
	for key, c := range m.Clauses {
		if len(c.Headings.of(split)) == 0 || len(c.Reworded.of(split)) == 0 ||
			len(c.RewordedNumeric.of(split)) == 0 || len(c.Additions.of(split)) == 0 ||
			c.Lookalike.of(split).Heading == "" {
			return fmt.Errorf("clause %s: headings, reworded, reworded_numeric, additions and lookalike are required", key)
		}
	}
	for _, g := range m.Groups {
		if len(g.Headings.of(split)) == 0 || len(g.Before.of(split))+len(g.After.of(split)) == 0 {
			return fmt.Errorf("group %s: headings and a companion are required", g.Key)
		}
		for _, k := range g.Clauses {
			if _, ok := m.Clauses[k]; !ok {
				return fmt.Errorf("group %s: unknown clause %s", g.Key, k)
			}
		}
	}
	if len(m.General.Headings.of(split)) == 0 || len(m.General.Companions.of(split)) < 2 {
		return fmt.Errorf("general: headings and two companions are required")
	}
	if len(m.Fillers.of(split)) < 4 || len(m.Parties.of(split)) < 2 || len(m.Signatories.of(split)) < 2 ||
		len(m.KeyTerms.of(split)) == 0 || len(m.Footnotes.of(split)) == 0 {
		return fmt.Errorf("too few fillers, parties, signatories, key terms or footnotes")
	}
	for _, k := range m.General.Clauses {
		if _, ok := m.Clauses[k]; !ok {
			return fmt.Errorf("general: unknown clause %s", k)
		}
	}
	return nil
}

// groupOf returns the combined section a clause may be placed in.
func (m *material) groupOf(key string) *group {
	for i := range m.Groups {
		if slices.Contains(m.Groups[i].Clauses, key) {
			return &m.Groups[i]
		}
	}
	return nil
}
