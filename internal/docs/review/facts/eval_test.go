package facts_test

import (
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/facts"
	"github.com/airlock-dev/airlock/internal/docs/review/facts/factseval"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// TestEvalFacts prints precision and recall per field over the fixtures
// and holds them at floors below what was measured. The patterns were
// written against them (the last two fixtures were first scored untuned,
// see the README), so read these as regression floors, not as a forecast.
func TestEvalFacts(t *testing.T) {
	for _, set := range []struct {
		dir   string
		floor float64
	}{{"fixtures", 0.95}} {
		t.Run(set.dir, func(t *testing.T) {
			fixtures, err := factseval.Load(filepath.Join("testdata", set.dir))
			if err != nil {
				t.Fatal(err)
			}
			sc := factseval.Score{}
			for _, fx := range fixtures {
				got := facts.Extract(fx.Paragraphs)
				res := result.Result{}
				got.Into(&res)
				if err := res.Validate(); err != nil {
					t.Errorf("%s: the extracted facts do not validate: %v", fx.Name, err)
				}
				sc.Add(fx.Name, fx.Truth, got, t.Logf)
			}
			t.Log(sc.Format())
			for _, b := range sc.Below(set.floor) {
				t.Error(b)
			}
		})
	}
}
