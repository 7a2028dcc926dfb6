package reviewcorpus

import (
	"flag"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs/review"
)

var (
	corpusSize = flag.Int("corpus.n", 80, "contracts in the accuracy corpus")
	corpusSeed = flag.Int64("corpus.seed", 1, "seed of the accuracy corpus")
	corpusOut  = flag.String("corpus.out", "", "write the corpus (flow, paragraphs, truth) to this directory")
)

// evalCorpus generates the corpus, analyses each contract's paragraphs
// (optionally through OCR noise) and scores the results.
func evalCorpus(t *testing.T, ocrRate float64) *Report {
	t.Helper()
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Generate(Options{Seed: *corpusSeed, Contracts: *corpusSize, Playbook: pb})
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]*review.Result{}
	var truth []Truth
	for i := range cs {
		c := &cs[i]
		if *corpusOut != "" {
			if err := WriteContract(*corpusOut, c); err != nil {
				t.Fatal(err)
			}
		}
		paras := c.Paragraphs
		if ocrRate > 0 {
			// A scan's extraction is the weaker one: OCR errors, and
			// paragraphs not re-joined across page turns.
			paras = Noisy(SplitAcrossPages(paras), *corpusSeed+int64(i), ocrRate)
		}
		res, err := review.Analyze(asReview(paras), pb)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		results[c.Name] = res
		truth = append(truth, c.Truth)
	}
	rep, err := Eval(truth, results)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAccuracyClean(t *testing.T) {
	rep := evalCorpus(t, 0)
	t.Logf("clean paragraphs, seed %d:\n%s", *corpusSeed, rep.Format(40))
	if rep.Contracts < 60 {
		t.Errorf("corpus of %d contracts, want at least 60", rep.Contracts)
	}
	for _, s := range rep.Shortfalls(0.97) {
		t.Error(s)
	}
}

func TestAccuracyOCR(t *testing.T) {
	rep := evalCorpus(t, 0.006)
	t.Logf("OCR-noisy paragraphs (0.6%% character errors), seed %d:\n%s", *corpusSeed, rep.Format(40))
	if acc := rep.Accuracy(); acc < 0.95 {
		t.Errorf("status accuracy %.3f under OCR noise, want >= 0.95", acc)
	}
	// Under noise the analysis must err towards DEVIATION, never MATCH.
	if rep.FalseMatch != 0 {
		t.Errorf("%d false MATCH findings under OCR noise, want none", rep.FalseMatch)
	}
}
