package draftcorpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/review"
	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// The pipeline evaluation runs the real extraction (poppler and tesseract
// on this host) and the real analysis over this corpus's PDFs, as
// cmd/airlock-docs' review command chains them, text PDFs and scans
// scored apart, for the tune half, the held-out half or both. The full
// run is opt-in:
//
//	go test ./internal/docseval/draftcorpus -run TestDraftPipelineEval -draft.pipeline -v \
//	    -draft.split heldout -draft.text 30 -draft.scans 12
//
// -draft.cache DIR keeps extracted documents between runs (clear it when
// extraction or the generator changes), -draft.dump DIR writes each
// document's paragraphs and result.
var (
	draftPipeline = flag.Bool("draft.pipeline", false, "run the full draft-corpus pipeline evaluation (also AIRLOCK_DRAFT_EVAL=1)")
	draftSplit    = flag.String("draft.split", "tune", "half of the material: tune, heldout or both")
	draftText     = flag.Int("draft.text", 30, "text contracts per half")
	draftScans    = flag.Int("draft.scans", 12, "scanned contracts per half (half at 150 dpi, half at 200)")
	draftSeed     = flag.Int64("draft.seed", 1, "seed of the corpus")
	draftJobs     = flag.Int("draft.j", 2, "documents extracted at once")
	draftCache    = flag.String("draft.cache", "", "cache extracted documents here")
	draftDump     = flag.String("draft.dump", "", "write each document's paragraphs and result here")
	draftMistakes = flag.Int("draft.mistakes", 60, "mistakes listed per report")
	draftDir      = flag.String("draft.dir", "", "write the corpus PDFs here (default: a temporary directory)")
)

// scanDefaults is the degradation airlock corpus review uses.
var scanDefaults = testdocs.Scan{Skew: 0.8, Noise: 0.04, Blur: 0.6}

type evalDoc struct {
	path  string
	group string // "text", "scan-150", "scan-200"
	truth reviewcorpus.Truth
	key   string // names the document in the extraction cache
}

// evalCorpus writes nText contracts of a half as text PDFs and the first
// nScan also as scans, alternately at 200 and 150 dpi.
func evalCorpus(t *testing.T, dir, split string, seed int64, nText, nScan int) []evalDoc {
	t.Helper()
	cs, err := Generate(Options{Seed: seed, Contracts: max(nText, nScan), Split: split})
	if err != nil {
		t.Fatal(err)
	}
	var docs []evalDoc
	paths, err := WritePDFs(filepath.Join(dir, split, "text"), cs[:nText], PDFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		docs = append(docs, evalDoc{path: p, group: "text", truth: cs[i].Truth, key: fileKey(t, p, "")})
	}
	for i := range nScan {
		s := scanDefaults
		s.DPI, s.Seed = []int{200, 150}[i%2], seed+int64(i)
		group := fmt.Sprintf("scan-%d", s.DPI)
		paths, err := WritePDFs(filepath.Join(dir, split, group), cs[i:i+1], PDFOptions{Scans: 1, Scan: s})
		if err != nil {
			t.Fatal(err)
		}
		tr := cs[i].Truth
		tr.Contract += "-scan"
		docs = append(docs, evalDoc{path: paths[1], group: group, truth: tr, key: fileKey(t, paths[0], fmt.Sprintf("%+v", s))})
	}
	return docs
}

func fileKey(t *testing.T, path, extra string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(b, extra...))
	return hex.EncodeToString(sum[:16])
}

// runPipeline extracts, reflows and analyses every document, jobs at once.
func runPipeline(t *testing.T, docs []evalDoc, jobs int, cache, dump string) map[string]*review.Result {
	t.Helper()
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*review.Result, len(docs))
	errs := make([]error, len(docs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for i := range work {
				out[i], errs[i] = reviewPDF(docs[i], pb, cache, dump)
			}
		})
	}
	for i := range docs {
		work <- i
	}
	close(work)
	wg.Wait()
	res := map[string]*review.Result{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", docs[i].path, err)
		}
		res[docs[i].truth.Contract] = out[i]
	}
	return res
}

// reviewPDF is cmd/airlock-docs' review command without the envelope:
// Extract with default options, review.FromExtract, Analyze.
func reviewPDF(d evalDoc, pb *playbook.Playbook, cache, dump string) (*review.Result, error) {
	doc, err := extractCached(d.path, d.key, cache)
	if err != nil {
		return nil, err
	}
	paras := review.FromExtract(doc)
	res, err := review.Analyze(paras, pb)
	if err != nil || dump == "" {
		return res, err
	}
	return res, dumpOutcome(dump, d, paras, res)
}

func extractCached(path, key, cache string) (*extract.Document, error) {
	file := ""
	if cache != "" {
		file = filepath.Join(cache, key+".json")
		if b, err := os.ReadFile(file); err == nil {
			var doc extract.Document
			if json.Unmarshal(b, &doc) == nil {
				return &doc, nil
			}
		}
	}
	doc, err := extract.Extract(context.Background(), path, extract.Options{})
	if err != nil || file == "" {
		return doc, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return doc, os.WriteFile(file, b, 0o644)
}

func dumpOutcome(dir string, d evalDoc, paras []review.Paragraph, res *review.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, p := range paras {
		fmt.Fprintf(&b, "[%v] %s\n", p.Pages, p.Text)
	}
	stem := filepath.Join(dir, d.truth.Contract)
	if err := os.WriteFile(stem+".paragraphs.txt", []byte(b.String()), 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(stem+".result.json", j, 0o644)
}

// score reports the documents of the groups starting with prefix.
func score(t *testing.T, docs []evalDoc, res map[string]*review.Result, prefix string) *reviewcorpus.Report {
	t.Helper()
	var truth []reviewcorpus.Truth
	for _, d := range docs {
		if strings.HasPrefix(d.group, prefix) {
			truth = append(truth, d.truth)
		}
	}
	rep, err := reviewcorpus.Eval(truth, res)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func needTools(t *testing.T) {
	t.Helper()
	for _, n := range []string{"pdfinfo", "pdftotext", "pdftoppm", "tesseract"} {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not on PATH: the real pipeline cannot run here", n)
		}
	}
}

// check fails t unless a report meets the targets: the accuracy, every
// numeric change caught, no false MATCH.
func check(t *testing.T, name string, rep *reviewcorpus.Report, minAcc float64) {
	t.Helper()
	for _, s := range rep.Shortfalls(minAcc) {
		t.Errorf("%s: %s", name, s)
	}
}

// TestDraftPipelineEval is the full evaluation (opt-in, minutes).
func TestDraftPipelineEval(t *testing.T) {
	if !*draftPipeline && os.Getenv("AIRLOCK_DRAFT_EVAL") == "" {
		t.Skip("the draft-corpus pipeline evaluation is opt-in: -draft.pipeline or AIRLOCK_DRAFT_EVAL=1")
	}
	needTools(t)
	splits := []string{*draftSplit}
	if *draftSplit == "both" {
		splits = []string{SplitTune, SplitHeldout}
	}
	dir := *draftDir
	if dir == "" {
		dir = t.TempDir()
	}
	for _, split := range splits {
		docs := evalCorpus(t, dir, split, *draftSeed, *draftText, *draftScans)
		res := runPipeline(t, docs, *draftJobs, *draftCache, *draftDump)
		for _, g := range []struct {
			prefix string
			minAcc float64
		}{{"text", 0.97}, {"scan", 0.95}, {"scan-150", 0}, {"scan-200", 0}} {
			rep := score(t, docs, res, g.prefix)
			t.Logf("%s half, %s, seed %d:\n%s", split, g.prefix, *draftSeed, rep.Format(*draftMistakes))
			if g.minAcc > 0 {
				check(t, split+" "+g.prefix, rep, g.minAcc)
			}
		}
		logByLayout(t, docs, res)
	}
}

// logByLayout logs the status accuracy of each layout, text and scans.
func logByLayout(t *testing.T, docs []evalDoc, res map[string]*review.Result) {
	t.Helper()
	var b strings.Builder
	for _, group := range []string{"text", "scan"} {
		for _, lay := range []string{LayoutNumbered, LayoutTwoColumn, LayoutSide, LayoutFootnoted} {
			var truth []reviewcorpus.Truth
			for _, d := range docs {
				if strings.HasPrefix(d.group, group) && d.truth.Layout == lay {
					truth = append(truth, d.truth)
				}
			}
			if len(truth) == 0 {
				continue
			}
			rep, err := reviewcorpus.Eval(truth, res)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%-5s %-22s %2d contracts  %5.1f%%  numeric %d/%d  false MATCH %d\n", group, lay, rep.Contracts,
				100*rep.Accuracy(), rep.NumericCaught, rep.NumericTotal, rep.FalseMatch)
		}
	}
	t.Logf("by layout:\n%s", b.String())
}
