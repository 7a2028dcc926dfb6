package datafile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxBytes bounds a data file; templates may come from a tenant.
const MaxBytes = 256 << 10

var yamlLine = regexp.MustCompile(`line (\d+): `)

// Decode strictly decodes the single YAML document b into v. It also
// returns the document's root node, so callers can report semantic errors
// at the right line with Errorf.
func Decode(name string, b []byte, v any) (*yaml.Node, error) {
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the %d byte limit", name, len(b), MaxBytes)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, rewrite(name, err)
	}
	if root.Kind == 0 {
		return nil, fmt.Errorf("%s: empty file", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, rewrite(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one YAML document", name)
	}
	return &root, nil
}

// rewrite turns yaml.v3's "yaml: line 3: msg" and multi-error forms into
// "name:3: msg" lines.
func rewrite(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = name + ":" + yamlLine.ReplaceAllString(m, "$1: ")
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if yamlLine.MatchString(msg) {
		return errors.New(name + ":" + yamlLine.ReplaceAllString(msg, "$1: "))
	}
	return fmt.Errorf("%s: %s", name, msg)
}

// Errorf formats an error at node's line.
func Errorf(name string, node *yaml.Node, format string, args ...any) error {
	line := 0
	if node != nil {
		line = node.Line
	}
	return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
}

// Lookup follows mapping keys (and, for a numeric step, sequence indexes
// given as "[i]") from root to the node they name, or returns the deepest
// node found, so an error points as close to its cause as it can.
func Lookup(root *yaml.Node, path ...any) *yaml.Node {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, step := range path {
		next := child(n, step)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

func child(n *yaml.Node, step any) *yaml.Node {
	if n == nil {
		return nil
	}
	switch s := step.(type) {
	case string:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == s {
				return n.Content[i+1]
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
			return n.Content[s]
		}
	}
	return nil
}
