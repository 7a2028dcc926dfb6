package recognizer

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

//go:embed data/*
var dataFS embed.FS

// Inputs a recognizer may run on.
const (
	InputAll = ""    // every text
	InputOCR = "ocr" // only text read by OCR
)

// Spec is one registry entry. The fields every kind has are decoded
// here; Decode reads the entry again into a kind's own settings.
type Spec struct {
	Common
	node yaml.Node
}

// Common are the fields of every registry entry. A kind's settings type
// embeds it (yaml:",inline") so Decode can refuse unknown fields.
type Common struct {
	Name  string  `yaml:"name"`
	Kind  string  `yaml:"kind"`
	Type  Type    `yaml:"type"`
	Types []Type  `yaml:"types"`
	Input string  `yaml:"input"`
	Data  string  `yaml:"data"`
	Score float64 `yaml:"score"`
}

// AllTypes returns Type and Types together.
func (c *Common) AllTypes() []Type {
	if c.Type != "" {
		return append([]Type{c.Type}, c.Types...)
	}
	return c.Types
}

// Decode reads the entry into v (a struct embedding Common inline),
// refusing fields v does not have.
func (s *Spec) Decode(v any) error {
	b, err := yaml.Marshal(&s.node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// Factory builds a recognizer of one kind from its entry.
type Factory func(spec *Spec, env *Env) (Recognizer, error)

// Registry is the loaded registry: the context phrases every window is
// searched for, and the recognizers in order.
type Registry struct {
	Labels *nlp.PhraseTrie
	// Recognizers run on every text; OCR ones only on OCR pages.
	Recognizers, OCR []Recognizer
	// Records says which fields of structured documents are parts of
	// an entity.
	Records *Records
}

type registryFile struct {
	Context     map[string][]string `yaml:"context"`
	Macros      map[string]string   `yaml:"macros"`
	Recognizers []yaml.Node         `yaml:"recognizers"`
	Records     []recordEntry       `yaml:"records"`
}

// Load reads data/registry.yaml and builds its recognizers with the
// factories of kinds (by kind name). Unknown kinds, types and fields are
// errors: a typo in the registry must not quietly switch a detector off.
func Load(kinds map[string]Factory) (*Registry, error) {
	var f registryFile
	if err := strictYAML("registry.yaml", &f); err != nil {
		return nil, fmt.Errorf("redact registry: %w", err)
	}
	reg := &Registry{Labels: nlp.NewPhraseTrie()}
	if err := addContext(reg.Labels, f.Context); err != nil {
		return nil, fmt.Errorf("redact registry: context: %w", err)
	}
	var err error
	if reg.Records, err = newRecords(f.Records); err != nil {
		return nil, fmt.Errorf("redact registry: %w", err)
	}
	env := &Env{Macros: f.Macros, cache: map[string]any{}}
	for i := range f.Recognizers {
		r, input, err := build(&f.Recognizers[i], kinds, env)
		if err != nil {
			return nil, fmt.Errorf("redact registry: %w", err)
		}
		if input == InputOCR {
			reg.OCR = append(reg.OCR, r)
		} else {
			reg.Recognizers = append(reg.Recognizers, r)
		}
	}
	return reg, nil
}

// build makes one entry's recognizer.
func build(n *yaml.Node, kinds map[string]Factory, env *Env) (Recognizer, string, error) {
	spec := &Spec{node: *n}
	if err := n.Decode(&spec.Common); err != nil {
		return nil, "", err
	}
	if spec.Name == "" {
		return nil, "", fmt.Errorf("line %d: a recognizer without a name", n.Line)
	}
	mk, ok := kinds[spec.Kind]
	if !ok {
		return nil, "", fmt.Errorf("recognizer %s: unknown kind %q", spec.Name, spec.Kind)
	}
	if spec.Input != InputAll && spec.Input != InputOCR {
		return nil, "", fmt.Errorf("recognizer %s: unknown input %q", spec.Name, spec.Input)
	}
	types := spec.AllTypes()
	if len(types) == 0 {
		return nil, "", fmt.Errorf("recognizer %s: no type", spec.Name)
	}
	for _, t := range types {
		if !policy.Known(t) {
			return nil, "", fmt.Errorf("recognizer %s: unknown type %q", spec.Name, t)
		}
	}
	r, err := mk(spec, env)
	if err != nil {
		return nil, "", fmt.Errorf("recognizer %s: %w", spec.Name, err)
	}
	return r, spec.Input, nil
}

// addContext files every context phrase under its type or label kind.
func addContext(trie *nlp.PhraseTrie, ctx map[string][]string) error {
	for k, words := range ctx {
		t := Type(k)
		if !policy.Known(t) && !isLabelKind(t) {
			return fmt.Errorf("unknown type %q", k)
		}
		for _, w := range words {
			trie.Add(w, t)
		}
	}
	return nil
}

func isLabelKind(t Type) bool {
	for _, k := range nlp.LabelKinds {
		if k == t {
			return true
		}
	}
	return false
}

// Env is what factories read: the registry's macros and its data files.
type Env struct {
	Macros map[string]string
	cache  map[string]any
}

// Cached returns what load returned the first time key was asked for, so
// kinds share tables (the registry is loaded once, by one goroutine).
func (e *Env) Cached(key string, load func() (any, error)) (any, error) {
	if v, ok := e.cache[key]; ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	e.cache[key] = v
	return v, nil
}

// ReadFile returns a data file.
func (e *Env) ReadFile(name string) ([]byte, error) { return dataFS.ReadFile("data/" + name) }

// StrictYAML decodes a YAML data file, refusing unknown fields.
func (e *Env) StrictYAML(name string, v any) error { return strictYAML(name, v) }

func strictYAML(name string, v any) error {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// WordList reads a whitespace-separated list with '#' comments.
func (e *Env) WordList(name string) ([]string, error) {
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

// ExpandMacros replaces {NAME} with macros[NAME], repeatedly, so macros
// may use macros. Unknown names are left alone (regex repetition counts
// like {2,4} are not macros).
func ExpandMacros(s string, macros map[string]string) string {
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
