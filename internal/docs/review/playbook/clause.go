package playbook

import (
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

func (p *pbParser) clause(key string, n *yaml.Node) (Clause, bool) {
	path := "clauses." + key
	before := len(p.issues)
	if len(key) > result.MaxClauseKeyBytes || !keyRE.MatchString(key) {
		p.errorf(n, path, "clause keys are lower-case letters, digits and '_', starting with a letter, at most %d bytes", result.MaxClauseKeyBytes)
	}
	f, _ := p.fields(n, path, "title", "standard_text", "headings", "key_terms", "threshold", "severity", "guidance",
		"description", "notes")
	if f == nil {
		return Clause{}, false
	}
	c := Clause{Key: key, Threshold: DefaultThreshold}
	c.Description, c.Notes = p.descriptive(f, path)
	if v := f["title"]; v != nil {
		c.Title = p.str(v, path+".title", result.MaxTitleBytes, true)
	}
	if v := f["standard_text"]; v != nil {
		c.StandardText = p.str(v, path+".standard_text", MaxStandardTextBytes, true)
		if c.StandardText != "" && !strings.ContainsFunc(c.StandardText, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			p.errorf(v, path+".standard_text", "has no words")
		}
	} else {
		p.errorf(n, path+".standard_text", "required")
	}
	if v := f["headings"]; v != nil {
		c.Headings = p.headings(v, path+".headings")
	}
	if v := f["key_terms"]; v != nil {
		c.KeyTerms = p.keyTerms(v, path+".key_terms")
	}
	if v := f["threshold"]; v != nil {
		c.Threshold = p.threshold(v, path+".threshold")
	}
	if v := f["severity"]; v != nil {
		c.Severity = p.str(v, path+".severity", 20, true)
		switch c.Severity {
		case "", result.SeverityLow, result.SeverityMedium, result.SeverityHigh, result.SeverityCritical:
		default:
			p.errorf(v, path+".severity", "must be low, medium, high or critical")
		}
	}
	if v := f["guidance"]; v != nil {
		c.Guidance = p.str(v, path+".guidance", result.MaxGuidanceBytes, false)
	}
	return c, len(p.issues) == before
}

// str reads a string scalar: not a number, bool or null, within max
// bytes, and (when required) not blank. Surrounding space is trimmed.
func (p *pbParser) str(n *yaml.Node, path string, limit int, required bool) string {
	if n == nil {
		if required {
			p.issues = append(p.issues, p.file+": "+path+": required")
		}
		return ""
	}
	if !p.plain(n, path) {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		p.errorf(n, path, "must be a string")
		return ""
	}
	v := strings.TrimSpace(n.Value)
	if len(v) > limit {
		p.errorf(n, path, "%d bytes, limit %d", len(v), limit)
		return ""
	}
	if required && v == "" {
		p.errorf(n, path, "must not be empty")
	}
	return v
}

func (p *pbParser) headings(n *yaml.Node, path string) []string {
	if !p.plain(n, path) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, path, "must be a list of strings")
		return nil
	}
	if len(n.Content) > MaxClauseHeadings {
		p.errorf(n, path, "%d headings, limit %d", len(n.Content), MaxClauseHeadings)
		return nil
	}
	out := []string{}
	for i, h := range n.Content {
		if s := p.str(h, path+"["+strconv.Itoa(i)+"]", MaxSynonymBytes, true); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (p *pbParser) keyTerms(n *yaml.Node, path string) []KeyTerm {
	f, order := p.fields(n, path)
	if len(order) > MaxKeyTerms {
		p.errorf(n, path, "%d key terms, limit %d", len(order), MaxKeyTerms)
		return nil
	}
	var out []KeyTerm
	for _, name := range order {
		sub := path + "." + name
		if len(name) > result.MaxValueNameBytes || !keyRE.MatchString(name) {
			p.errorf(f[name], sub, "names are lower-case letters, digits and '_', starting with a letter")
			continue
		}
		if kt, ok := p.keyTerm(f[name], sub); ok {
			kt.Name = name
			out = append(out, kt)
		}
	}
	return out
}

// keyTerm reads a key term: its text as written in the standard text, or
// a mapping of text, worse_if (higher or lower: which way a change of
// the value hurts) and the descriptive fields.
func (p *pbParser) keyTerm(n *yaml.Node, path string) (KeyTerm, bool) {
	if n.Kind != yaml.MappingNode {
		t := p.str(n, path, MaxKeyTermBytes, true)
		return KeyTerm{Text: t}, t != ""
	}
	f, _ := p.fields(n, path, "text", "worse_if", "description", "notes")
	if f == nil {
		return KeyTerm{}, false
	}
	p.descriptive(f, path)
	var kt KeyTerm
	if f["text"] == nil {
		p.errorf(n, path+".text", "required")
	} else {
		kt.Text = p.str(f["text"], path+".text", MaxKeyTermBytes, true)
	}
	if v := f["worse_if"]; v != nil {
		kt.WorseIf = p.str(v, path+".worse_if", 20, true)
		if kt.WorseIf != "" && kt.WorseIf != WorseHigher && kt.WorseIf != WorseLower {
			p.errorf(v, path+".worse_if", "must be higher or lower")
			kt.WorseIf = ""
		}
	}
	return kt, kt.Text != ""
}

// descriptive reads the documented descriptive fields of a mapping:
// description, a string, and notes, a string or a list of strings (one a
// line).
func (p *pbParser) descriptive(f map[string]*yaml.Node, path string) (description, notes string) {
	if v := f["description"]; v != nil {
		description = p.str(v, joinPath(path, "description"), MaxDescriptionBytes, false)
	}
	v := f["notes"]
	if v == nil {
		return description, ""
	}
	if v.Kind != yaml.SequenceNode {
		return description, p.str(v, joinPath(path, "notes"), MaxDescriptionBytes, false)
	}
	lines := make([]string, 0, len(v.Content))
	for i, item := range v.Content {
		lines = append(lines, p.str(item, joinPath(path, "notes")+"["+strconv.Itoa(i)+"]", MaxDescriptionBytes, false))
	}
	notes = strings.Join(lines, "\n")
	if len(notes) > MaxDescriptionBytes {
		p.errorf(v, joinPath(path, "notes"), "%d bytes, limit %d", len(notes), MaxDescriptionBytes)
		return description, ""
	}
	return description, notes
}

func (p *pbParser) threshold(n *yaml.Node, path string) float64 {
	if !p.plain(n, path) {
		return DefaultThreshold
	}
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		p.errorf(n, path, "must be a number between 0 and 1")
		return DefaultThreshold
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || v < 0 || v > 1 || v != v {
		p.errorf(n, path, "must be between 0 and 1")
		return DefaultThreshold
	}
	return v
}
