//go:build unix

package invoicecorpus_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus/invoicesim"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus/hostread"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// The rendered eval is `airlock corpus invoice` + `airlock eval invoice`
// without the VMs: every case is written as its render mode says
// (invoicecorpus.WriteDocument: text PDF, image-only scan PDF, PNG/JPEG photo,
// fax TIFF), read by the real extract.Extract (poppler, deskew,
// tesseract), ink-checked like cmd/airlock-docs, extracted with
// invoice.Extract and judged by invoicecheck in corpus order, with the
// host's clamped fields scored as the real eval scores them.
//
//	INVOICE_CORPUS_RENDERED=quick   63 invoices of seed 1
//	INVOICE_CORPUS_RENDERED=full    seeds 1..3, 105 invoices each (123 read by OCR)
//	INVOICE_CORPUS_RENDERED=<n>     n invoices of seed 1 (INVOICE_CORPUS_SEEDS=1,2 for others)
//	INVOICE_CORPUS_REAL_CACHE=DIR   keep extract.Extract's reading of OCR cases,
//	                                so extractor changes re-score in seconds
//	INVOICE_CORPUS_TEXT=sim         read text-layer cases with invoicesim.Simulate (they
//	                                still fill the history), for fast OCR iteration
//	INVOICE_CORPUS_DEBUG=1          log every wrong field with the words OCR read near it

// renderedCase is one case read through the real tools.
type renderedCase struct {
	doc     *extract.Document
	renders map[int]*hidden.Render
	offPage map[int][]extract.Word
	// ocrPages and ocrTime are what extract.Extract spent on OCR (zero
	// for a cached or simulated reading).
	ocrPages int
	ocrTime  time.Duration
}

func TestRenderedEval(t *testing.T) {
	n, seeds := renderedPlan(t, os.Getenv("INVOICE_CORPUS_RENDERED"))
	needGuestTools(t)
	var scores []*invoicecorpus.Scores
	for _, seed := range seeds {
		c, err := invoicecorpus.Generate(seed, n)
		if err != nil {
			t.Fatal(err)
		}
		outs := runRendered(t, c, readRendered(t, c, os.Getenv("INVOICE_CORPUS_REAL_CACHE")))
		scores = append(scores, evalModes(fmt.Sprintf("seed %d", seed), c.Cases, outs)...)
	}
	for _, s := range scores {
		t.Log("\n" + s.Table())
		if s.MisreadApprovals != 0 || s.TrapApprovals != 0 {
			t.Errorf("%s: %d approvals of misread amounts, %d despite a trap", s.Name, s.MisreadApprovals, s.TrapApprovals)
		}
	}
}

// renderedPlan reads the opt-in variable: how many invoices, which seeds.
func renderedPlan(t *testing.T, v string) (int, []int64) {
	seeds := []int64{1}
	if env := os.Getenv("INVOICE_CORPUS_SEEDS"); env != "" {
		seeds = nil
		for _, s := range strings.Split(env, ",") {
			k, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				t.Fatalf("INVOICE_CORPUS_SEEDS=%q: want seeds separated by commas", env)
			}
			seeds = append(seeds, k)
		}
	}
	switch v {
	case "":
		t.Skip("set INVOICE_CORPUS_RENDERED=quick|full|<invoices> to run")
	case "quick":
		return 63, seeds
	case "full":
		return 105, []int64{1, 2, 3}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("INVOICE_CORPUS_RENDERED=%q: want quick, full or a number", v)
	}
	return n, seeds
}

func needGuestTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"pdfinfo", "pdftotext", "pdftoppm", "gs", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	out, err := exec.Command("tesseract", "--list-langs").CombinedOutput()
	if err != nil {
		t.Skipf("tesseract --list-langs: %v", err)
	}
	have := strings.Fields(string(out))
	for _, l := range strings.FieldsFunc(invoice.OCRLanguages, func(r rune) bool { return r == '+' || r == ',' }) {
		if !slices.Contains(have, l) {
			t.Skipf("tesseract has no %q model (the guest templates do; scripts/setup.sh installs it)", l)
		}
	}
}

func isOCR(c *invoicecorpus.Case) bool { return c.Render.Mode.OCR() }

// evalModes scores the text-layer cases, the OCR cases together, and
// each OCR render mode.
func evalModes(name string, cases []invoicecorpus.Case, outs []invoicecorpus.Outcome) []*invoicecorpus.Scores {
	byMode := map[invoicecorpus.Mode][]int{}
	var ocr []int
	for i := range cases {
		m := cases[i].Render.Mode
		byMode[m] = append(byMode[m], i)
		if m.OCR() {
			ocr = append(ocr, i)
		}
	}
	pick := func(label string, idx []int) *invoicecorpus.Scores {
		var cs []invoicecorpus.Case
		var os []invoicecorpus.Outcome
		for _, i := range idx {
			cs, os = append(cs, cases[i]), append(os, outs[i])
		}
		return invoicecorpus.Eval(fmt.Sprintf("%s: %s", name, label), cs, os, isOCR)
	}
	out := []*invoicecorpus.Scores{pick("text-layer PDFs", byMode[invoicecorpus.ModeTextPDF]), pick("scans, photos and faxes (OCR)", ocr)}
	for _, m := range []invoicecorpus.Mode{invoicecorpus.ModeScanPDF, invoicecorpus.ModePhotoPNG, invoicecorpus.ModePhotoJPEG, invoicecorpus.ModeFaxTIFF} {
		if len(byMode[m]) > 0 {
			out = append(out, pick(string(m), byMode[m]))
		}
	}
	return out
}

// readRendered writes and extracts every case, two at a time (the guest
// tools are single-threaded; this host has two cores).
func readRendered(t *testing.T, c *invoicecorpus.Corpus, cache string) []renderedCase {
	t.Helper()
	out := make([]renderedCase, len(c.Cases))
	errs := make([]error, len(c.Cases))
	dir := t.TempDir()
	simText := os.Getenv("INVOICE_CORPUS_TEXT") == "sim"
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = readCase(context.Background(), &c.Cases[i], dir, cache, simText)
			}
		}()
	}
	for i := range c.Cases {
		next <- i
	}
	close(next)
	wg.Wait()
	pages, spent := 0, time.Duration(0)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", c.Cases[i].ID, err)
		}
		pages, spent = pages+out[i].ocrPages, spent+out[i].ocrTime
	}
	if pages > 0 {
		t.Logf("seed %d: OCR read %d pages in %.1f s, %.2f s per page (two at a time)", c.Seed, pages, spent.Seconds(), spent.Seconds()/float64(pages))
	}
	return out
}

// readCase renders one case to its file and reads it as the guest does.
func readCase(ctx context.Context, cs *invoicecorpus.Case, dir, cache string, simText bool) (renderedCase, error) {
	if simText && !cs.Render.Mode.OCR() {
		doc, renders, _ := invoicesim.Simulate(cs, invoicesim.SimOptions{})
		return renderedCase{doc: doc, renders: renders}, nil
	}
	key := ""
	if cache != "" && cs.Render.Mode.OCR() {
		key = filepath.Join(cache, cs.ID+"-"+digest(cs)+".json")
		if raw, err := os.ReadFile(key); err == nil {
			var d extract.Document
			if json.Unmarshal(raw, &d) == nil {
				return renderedCase{doc: &d}, nil
			}
		}
	}
	var b bytes.Buffer
	if err := invoicecorpus.WriteDocument(&b, cs); err != nil {
		return renderedCase{}, err
	}
	path := filepath.Join(dir, cs.ID+cs.Ext())
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return renderedCase{}, err
	}
	doc, err := extract.Extract(ctx, path, extract.Options{TempDir: dir, OCRLang: invoice.OCRLanguages})
	if err != nil {
		return renderedCase{}, err
	}
	rc := renderedCase{doc: doc, ocrPages: doc.OCRPages(), ocrTime: doc.Timings.OCR}
	if err := inkCheck(ctx, path, dir, &rc); err != nil {
		return renderedCase{}, err
	}
	if key != "" {
		if raw, err := json.Marshal(doc); err == nil {
			_ = os.WriteFile(key, raw, 0o644)
		}
	}
	return rc, nil
}

// digest names a cached reading by what the case prints and how it is
// rendered, so a change to the generator never re-uses a stale reading.
// (A change to the renderer or to extract needs a fresh cache directory.)
func digest(cs *invoicecorpus.Case) string {
	b, _ := json.Marshal(struct {
		Doc    any
		Render any
	}{cs.Doc, cs.Render})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// inkCheck is cmd/airlock-docs' ink check (hostread.InkCheck) on rc's
// document.
func inkCheck(ctx context.Context, path, dir string, rc *renderedCase) error {
	renders, off, err := hostread.InkCheck(ctx, path, dir, rc.doc)
	rc.renders, rc.offPage = renders, off
	return err
}

// runRendered extracts and judges every case in corpus order, with one
// checker and history for the corpus (as `airlock eval invoice` does).
func runRendered(t *testing.T, c *invoicecorpus.Corpus, read []renderedCase) []invoicecorpus.Outcome {
	t.Helper()
	chk := corpusChecker(t)
	ex, err := invoice.New()
	if err != nil {
		t.Fatal(err)
	}
	debug := os.Getenv("INVOICE_CORPUS_DEBUG") != ""
	var outs []invoicecorpus.Outcome
	for i := range c.Cases {
		cs, rc := &c.Cases[i], read[i]
		res, err := ex.Extract(rc.doc, invoice.Options{Renders: rc.renders, OffPage: rc.offPage})
		if err != nil {
			t.Fatalf("%s: %v", cs.ID, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := chk.CheckResult(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, invoicecorpus.Outcome{Fields: rep.Fields, Flags: rep.Codes(), Decision: rep.Decision})
		if debug && cs.Render.Mode.OCR() {
			logMisses(t, cs, rc.doc, res, rep)
		}
	}
	return outs
}

func corpusChecker(t *testing.T) *invoicecheck.Checker {
	t.Helper()
	m, err := invoicecheck.ParseMaster(bytes.NewReader(invoicecorpus.VendorMaster()))
	if err != nil {
		t.Fatal(err)
	}
	lim := decimal.NewFromInt(invoicecorpus.AutoApproveLimit)
	chk, err := invoicecheck.NewChecker(m, invoicecheck.Policy{AsOf: invoicecorpus.AsOf(), DefaultLimit: &lim}, invoicecheck.NewMemoryHistory())
	if err != nil {
		t.Fatal(err)
	}
	return chk
}

// logMisses shows, for each field the eval scores wrong, the truth, the
// reading, the flags and the lines that hold the truth (hostread.Misses).
func logMisses(t *testing.T, cs *invoicecorpus.Case, doc *extract.Document, res *result.Result, rep *invoicecheck.Report) {
	j := hostread.Judged{Result: res, Report: rep,
		Outcome: invoicecorpus.Outcome{Fields: rep.Fields, Flags: rep.Codes(), Decision: rep.Decision}}
	if m := hostread.Misses(cs, doc, j, isOCR); m != "" {
		t.Log(m)
	} else {
		t.Logf("%s %s %s: every field right, approved", cs.ID, cs.Layout, cs.Render.Mode)
	}
}

// TestRenderedSubset runs by default (when the guest tools are installed):
// four OCR cases of seed 1 through the real tools, one per way a document
// is degraded (a one-page and a two-page scan, a photo, a fax with its
// cover sheet), each read right field by field and judged as its traps
// say. A regression anywhere in render -> extract -> invoice ->
// invoicecheck fails it.
func TestRenderedSubset(t *testing.T) {
	needGuestTools(t)
	if testing.Short() {
		t.Skip("real OCR (about 20 s)")
	}
	c, err := invoicecorpus.Generate(1, 42)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]invoicecorpus.Mode{"inv-0001": invoicecorpus.ModeScanPDF, "inv-0014": invoicecorpus.ModeScanPDF,
		"inv-0015": invoicecorpus.ModePhotoPNG, "inv-0023": invoicecorpus.ModeFaxTIFF}
	sub := &invoicecorpus.Corpus{Seed: c.Seed}
	for _, cs := range c.Cases {
		if m, ok := want[cs.ID]; ok {
			if cs.Render.Mode != m {
				t.Fatalf("%s is %s now, not %s: the generator changed; pick the subset again", cs.ID, cs.Render.Mode, m)
			}
			sub.Cases = append(sub.Cases, cs)
		}
	}
	outs := runRendered(t, sub, readRendered(t, sub, ""))
	s := invoicecorpus.Eval("subset", sub.Cases, outs, isOCR)
	for f, n := range s.FieldTotal {
		if s.FieldRight[f] != n {
			t.Errorf("%s: %d of %d right", f, s.FieldRight[f], n)
		}
	}
	for tr, n := range s.TrapTotal {
		if s.TrapHit[tr] != n {
			t.Errorf("trap %s: %d of %d flagged", tr, s.TrapHit[tr], n)
		}
	}
	if s.CleanFlagged != 0 || s.MisreadApprovals != 0 || s.TrapApprovals != 0 {
		t.Errorf("clean flagged %d %v, misread approvals %d, trap approvals %d", s.CleanFlagged, s.CleanFlags, s.MisreadApprovals, s.TrapApprovals)
	}
	if t.Failed() {
		t.Log("\n" + s.Table())
	}
}
