package reviewcorpus

import (
	"bytes"
	_ "embed"
	"fmt"

	"gopkg.in/yaml.v3"
)

//go:embed data/corpus.yaml
var corpusYAML []byte

// material is the embedded corpus.yaml.
type material struct {
	Clauses         map[string]clauseMaterial `yaml:"clauses"`
	Articles        []string                  `yaml:"articles"`
	GeneralSections []string                  `yaml:"general_sections"`
	Parties         [][3]string               `yaml:"parties"`
	Fillers         []filler                  `yaml:"fillers"`
}

type clauseMaterial struct {
	Rewrites [][2]string   `yaml:"rewrites"`
	Places   [][][2]string `yaml:"places"`
	Unlisted []string      `yaml:"unlisted"`
}

type filler struct {
	Title      string   `yaml:"title"`
	Paragraphs []string `yaml:"paragraphs"`
}

func loadMaterial() (*material, error) {
	dec := yaml.NewDecoder(bytes.NewReader(corpusYAML))
	dec.KnownFields(true)
	var m material
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("corpus material: %w", err)
	}
	if len(m.Fillers) < 8 || len(m.Articles) < 3 || len(m.Parties) < 2 || len(m.GeneralSections) == 0 {
		return nil, fmt.Errorf("corpus material: too few fillers, articles, parties or general sections")
	}
	return &m, nil
}
