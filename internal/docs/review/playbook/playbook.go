package playbook

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// Playbook is a firm's standard clauses. Clauses are in file order (the
// order the author wrote them, usually the order of a contract); findings
// come out in the same order.
type Playbook struct {
	Name    string
	Version string
	// Description and Notes are the author's, for people: the analysis
	// never reads them.
	Description, Notes string
	Clauses            []Clause
}

// Clause is one standard clause.
type Clause struct {
	Key          string
	Title        string
	StandardText string
	// Headings are the synonyms a contract may use as the clause heading,
	// besides Title.
	Headings []string
	// KeyTerms pin values the clause must contain, in file order.
	KeyTerms []KeyTerm
	// Threshold is the minimum similarity for MATCH (DefaultThreshold
	// unless the playbook sets it).
	Threshold float64
	Severity  string
	Guidance  string
	// Description and Notes are the author's, for people (as for the
	// playbook).
	Description, Notes string
}

// KeyTerm is a pinned value: Text as written in the standard
// ("twelve (12) months") under a Name used in the finding's values.
// WorseIf says which way a change of its value hurts: WorseHigher,
// WorseLower, or "" when the playbook does not say.
type KeyTerm struct {
	Name, Text string
	WorseIf    string
}

// Directions a key term's change can be worse in.
const (
	WorseHigher = "higher"
	WorseLower  = "lower"
)

// Playbook limits.
const (
	MaxPlaybookBytes     = 512 << 10
	MaxPlaybookClauses   = result.MaxFindings
	MaxStandardTextBytes = 10000
	MaxClauseHeadings    = 32
	MaxSynonymBytes      = 120
	MaxKeyTerms          = 16
	MaxKeyTermBytes      = 200
	MaxDescriptionBytes  = 20000 // description and notes, each
	// DefaultThreshold is the similarity a clause needs for MATCH when the
	// playbook does not say (and its differences must be trivial).
	DefaultThreshold = 0.85
)

var keyRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

//go:embed default_playbook.yaml
var defaultPlaybook []byte

// DefaultPlaybook returns the embedded default playbook, freshly parsed
// (the caller may modify it).
func DefaultPlaybook() (*Playbook, error) {
	pb, _, err := parsePlaybook("default_playbook.yaml", defaultPlaybook, ParseOptions{Strict: true})
	return pb, err
}

// LoadPlaybook reads and parses a playbook file (see ParsePlaybook).
func LoadPlaybook(path string) (*Playbook, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, docs.Errorf(docs.CodeInvalidArg, "playbook: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPlaybookBytes+1))
	if err != nil {
		return nil, docs.Errorf(docs.CodeInvalidArg, "playbook: %v", err)
	}
	return ParsePlaybook(filepath.Base(path), data)
}

// ParseOptions say how a playbook is read.
type ParseOptions struct {
	// Strict makes an unknown field an error; by default it is a warning
	// and ignored, since playbooks are often exported from other systems
	// with fields of their own.
	Strict bool
}

// ParsePlaybook parses a playbook as Parse does by default, dropping the
// warnings.
func ParsePlaybook(file string, data []byte) (*Playbook, error) {
	pb, _, err := Parse(file, data, ParseOptions{})
	return pb, err
}

// Parse parses a JSON or YAML playbook. Wrong types, empty standard
// texts, thresholds outside 0..1, unknown severities, unknown worse_if
// directions, anchors and aliases, duplicate keys and oversize input are
// errors of code invalid_input naming file, line and field. The
// documented descriptive fields (description and notes, at the top, in a
// clause and in a key term) are accepted and never read by the analysis.
// A field nobody documented is a warning ("file:line: path: unknown
// field, ignored"), or with o.Strict an error. A clause whose key is in
// the default playbook inherits from it whatever it does not set among
// headings, title, severity and guidance (not key_terms: they pin the
// default's own standard text).
func Parse(file string, data []byte, o ParseOptions) (*Playbook, []string, error) {
	pb, warnings, err := parsePlaybook(file, data, o)
	if err != nil {
		return nil, nil, err
	}
	base, err := DefaultPlaybook()
	if err != nil {
		return nil, nil, err
	}
	byKey := map[string]*Clause{}
	for i := range base.Clauses {
		byKey[base.Clauses[i].Key] = &base.Clauses[i]
	}
	for i := range pb.Clauses {
		c := &pb.Clauses[i]
		d := byKey[c.Key]
		if d == nil {
			continue
		}
		if c.Title == "" {
			c.Title = d.Title
		}
		if c.Headings == nil {
			c.Headings = d.Headings
		}
		if c.Severity == "" {
			c.Severity = d.Severity
		}
		if c.Guidance == "" {
			c.Guidance = d.Guidance
		}
	}
	var issues []string
	for _, c := range pb.Clauses {
		if c.Title == "" {
			issues = append(issues, fmt.Sprintf("%s: clauses.%s.title: required (%s is not a clause of the default playbook)", file, c.Key, c.Key))
		}
	}
	if len(issues) > 0 {
		return nil, nil, playbookError(issues)
	}
	for i := range pb.Clauses {
		if pb.Clauses[i].Severity == "" {
			pb.Clauses[i].Severity = result.SeverityMedium
		}
	}
	return pb, warnings, nil
}

// parsePlaybook parses without inheriting from the default playbook.
func parsePlaybook(file string, data []byte, o ParseOptions) (*Playbook, []string, error) {
	if len(data) > MaxPlaybookBytes {
		return nil, nil, docs.Errorf(docs.CodeInvalidArg, "%s: %d bytes or more, limit %d", file, len(data), MaxPlaybookBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, docs.Errorf(docs.CodeInvalidArg, "%s: empty playbook", file)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, docs.Errorf(docs.CodeInvalidArg, "%s: %v", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, nil, docs.Errorf(docs.CodeInvalidArg, "%s: more than one YAML document", file)
	}
	p := &pbParser{file: file, strict: o.Strict}
	pb := p.playbook(&doc)
	if len(p.issues) > 0 {
		return nil, nil, playbookError(p.issues)
	}
	return pb, p.warnings, nil
}

// playbookError reports the first few issues in one invalid_input error.
func playbookError(issues []string) error {
	const show = 8
	msg := strings.Join(issues[:min(len(issues), show)], "; ")
	if len(issues) > show {
		msg += fmt.Sprintf("; and %d more", len(issues)-show)
	}
	return &docs.Error{Code: docs.CodeInvalidArg, Message: msg}
}

// pbParser walks the YAML node tree, recording every issue with its line
// rather than stopping at the first, so one run shows an author all of
// them.
type pbParser struct {
	file     string
	strict   bool
	issues   []string
	warnings []string
}

func (p *pbParser) errorf(n *yaml.Node, path, format string, args ...any) {
	p.issues = append(p.issues, fmt.Sprintf("%s:%d: %s: %s", p.file, n.Line, path, fmt.Sprintf(format, args...)))
}

// maxWarnings bounds the warnings one playbook gives.
const maxWarnings = 50

// unknown reports a field nobody documented: an error when strict, else a
// warning.
func (p *pbParser) unknown(k *yaml.Node, path string) {
	if p.strict {
		p.errorf(k, path, "unknown field")
		return
	}
	if len(p.warnings) < maxWarnings {
		p.warnings = append(p.warnings, fmt.Sprintf("%s:%d: %s: unknown field, ignored", p.file, k.Line, path))
	}
}

// fields checks a mapping node and returns its values by key; unknown
// keys, duplicates, anchors and aliases are issues.
func (p *pbParser) fields(n *yaml.Node, path string, known ...string) (map[string]*yaml.Node, []string) {
	if !p.plain(n, path) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "must be a mapping")
		return nil, nil
	}
	out := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !p.plain(k, path) || !p.plain(v, path) {
			continue
		}
		sub := joinPath(path, k.Value)
		switch {
		case k.Kind != yaml.ScalarNode || k.Tag != "!!str":
			p.errorf(k, path, "keys must be strings")
		case out[k.Value] != nil:
			p.errorf(k, sub, "duplicate key")
		case known != nil && !slices.Contains(known, k.Value):
			p.unknown(k, sub)
		default:
			out[k.Value] = v
			order = append(order, k.Value)
		}
	}
	return out, order
}

// plain rejects anchors, aliases and merge keys: a playbook has no use for
// them and they are how YAML inputs blow up.
func (p *pbParser) plain(n *yaml.Node, path string) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Tag == "!!merge" {
		p.errorf(n, path, "anchors, aliases and merge keys are not allowed")
		return false
	}
	return true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *pbParser) playbook(doc *yaml.Node) *Playbook {
	root := doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	f, _ := p.fields(root, "", "name", "version", "description", "notes", "clauses")
	if f == nil {
		return nil
	}
	pb := &Playbook{}
	pb.Description, pb.Notes = p.descriptive(f, "")
	if f["name"] == nil {
		p.errorf(root, "name", "required")
	} else {
		pb.Name = p.str(f["name"], "name", result.MaxNameBytes, true)
	}
	if v := f["version"]; v != nil {
		if v.Kind == yaml.ScalarNode && (v.Tag == "!!int" || v.Tag == "!!float") {
			pb.Version = v.Value // version: 2 or 1.2 is fine as written
		} else {
			pb.Version = p.str(v, "version", result.MaxNameBytes, false)
		}
	}
	cl := f["clauses"]
	if cl == nil {
		p.errorf(root, "clauses", "required")
		return pb
	}
	cf, order := p.fields(cl, "clauses")
	if cf != nil && len(order) == 0 {
		p.errorf(cl, "clauses", "at least one clause is required")
	}
	if len(order) > MaxPlaybookClauses {
		p.errorf(cl, "clauses", "%d clauses, limit %d", len(order), MaxPlaybookClauses)
		return pb
	}
	for _, key := range order {
		if c, ok := p.clause(key, cf[key]); ok {
			pb.Clauses = append(pb.Clauses, c)
		}
	}
	return pb
}
