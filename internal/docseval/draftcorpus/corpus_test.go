package draftcorpus

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
)

func generate(t *testing.T, split string, seed int64, n int) []Contract {
	t.Helper()
	cs, err := Generate(Options{Seed: seed, Contracts: n, Split: split})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestGenerateDeterministic(t *testing.T) {
	a, _ := json.Marshal(generate(t, SplitTune, 4, 4))
	b, _ := json.Marshal(generate(t, SplitTune, 4, 4))
	c, _ := json.Marshal(generate(t, SplitTune, 5, 4))
	if string(a) != string(b) {
		t.Error("the same seed gave two corpora")
	}
	if string(a) == string(c) {
		t.Error("two seeds gave the same corpus")
	}
	if _, err := Generate(Options{Seed: 1, Contracts: 1, Split: "all"}); err == nil {
		t.Error("an unknown split was accepted")
	}
}

// TestHalvesShareNoWording: no heading, wording, addition, companion or
// filler of one half is in the other, so a contract of the held-out half
// has no text the analysis was tuned on but the standard texts.
func TestHalvesShareNoWording(t *testing.T) {
	m, err := loadMaterial()
	if err != nil {
		t.Fatal(err)
	}
	texts := func(split string) map[string]bool {
		out := map[string]bool{}
		add := func(ss ...string) {
			for _, s := range ss {
				out[s] = true
			}
		}
		for _, c := range m.Clauses {
			add(c.Headings.of(split)...)
			add(c.Reworded.of(split)...)
			add(c.RewordedNumeric.of(split)...)
			for _, a := range c.Additions.of(split) {
				add(a.Text)
			}
			add(c.Lookalike.of(split).Heading)
			add(c.Lookalike.of(split).Text...)
		}
		for _, g := range m.Groups {
			add(g.Headings.of(split)...)
			add(g.Before.of(split)...)
			add(g.After.of(split)...)
		}
		add(m.General.Headings.of(split)...)
		for _, c := range m.General.Companions.of(split) {
			add(c.Title, c.Text)
		}
		for _, f := range m.Fillers.of(split) {
			add(f.Heading)
			add(f.Text...)
		}
		return out
	}
	tune := texts(SplitTune)
	for s := range texts(SplitHeldout) {
		if tune[s] {
			t.Errorf("in both halves: %q", s)
		}
	}
}

// TestTruthMatchesText checks the truth against the text as written,
// without the analyser.
func TestTruthMatchesText(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	std := map[string]string{}
	for _, c := range pb.Clauses {
		std[c.Key] = strings.Join(strings.Fields(c.StandardText), " ")
	}
	seen := map[string]int{}
	for _, split := range []string{SplitTune, SplitHeldout} {
		for _, c := range generate(t, split, 11, 40) {
			seen[c.Truth.Layout]++
			doc := strings.Join(c.text, " ")
			if len(c.Truth.Clauses) != len(pb.Clauses) {
				t.Fatalf("%s: %d truths for %d clauses", c.Name, len(c.Truth.Clauses), len(pb.Clauses))
			}
			for _, ct := range c.Truth.Clauses {
				seen[ct.Status]++
				seen[ct.Placement]++
				seen[strings.SplitN(ct.Variant, ":", 2)[0]]++
				first := strings.Join(strings.Fields(std[ct.Clause])[:8], " ")
				switch {
				case ct.Status == reviewresult.StatusMissing:
					if strings.Contains(doc, first) || ct.Placement != "" {
						t.Errorf("%s %s: MISSING but its text is there", c.Name, ct.Clause)
					}
				case ct.Variant == VariantVerbatim:
					if !strings.Contains(doc, std[ct.Clause]) {
						t.Errorf("%s %s: verbatim but not found word for word", c.Name, ct.Clause)
					}
				case ct.Status == reviewresult.StatusDeviation && ct.Variant != VariantAddition:
					if strings.Contains(doc, std[ct.Clause]) {
						t.Errorf("%s %s: DEVIATION but the standard text is there verbatim", c.Name, ct.Clause)
					}
				}
				if ct.Variant == VariantNumeric {
					for _, f := range ct.Found {
						if !strings.Contains(doc, f) {
							t.Errorf("%s %s: edited term %q not in the text", c.Name, ct.Clause, f)
						}
					}
				}
			}
		}
	}
	for _, want := range []string{LayoutNumbered, LayoutTwoColumn, LayoutSide, LayoutFootnoted,
		PlacedOwn, PlacedCombined, PlacedCombinedRunIn, PlacedGeneralTitled, PlacedGeneralPlain,
		VariantVerbatim, VariantTrivial, VariantNumeric, VariantReworded, VariantRewordedNumeric,
		VariantAddition, VariantMissing, VariantLookalike} {
		if seen[want] == 0 {
			t.Errorf("80 contracts without a single %s", want)
		}
	}
}

// TestNumericEditsApply: every key-term edit of the material finds its
// text in the standard, so a numeric variant is never the standard text.
func TestNumericEditsApply(t *testing.T) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadMaterial()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pb.Clauses {
		std := strings.Join(strings.Fields(c.StandardText), " ")
		cm := m.Clauses[c.Key]
		for _, split := range []string{SplitTune, SplitHeldout} {
			for _, e := range cm.Numeric.of(split) {
				for _, pair := range e {
					if !strings.Contains(std, pair[0]) {
						t.Errorf("%s %s: %q is not in the standard text", c.Key, split, pair[0])
					}
				}
			}
		}
		for _, term := range cm.Terms {
			if !strings.Contains(std, term) {
				t.Errorf("%s: term %q is not in the standard text", c.Key, term)
			}
		}
	}
}
