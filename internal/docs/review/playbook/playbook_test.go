package playbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
)

func TestParsePlaybookErrors(t *testing.T) {
	tests := []struct {
		name, file, data, want string
	}{
		{"threshold above 1", "playbook.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: Laws of New York.\n    threshold: 1.5\n",
			"playbook.yaml:5: clauses.governing_law.threshold: must be between 0 and 1"},
		{"threshold negative", "p.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: Laws.\n    threshold: -0.1\n",
			"p.yaml:5: clauses.governing_law.threshold: must be between 0 and 1"},
		{"threshold as a string", "p.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: Laws.\n    threshold: \"0.9\"\n",
			"p.yaml:5: clauses.governing_law.threshold: must be a number"},
		{"unknown severity", "p.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: Laws.\n    severity: urgent\n",
			"p.yaml:5: clauses.governing_law.severity: must be low, medium, high or critical"},
		{"empty standard text", "p.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: \"  \"\n",
			"p.yaml:4: clauses.governing_law.standard_text: must not be empty"},
		{"no standard text", "p.yaml", "name: x\nclauses:\n  governing_law:\n    title: Law\n",
			"p.yaml:4: clauses.governing_law.standard_text: required"},
		{"standard text not a string", "p.yaml", "name: x\nclauses:\n  governing_law:\n    standard_text: [a]\n",
			"p.yaml:4: clauses.governing_law.standard_text: must be a string"},
		{"worse_if outside the set", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T (30) days.\n" +
			"    key_terms:\n      net:\n        text: thirty (30) days\n        worse_if: longer\n", "p.yaml:9: clauses.a.key_terms.net.worse_if: must be higher or lower"},
		{"key term mapping without text", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n" +
			"    key_terms:\n      net:\n        worse_if: lower\n", "p.yaml:8: clauses.a.key_terms.net.text: required"},
		{"notes not text", "p.yaml", "name: x\nnotes: {a: 1}\nclauses:\n  a:\n    title: A\n    standard_text: T.\n",
			"p.yaml:2: notes: must be a string"},
		{"description not text", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n    description: [1]\n",
			"p.yaml:6: clauses.a.description: must be a string"},
		{"no name", "p.yaml", "clauses:\n  a:\n    title: A\n    standard_text: Text.\n", "p.yaml:1: name: required"},
		{"no clauses", "p.yaml", "name: x\n", "p.yaml:1: clauses: required"},
		{"empty clauses", "p.yaml", "name: x\nclauses: {}\n", "at least one clause"},
		{"bad clause key", "p.yaml", "name: x\nclauses:\n  Governing-Law:\n    title: L\n    standard_text: T.\n",
			"p.yaml:4: clauses.Governing-Law: clause keys are"},
		{"duplicate clause", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n  a:\n    title: B\n    standard_text: U.\n",
			"p.yaml:6: clauses.a: duplicate key"},
		{"unknown key needs a title", "p.yaml", "name: x\nclauses:\n  escrow:\n    standard_text: Source code escrow.\n",
			"clauses.escrow.title: required"},
		{"headings not a list", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n    headings: Cap\n",
			"p.yaml:6: clauses.a.headings: must be a list of strings"},
		{"key term name", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n    key_terms:\n      Cap Months: twelve\n",
			"clauses.a.key_terms.Cap Months: names are"},
		{"anchor and alias", "p.yaml", "name: x\nclauses:\n  a: &c\n    title: A\n    standard_text: T.\n  b: *c\n",
			"anchors, aliases and merge keys are not allowed"},
		{"two documents", "p.yaml", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T.\n---\nname: y\n", "more than one YAML document"},
		{"empty file", "p.yaml", "  \n", "empty playbook"},
		{"not yaml", "p.yaml", "name: [x\n", "p.yaml: yaml:"},
		{"json wrong type", "p.json", "{\"name\": \"x\",\n \"clauses\": {\"a\": {\"title\": \"A\",\n \"standard_text\": 7}}}",
			"p.json:3: clauses.a.standard_text: must be a string"},
		{"oversize", "p.yaml", "name: x\n#" + strings.Repeat("x", MaxPlaybookBytes), "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePlaybook(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q, want it to contain %q", err, tt.want)
			}
			if code := docs.AsError(err).Code; code != docs.CodeInvalidArg {
				t.Errorf("code %q, want %q", code, docs.CodeInvalidArg)
			}
		})
	}
}

func TestParsePlaybookAccepts(t *testing.T) {
	tests := []struct {
		name, data string
		check      func(t *testing.T, pb *Playbook)
	}{
		{"known key inherits headings, severity, guidance; not key terms",
			"name: mine\nversion: 3\nclauses:\n  governing_law:\n    title: Choice of Law\n    standard_text: Delaware law governs.\n",
			func(t *testing.T, pb *Playbook) {
				c := pb.Clauses[0]
				if pb.Version != "3" || c.Title != "Choice of Law" || len(c.Headings) < 3 || c.Severity != "medium" ||
					c.Guidance == "" || len(c.KeyTerms) != 0 || c.Threshold != DefaultThreshold {
					t.Errorf("got %+v", c)
				}
			}},
		{"known key without title takes the default title",
			"name: mine\nclauses:\n  assignment:\n    standard_text: No assignment.\n",
			func(t *testing.T, pb *Playbook) {
				if pb.Clauses[0].Title != "Assignment" {
					t.Errorf("title %q", pb.Clauses[0].Title)
				}
			}},
		{"own headings replace the default ones, unknown key gets medium",
			"name: mine\nclauses:\n  escrow:\n    title: Escrow\n    standard_text: Source code escrow.\n    headings: [Source Code]\n    threshold: 0.9\n    severity: high\n",
			func(t *testing.T, pb *Playbook) {
				c := pb.Clauses[0]
				if len(c.Headings) != 1 || c.Threshold != 0.9 || c.Severity != "high" {
					t.Errorf("got %+v", c)
				}
			}},
		{"file order kept",
			"name: x\nclauses:\n  zeta:\n    title: Z\n    standard_text: Z text.\n  alpha:\n    title: A\n    standard_text: A text.\n",
			func(t *testing.T, pb *Playbook) {
				if pb.Clauses[0].Key != "zeta" || pb.Clauses[1].Key != "alpha" {
					t.Errorf("order %s, %s", pb.Clauses[0].Key, pb.Clauses[1].Key)
				}
			}},
		{"json",
			`{"name": "j", "version": "1", "clauses": {"payment_terms": {"title": "Payment", "standard_text": "Net thirty (30) days.", "key_terms": {"net": "thirty (30) days"}, "threshold": 1}}}`,
			func(t *testing.T, pb *Playbook) {
				c := pb.Clauses[0]
				if pb.Name != "j" || len(c.KeyTerms) != 1 || c.KeyTerms[0].Name != "net" || c.Threshold != 1 {
					t.Errorf("got %+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pb, err := ParsePlaybook("p.yaml", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, pb)
		})
	}
}

func TestLoadPlaybook(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "firm.yaml")
	data := "name: firm\nclauses:\n  governing_law:\n    standard_text: Laws of the State of Delaware.\n    threshold: 2\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPlaybook(path)
	if err == nil || !strings.Contains(err.Error(), "firm.yaml:5: clauses.governing_law.threshold") {
		t.Errorf("error %v, want it to name firm.yaml:5", err)
	}
	_, err = LoadPlaybook(filepath.Join(dir, "missing.yaml"))
	if docs.AsError(err).Code != docs.CodeInvalidArg {
		t.Errorf("missing file: %v, want invalid_input", err)
	}
}

// TestParseStrictErrors: with Strict, a field nobody documented is an
// error naming file, line and field, as every unknown field was before
// playbooks became tolerant.
func TestParseStrictErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"unknown clause field", "name: x\nclauses:\n  governing_law:\n    standard_text: Laws.\n    weight: 2\n",
			"p.yaml:5: clauses.governing_law.weight: unknown field"},
		{"unknown top field", "name: x\nauthor: me\nclauses:\n  a:\n    title: A\n    standard_text: Text.\n",
			"p.yaml:2: author: unknown field"},
		{"unknown key term field", "name: x\nclauses:\n  a:\n    title: A\n    standard_text: T (30) days.\n" +
			"    key_terms:\n      net:\n        text: thirty (30) days\n        unit: days\n", "p.yaml:9: clauses.a.key_terms.net.unit: unknown field"},
	}
	for _, tt := range tests {
		_, _, err := Parse("p.yaml", []byte(tt.data), ParseOptions{Strict: true})
		if err == nil || !strings.Contains(err.Error(), tt.want) || docs.AsError(err).Code != docs.CodeInvalidArg {
			t.Errorf("%s: error %v, want invalid_input %q", tt.name, err, tt.want)
		}
		pb, warnings, err := Parse("p.yaml", []byte(tt.data), ParseOptions{})
		if err != nil || pb == nil || len(warnings) != 1 || !strings.Contains(warnings[0], strings.TrimSuffix(tt.want, "unknown field")) {
			t.Errorf("%s, not strict: error %v, warnings %q, want one warning", tt.name, err, warnings)
		}
	}
}

// TestParseTolerates: playbooks exported from other systems carry fields
// of their own. The documented descriptive fields are accepted silently;
// any other unknown field is a warning naming file, line and field, and
// ignored; only Strict makes it an error (TestParsePlaybookErrors).
func TestParseTolerates(t *testing.T) {
	data := "name: Exported\ndescription: From the contract system.\nnotes:\n  - Reviewed 2025.\n  - Owner legal.\n" +
		"exported_by: CLM 4.2\nclauses:\n  payment_terms:\n    title: Payment\n" +
		"    description: Net thirty.\n    notes: Finance owns this.\n    owner: finance\n" +
		"    standard_text: Customer shall pay within thirty (30) days after receipt.\n" +
		"    key_terms:\n      net:\n        text: thirty (30) days\n        worse_if: higher\n        notes: longer is worse\n" +
		"        source: clm\n      late: one percent (1%)\n"
	pb, warnings, err := Parse("exported.yaml", []byte(data), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"exported.yaml:6: exported_by: unknown field, ignored",
		"exported.yaml:12: clauses.payment_terms.owner: unknown field, ignored",
		"exported.yaml:19: clauses.payment_terms.key_terms.net.source: unknown field, ignored"}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if pb.Description != "From the contract system." || pb.Notes != "Reviewed 2025.\nOwner legal." {
		t.Errorf("playbook description %q notes %q", pb.Description, pb.Notes)
	}
	c := pb.Clauses[0]
	if c.Description != "Net thirty." || c.Notes != "Finance owns this." {
		t.Errorf("clause description %q notes %q", c.Description, c.Notes)
	}
	if len(c.KeyTerms) != 2 || c.KeyTerms[0] != (KeyTerm{Name: "net", Text: "thirty (30) days", WorseIf: WorseHigher}) ||
		c.KeyTerms[1] != (KeyTerm{Name: "late", Text: "one percent (1%)"}) {
		t.Errorf("key terms %+v", c.KeyTerms)
	}
	if _, err := ParsePlaybook("exported.yaml", []byte(data)); err != nil {
		t.Errorf("ParsePlaybook: %v", err)
	}
	if _, _, err := Parse("exported.yaml", []byte(data), ParseOptions{Strict: true}); err == nil ||
		!strings.Contains(err.Error(), "exported.yaml:6: exported_by: unknown field") {
		t.Errorf("strict: %v, want the first unknown field named", err)
	}
}
