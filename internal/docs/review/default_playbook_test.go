package review

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
)

// TestDefaultPlaybook checks the built-in playbook against the analysis:
// every clause is realistic and every pinned key term is one the
// analysis finds in the clause's own standard text.
func TestDefaultPlaybook(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	required := []string{"limitation_of_liability", "governing_law", "confidentiality_term", "indemnification",
		"termination_for_convenience", "assignment", "non_solicitation", "payment_terms", "warranty",
		"force_majeure", "notices", "dispute_resolution", "insurance"}
	byKey := map[string]*playbook.Clause{}
	for i := range pb.Clauses {
		byKey[pb.Clauses[i].Key] = &pb.Clauses[i]
	}
	for _, k := range required {
		c := byKey[k]
		if c == nil {
			t.Errorf("default playbook has no %s", k)
			continue
		}
		if len(c.Headings) < 3 || c.Severity == "" || c.Guidance == "" || len(strings.Fields(c.StandardText)) < 30 {
			t.Errorf("%s: want realistic standard text, 3+ heading synonyms, severity and guidance", k)
		}
		// A pin that the standard text itself does not satisfy would make
		// every contract a numeric deviation.
		stdTerms := extractTerms(cleanText(c.StandardText))
		for _, kt := range c.KeyTerms {
			pts := extractTerms(cleanText(kt.Text))
			if len(pts) == 0 {
				t.Errorf("%s.%s: %q has no key term in it", k, kt.Name, kt.Text)
			}
			for _, pt := range pts {
				if !hasTerm(stdTerms, pt) {
					t.Errorf("%s.%s: %s %q is not in the standard text", k, kt.Name, pt.Kind, pt.Value)
				}
			}
		}
	}
	if pb.Clauses[0].Key != "limitation_of_liability" {
		t.Errorf("clauses not in file order: first is %s", pb.Clauses[0].Key)
	}
}

// TestHeadingSynonymsDoNotCollide checks no heading of one default clause
// is also an exact heading of another: the location would be a coin toss.
func TestHeadingSynonymsDoNotCollide(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for i := range pb.Clauses {
		cs := prepareClause(&pb.Clauses[i], i)
		for _, syn := range cs.syns {
			k := strings.Join(syn, " ")
			if o, ok := owner[k]; ok && o != cs.clause.Key {
				t.Errorf("heading %q belongs to both %s and %s", k, o, cs.clause.Key)
			}
			owner[k] = cs.clause.Key
		}
	}
}
