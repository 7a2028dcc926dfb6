package reviewcorpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review"
	"github.com/airlock-dev/airlock/internal/docs/review/facts"
	"github.com/airlock-dev/airlock/internal/docs/review/facts/factseval"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// TestFactsOnCorpus scores the guest's facts extraction on the generated
// contracts' paragraphs (the text layer as extraction yields it): parties
// (name, role, signatory) and the effective date. The generator's
// preamble and signature blocks were not used to write the extractor.
//
// simulated_ocr is the same text with tesseract-like misreadings at the
// rate TestAccuracyOCR uses and paragraphs cut at page turns: a value
// counts only if it comes out exactly right, so a misread letter in a
// name is a miss (and a wrong value), and that party's role and
// signatory count as missed too.
func TestFactsOnCorpus(t *testing.T) {
	for _, run := range []struct {
		name  string
		rate  float64
		floor float64
	}{{"text", 0, 0.95}, {"simulated_ocr", 0.006, ocrFloor}} {
		t.Run(run.name, func(t *testing.T) { factsOnCorpus(t, run.rate, run.floor) })
	}
}

const ocrFloor = 0.6 // measured: 0.72 (signatory recall) and up

func factsOnCorpus(t *testing.T, ocrRate, floor float64) {
	cs, err := Generate(Options{Seed: 5, Contracts: 60})
	if err != nil {
		t.Fatal(err)
	}
	sc := newFactScore()
	for i, c := range cs {
		src := c.Paragraphs
		if ocrRate > 0 {
			src = Noisy(SplitAcrossPages(src), 5+int64(i), ocrRate)
		}
		paras := make([]facts.Paragraph, 0, len(src))
		for _, p := range src {
			paras = append(paras, facts.Paragraph{Text: p.Text, Pages: p.Pages})
		}
		sc.add(t, c.Truth, facts.Extract(paras), ocrRate == 0)
	}
	sc.report(t, floor)
}

// TestFactsOnScans is TestFactsOnCorpus on real scans: contracts written as
// image-only PDFs (half at 150 dpi, half at 200, skewed and noisy as
// TestPipelineEval writes them), read by the real extraction (poppler,
// tesseract) and reflowed as the guest does, then facts.Extract. Opt-in
// like the pipeline evaluation:
//
//	go test ./internal/docseval/reviewcorpus -run TestFactsOnScans -pipeline -v [-pipeline.scans 12] [-pipeline.cache DIR]
func TestFactsOnScans(t *testing.T) {
	if !*pipelineFull && os.Getenv("AIRLOCK_PIPELINE_EVAL") == "" {
		t.Skip("opt-in: -pipeline or AIRLOCK_PIPELINE_EVAL=1")
	}
	needPipelineTools(t)
	docs := pipelineCorpus(t, t.TempDir(), 5, 0, *pipelineScans, scanFlags())
	sc := newFactScore()
	for _, d := range docs {
		doc, _, err := extractCached(d.path, d.key, *pipelineCache)
		if err != nil {
			t.Fatalf("%s: %v", d.path, err)
		}
		var paras []facts.Paragraph
		for _, p := range review.FromExtract(doc) {
			paras = append(paras, facts.Paragraph{Text: p.Text, Pages: p.Pages})
		}
		sc.add(t, d.truth, facts.Extract(paras), true)
	}
	t.Logf("%d scans of seed 5", len(docs))
	sc.report(t, 0)
}

// TestFactFixturesOnScans scores every facts field (parties, key dates,
// defined terms and their problems, obligations and deadlines) on the
// hand-written fixture contracts of package facts written as scans (image
// only, at 200 and 150 dpi, skewed and noisy as -pipeline.* say), read by
// the real extraction (poppler, tesseract) and reflowed as the guest
// does. Opt-in like the pipeline evaluation:
//
//	go test ./internal/docseval/reviewcorpus -run TestFactFixturesOnScans -pipeline -v [-pipeline.cache DIR]
func TestFactFixturesOnScans(t *testing.T) {
	if !*pipelineFull && os.Getenv("AIRLOCK_PIPELINE_EVAL") == "" {
		t.Skip("opt-in: -pipeline or AIRLOCK_PIPELINE_EVAL=1")
	}
	needPipelineTools(t)
	fixtures, err := factseval.Load(filepath.Join("..", "..", "docs", "review", "facts", "testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, dpi := range []int{200, 150} {
		sc := factseval.Score{}
		for i, fx := range fixtures {
			s := scanFlags()
			s.DPI, s.Seed = dpi, int64(i+1)
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.pdf", fx.Name, dpi))
			writeFixtureScan(t, path, fx, s)
			doc, _, err := extractCached(path, fileKey(t, fx.Path, fmt.Sprintf("fixture-scan %+v", s)), *pipelineCache)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var paras []facts.Paragraph
			for _, p := range review.FromExtract(doc) {
				paras = append(paras, facts.Paragraph{Text: p.Text, Pages: p.Pages})
			}
			sc.Add(fmt.Sprintf("%s@%d", fx.Name, dpi), fx.Truth, facts.Extract(paras), t.Logf)
		}
		t.Logf("%d fixtures as scans at %d dpi:%s", len(fixtures), dpi, sc.Format())
	}
}

// writeFixtureScan typesets a fixture's paragraphs (its page marks as page
// breaks) and writes them as an image-only PDF degraded as s says.
func writeFixtureScan(t *testing.T, path string, fx factseval.Fixture, s testdocs.Scan) {
	t.Helper()
	var f testdocs.Flow
	page := 1
	for _, p := range fx.Paragraphs {
		if len(p.Pages) > 0 && p.Pages[0] > page {
			f.Blocks = append(f.Blocks, testdocs.Block{Kind: testdocs.PageBreak})
			page = p.Pages[0]
		}
		f.Blocks = append(f.Blocks, testdocs.Block{Kind: testdocs.Paragraph, Text: p.Text})
	}
	fixed, err := testdocs.LayoutFlow(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := testdocs.WriteScan(&b, fixed, s, testdocs.ScanPDF); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// factScore counts true and false positives and misses per fact field.
type factScore map[string]*struct{ tp, fp, fn int }

var factFields = []string{"parties.name", "parties.role", "parties.signatory", "key_dates.effective_date"}

func newFactScore() factScore {
	s := factScore{}
	for _, k := range factFields {
		s[k] = &struct{ tp, fp, fn int }{}
	}
	return s
}

// value scores one value: right, wrong (a false positive and a miss),
// made up, or missed.
func (sc factScore) value(k, got, want string) {
	s := sc[k]
	switch {
	case got == want && got != "":
		s.tp++
	case got != "" && want != "":
		s.fp++
		s.fn++
	case got != "":
		s.fp++
	case want != "":
		s.fn++
	}
}

// add scores one contract's facts against its truth; logMisses names
// missed and spurious parties.
func (sc factScore) add(t *testing.T, tr Truth, got facts.Facts, logMisses bool) {
	sc.value("key_dates.effective_date", got.KeyDates.EffectiveDate, tr.EffectiveDate)
	used := map[int]bool{}
	for _, w := range tr.Parties {
		var name, role, sig string
		for i, g := range got.Parties {
			if !used[i] && strings.EqualFold(g.Name, w.Name) {
				used[i] = true
				name, role, sig = g.Name, g.Role, g.Signatory
				break
			}
		}
		if name == "" && logMisses {
			t.Logf("%s: party %q missed (got %+v)", tr.Contract, w.Name, got.Parties)
		}
		sc.value("parties.name", name, w.Name)
		sc.value("parties.role", role, w.Role)
		sc.value("parties.signatory", sig, w.Signatory)
	}
	for i, g := range got.Parties {
		if !used[i] {
			sc["parties.name"].fp++
			if logMisses {
				t.Logf("%s: spurious party %q", tr.Contract, g.Name)
			}
		}
	}
}

// report logs the table and fails any field below floor.
func (sc factScore) report(t *testing.T, floor float64) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-26s %4s %4s %4s %9s %6s\n", "field", "tp", "fp", "fn", "precision", "recall")
	for _, k := range factFields {
		s := sc[k]
		p, r := frac(s.tp, s.tp+s.fp), frac(s.tp, s.tp+s.fn)
		fmt.Fprintf(&b, "%-26s %4d %4d %4d %9.2f %6.2f\n", k, s.tp, s.fp, s.fn, p, r)
		if p < floor || r < floor {
			t.Errorf("%s: precision %.2f, recall %.2f, below %.2f", k, p, r, floor)
		}
	}
	t.Log(b.String())
}

func frac(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
