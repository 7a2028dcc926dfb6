package reviewcorpus

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
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/review"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// The pipeline evaluation runs the real extraction (poppler and tesseract
// on this host) and the real analysis over generated PDFs,
// exactly as cmd/airlock-docs' review command chains them, and scores
// text PDFs and scans separately. Native tesseract is several times
// faster than in a guest, so this is where extraction and review are
// tuned; the VM eval (airlock eval review) confirms.
//
// By default only a small fixed subset runs (TestPipelineSmoke), so a
// regression anywhere in the chain fails the suite. The full run is
// opt-in:
//
//	go test ./internal/docseval/reviewcorpus -run TestPipelineEval -pipeline -v
//	AIRLOCK_PIPELINE_EVAL=1 go test ./internal/docseval/reviewcorpus -run TestPipelineEval -v
//
// with -pipeline.quick for a quicker look, -pipeline.cache DIR to keep
// extracted documents between runs while only reflow or analysis change,
// -pipeline.dump DIR to see each document's paragraphs beside the ones
// extraction should give, and -pipeline.skew/noise/blur/jpeg for harsher
// scans. The before/after figures of the report came from
//
//	go test ./internal/docseval/reviewcorpus -run TestPipelineEval -pipeline -v \
//	    -pipeline.seed 1 -pipeline.text 30 -pipeline.scans 14 -pipeline.j 1
var (
	pipelineFull  = flag.Bool("pipeline", false, "run the full real-pipeline evaluation (also AIRLOCK_PIPELINE_EVAL=1)")
	pipelineQuick = flag.Bool("pipeline.quick", false, "full evaluation at a smaller size: 8 text contracts, 4 scans")
	pipelineText  = flag.Int("pipeline.text", 24, "text contracts in the full evaluation")
	pipelineScans = flag.Int("pipeline.scans", 12, "scanned contracts in the full evaluation (half at 150 dpi, half at 200)")
	pipelineSeed  = flag.Int64("pipeline.seed", 7, "seed of the pipeline corpus")
	pipelineJobs  = flag.Int("pipeline.j", 2, "documents extracted at once")
	pipelineCache = flag.String("pipeline.cache", "", "cache extracted documents here (clear it after changing extraction or the generator)")
	pipelineDump  = flag.String("pipeline.dump", "", "write each document's paragraphs (got and want) and result here")
	pipelineDir   = flag.String("pipeline.dir", "", "write the corpus PDFs here (default: a temporary directory)")
	// The scans' degradation; the defaults are airlock corpus review's.
	pipelineSkew  = flag.Float64("pipeline.skew", 0.8, "scan skew, degrees")
	pipelineNoise = flag.Float64("pipeline.noise", 0.04, "scan noise, 0..1")
	pipelineBlur  = flag.Float64("pipeline.blur", 0.6, "scan blur radius, pixels")
	pipelineJPEG  = flag.Int("pipeline.jpeg", 0, "scan JPEG quality (0: lossless)")
)

// scanDefaults is the degradation airlock corpus review uses.
var scanDefaults = testdocs.Scan{Skew: 0.8, Noise: 0.04, Blur: 0.6}

// scanFlags is the degradation the flags ask for.
func scanFlags() testdocs.Scan {
	return testdocs.Scan{Skew: *pipelineSkew, Noise: *pipelineNoise, Blur: *pipelineBlur, JPEG: *pipelineJPEG}
}

// pipelineDoc is one PDF of the evaluation.
type pipelineDoc struct {
	path  string
	group string // "text", "scan-150", "scan-200"
	truth Truth
	want  []Paragraph // what extraction should give
	// key names the document in the extraction cache. Scans are written
	// with the same pixels each time but not byte for byte (the image
	// stream's compression varies), so a scan is keyed by its contract's
	// text PDF and its scan settings.
	key string
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

// pipelineCorpus writes nText contracts as text PDFs and the first nScan
// of them also as scans, alternately at 200 and 150 dpi.
func pipelineCorpus(t *testing.T, dir string, seed int64, nText, nScan int, scan testdocs.Scan) []pipelineDoc {
	t.Helper()
	cs, err := Generate(Options{Seed: seed, Contracts: max(nText, nScan)})
	if err != nil {
		t.Fatal(err)
	}
	var docs []pipelineDoc
	paths, err := WritePDFs(filepath.Join(dir, "text"), cs[:nText], PDFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		docs = append(docs, pipelineDoc{path: p, group: "text", truth: cs[i].Truth, want: cs[i].Paragraphs, key: fileKey(t, p, "")})
	}
	for i := range nScan {
		s := scan
		s.DPI = []int{200, 150}[i%2]
		s.Seed = seed + int64(i)
		group := fmt.Sprintf("scan-%d", s.DPI)
		paths, err := WritePDFs(filepath.Join(dir, group), cs[i:i+1], PDFOptions{Scans: 1, Scan: s})
		if err != nil {
			t.Fatal(err)
		}
		tr := cs[i].Truth
		tr.Contract += "-scan"
		key := fileKey(t, paths[0], fmt.Sprintf("%+v", s))
		docs = append(docs, pipelineDoc{path: paths[1], group: group, truth: tr, want: cs[i].Paragraphs, key: key})
	}
	return docs
}

// pipelineOutcome is what the pipeline made of one document.
type pipelineOutcome struct {
	doc      pipelineDoc
	res      *review.Result
	ocrPages int
	ocrTime  time.Duration
	cached   bool
	// paraRight counts the wanted paragraphs extraction gave exactly
	// (spacing aside), of paraWant.
	paraRight, paraWant int
}

// runPipeline extracts, reflows and analyses every document, jobs at once.
func runPipeline(t *testing.T, docs []pipelineDoc, jobs int, cache, dump string) []pipelineOutcome {
	t.Helper()
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]pipelineOutcome, len(docs))
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
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", docs[i].path, err)
		}
	}
	return out
}

// reviewPDF is cmd/airlock-docs' review command without the envelope:
// Extract with default options, review.FromExtract, Analyze.
func reviewPDF(d pipelineDoc, pb *playbook.Playbook, cache, dump string) (pipelineOutcome, error) {
	o := pipelineOutcome{doc: d}
	doc, cached, err := extractCached(d.path, d.key, cache)
	if err != nil {
		return o, err
	}
	o.cached = cached
	o.ocrPages, o.ocrTime = doc.OCRPages(), doc.Timings.OCR
	rparas := review.FromExtract(doc)
	paras := make([]Paragraph, 0, len(rparas))
	for _, p := range rparas {
		paras = append(paras, Paragraph{Text: p.Text, Pages: p.Pages})
	}
	o.paraRight, o.paraWant = paragraphsRecovered(d.want, paras)
	if o.res, err = review.Analyze(rparas, pb); err != nil {
		return o, err
	}
	if dump != "" {
		err = dumpOutcome(dump, d, paras, o.res)
	}
	return o, err
}

// paragraphsRecovered counts the wanted paragraphs found verbatim among
// the extracted ones: a measure of reflow (joins, breaks, hyphens).
func paragraphsRecovered(want, got []Paragraph) (int, int) {
	have := map[string]bool{}
	for _, p := range got {
		have[strings.Join(strings.Fields(p.Text), " ")] = true
	}
	n := 0
	for _, p := range want {
		if have[strings.Join(strings.Fields(p.Text), " ")] {
			n++
		}
	}
	return n, len(want)
}

// extractCached runs extract.Extract, or reads its earlier output for the
// same document (key) from cache.
func extractCached(path, key, cache string) (*extract.Document, bool, error) {
	var file string
	if cache != "" && key != "" {
		file = filepath.Join(cache, key+".json")
		if b, err := os.ReadFile(file); err == nil {
			var doc extract.Document
			if err := json.Unmarshal(b, &doc); err == nil {
				return &doc, true, nil
			}
		}
	}
	doc, err := extract.Extract(context.Background(), path, extract.Options{})
	if err != nil || file == "" {
		return doc, false, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, false, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, false, err
	}
	return doc, false, os.WriteFile(file, b, 0o644)
}

func dumpOutcome(dir string, d pipelineDoc, paras []Paragraph, res *review.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stem := filepath.Join(dir, d.truth.Contract)
	var b, w strings.Builder
	for _, p := range paras {
		fmt.Fprintf(&b, "[%v] %s\n", p.Pages, p.Text)
	}
	for _, p := range d.want {
		fmt.Fprintf(&w, "[%v] %s\n", p.Pages, p.Text)
	}
	if err := os.WriteFile(stem+".paragraphs.txt", []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(stem+".want.txt", []byte(w.String()), 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(stem+".result.json", j, 0o644)
}

// pipelineReport scores the outcomes of one group (all groups starting
// with prefix).
func pipelineReport(t *testing.T, outs []pipelineOutcome, prefix string) (*Report, time.Duration, int) {
	t.Helper()
	var truth []Truth
	results := map[string]*review.Result{}
	var ocr time.Duration
	pages, right, want := 0, 0, 0
	for _, o := range outs {
		if !strings.HasPrefix(o.doc.group, prefix) {
			continue
		}
		right, want = right+o.paraRight, want+o.paraWant
		truth = append(truth, o.doc.truth)
		results[o.doc.truth.Contract] = o.res
		if !o.cached {
			ocr += o.ocrTime
			pages += o.ocrPages
		}
	}
	rep, err := Eval(truth, results)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: paragraphs recovered verbatim %d/%d", prefix, right, want)
	return rep, ocr, pages
}

// checkPipeline fails t unless the report meets the targets.
func checkPipeline(t *testing.T, name string, rep *Report, minAcc float64) {
	t.Helper()
	for _, s := range rep.Shortfalls(minAcc) {
		t.Errorf("%s: %s", name, s)
	}
}

func needPipelineTools(t *testing.T) {
	t.Helper()
	for _, n := range []string{"pdfinfo", "pdftotext", "pdftoppm", "tesseract"} {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not on PATH: the real pipeline cannot run here", n)
		}
	}
}

func logPipeline(t *testing.T, name string, rep *Report, ocr time.Duration, pages int) {
	t.Helper()
	per := "-"
	if pages > 0 {
		per = (ocr / time.Duration(pages)).Round(time.Millisecond).String()
	}
	t.Logf("%s: OCR %d pages, %s per page\n%s", name, pages, per, rep.Format(60))
}

// TestPipelineEval is the full evaluation (opt-in, minutes).
func TestPipelineEval(t *testing.T) {
	if !*pipelineFull && !*pipelineQuick && os.Getenv("AIRLOCK_PIPELINE_EVAL") == "" {
		t.Skip("the full pipeline evaluation is opt-in: -pipeline or AIRLOCK_PIPELINE_EVAL=1")
	}
	needPipelineTools(t)
	nText, nScan := *pipelineText, *pipelineScans
	if *pipelineQuick {
		nText, nScan = 8, 4
	}
	dir := *pipelineDir
	if dir == "" {
		dir = t.TempDir()
	}
	docs := pipelineCorpus(t, dir, *pipelineSeed, nText, nScan, scanFlags())
	start := time.Now()
	outs := runPipeline(t, docs, *pipelineJobs, *pipelineCache, *pipelineDump)
	t.Logf("seed %d: %d text PDFs, %d scans in %v", *pipelineSeed, nText, nScan, time.Since(start).Round(time.Second))
	for _, g := range []struct {
		prefix string
		minAcc float64
	}{{"text", 0.97}, {"scan", 0.95}, {"scan-150", 0}, {"scan-200", 0}} {
		rep, ocr, pages := pipelineReport(t, outs, g.prefix)
		logPipeline(t, g.prefix, rep, ocr, pages)
		if g.minAcc > 0 {
			checkPipeline(t, g.prefix, rep, g.minAcc)
		}
	}
}

// TestPipelineSmoke runs the real chain on a fixed small subset: two text
// contracts and each as a scan, one at 150 dpi and one at 200. The
// thresholds are the targets: a regression in extraction, reflow or
// analysis shows here first.
func TestPipelineSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tesseract")
	}
	needPipelineTools(t)
	dir := t.TempDir()
	cs, err := Generate(Options{Seed: 3, Contracts: 2})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := WritePDFs(dir, cs, PDFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []pipelineDoc
	for i, p := range paths {
		docs = append(docs, pipelineDoc{path: p, group: "text", truth: cs[i].Truth})
	}
	for i, dpi := range []int{200, 150} {
		s := scanDefaults
		s.DPI, s.Seed = dpi, 3
		sp, err := WritePDFs(filepath.Join(dir, fmt.Sprint(dpi)), cs[i:i+1], PDFOptions{Scans: 1, Scan: s})
		if err != nil {
			t.Fatal(err)
		}
		tr := cs[i].Truth
		tr.Contract += "-scan"
		docs = append(docs, pipelineDoc{path: sp[1], group: fmt.Sprintf("scan-%d", dpi), truth: tr})
	}
	outs := runPipeline(t, docs, 2, "", "")
	for _, g := range []string{"text", "scan"} {
		rep, ocr, pages := pipelineReport(t, outs, g)
		logPipeline(t, g, rep, ocr, pages)
		checkPipeline(t, g, rep, 0.95)
	}
}
