package invoicecorpus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus/invoicesim"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := invoicecorpus.Generate(7, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := invoicecorpus.Generate(7, 42)
	c, _ := invoicecorpus.Generate(8, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different corpus")
	}
	if reflect.DeepEqual(a.Cases, c.Cases) {
		t.Fatal("different seeds, same corpus")
	}
}

func TestGenerateCoversLayoutsModesAndTraps(t *testing.T) {
	c, err := invoicecorpus.Generate(1, 210)
	if err != nil {
		t.Fatal(err)
	}
	layouts, modes, traps := map[string]int{}, map[invoicecorpus.Mode]int{}, map[invoicecorpus.Trap]int{}
	clean := 0
	for _, cs := range c.Cases {
		layouts[cs.Layout]++
		modes[cs.Render.Mode]++
		for _, tr := range cs.Traps {
			traps[tr]++
		}
		if cs.Clean() {
			clean++
		}
		if cs.Render.Mode == invoicecorpus.ModeFaxTIFF && !cs.Render.CoverSheet {
			t.Errorf("%s: fax without a cover sheet", cs.ID)
		}
		for _, tr := range cs.Traps {
			if strings.HasPrefix(string(tr), "hidden_") && cs.Render.Mode != invoicecorpus.ModeTextPDF {
				t.Errorf("%s: hidden text trap rendered as %s", cs.ID, cs.Render.Mode)
			}
		}
	}
	for _, l := range []string{"us", "us_grid", "uk", "de", "fr", "nl", "minimal", "multipage", "northwind", "globex"} {
		if layouts[l] == 0 {
			t.Errorf("no %s layout in %v", l, layouts)
		}
	}
	for _, m := range []invoicecorpus.Mode{invoicecorpus.ModeTextPDF, invoicecorpus.ModeScanPDF, invoicecorpus.ModePhotoPNG, invoicecorpus.ModePhotoJPEG, invoicecorpus.ModeFaxTIFF} {
		if modes[m] == 0 {
			t.Errorf("no %s mode in %v", m, modes)
		}
	}
	for _, tr := range invoicecorpus.Traps() {
		if traps[tr] == 0 {
			t.Errorf("no %s trap", tr)
		}
	}
	if clean < 60 {
		t.Errorf("only %d clean invoices", clean)
	}
}

func TestVendorMasterIsStrictlyValid(t *testing.T) {
	m, err := invoicecheck.ParseMaster(bytes.NewReader(invoicecorpus.VendorMaster()))
	if err != nil {
		t.Fatal(err)
	}
	if m.TenantID != invoicecorpus.TenantID || len(m.Vendors) < 8 {
		t.Fatalf("tenant %s with %d vendors", m.TenantID, len(m.Vendors))
	}
}

// run takes every case through Simulate -> Extract -> invoicecheck.
func run(t *testing.T, c *invoicecorpus.Corpus, opt invoicesim.SimOptions) []invoicecorpus.Outcome {
	t.Helper()
	var docs []*extract.Document
	var renders []map[int]*hidden.Render
	var degraded []bool
	for i := range c.Cases {
		doc, r, info := invoicesim.Simulate(&c.Cases[i], opt)
		docs, renders, degraded = append(docs, doc), append(renders, r), append(degraded, info.Degraded)
	}
	outs := runDocs(t, c, docs, renders, nil)
	for i := range outs {
		outs[i].Degraded = degraded[i]
	}
	return outs
}

// runDocs extracts each case's document (with its ink renders, if any)
// and checks the result with a fresh checker and history.
func runDocs(t *testing.T, c *invoicecorpus.Corpus, docs []*extract.Document, renders []map[int]*hidden.Render, offPage []map[int][]extract.Word) []invoicecorpus.Outcome {
	t.Helper()
	m, err := invoicecheck.ParseMaster(bytes.NewReader(invoicecorpus.VendorMaster()))
	if err != nil {
		t.Fatal(err)
	}
	lim := decimal.NewFromInt(invoicecorpus.AutoApproveLimit)
	chk, err := invoicecheck.NewChecker(m, invoicecheck.Policy{AsOf: invoicecorpus.AsOf(),
		AutoApproveLimit: map[string]decimal.Decimal{"USD": lim, "EUR": lim, "GBP": lim}}, invoicecheck.NewMemoryHistory())
	if err != nil {
		t.Fatal(err)
	}
	ex, err := invoice.New()
	if err != nil {
		t.Fatal(err)
	}
	var outs []invoicecorpus.Outcome
	for i := range c.Cases {
		cs := &c.Cases[i]
		var opts invoice.Options
		if renders != nil {
			opts.Renders = renders[i]
		}
		if offPage != nil {
			opts.OffPage = offPage[i]
		}
		res, err := ex.Extract(docs[i], opts)
		if err != nil {
			t.Fatalf("%s: %v", cs.ID, err)
		}
		rep, err := chk.CheckEnvelope(context.Background(), envelope(t, res, docs[i]))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, invoicecorpus.Outcome{Fields: res.Fields, Flags: rep.Codes(), Decision: rep.Decision})
		if os.Getenv("INVOICE_CORPUS_DEBUG") != "" {
			debugCase(t, cs, res, rep, docs[i].Pages[0].Method == extract.MethodOCR)
		}
	}
	return outs
}

// envelope wraps a result the way the guest tool writes it, so the host's
// mirror of the envelope is checked against the real one.
func envelope(t *testing.T, res *invoice.Result, doc *extract.Document) []byte {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	env := docs.Envelope{Version: docs.EnvelopeVersion, Job: result.Job, OK: true, Pages: len(doc.Pages),
		OCRPages: doc.OCRPages(), TimingsMS: map[string]int64{"extract": 1}, Result: raw}
	b, err := json.Marshal(&env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func debugCase(t *testing.T, cs *invoicecorpus.Case, res *result.Result, rep *invoicecheck.Report, ocr bool) {
	var diffs []string
	for _, f := range result.ScalarFields() {
		w, g := *cs.Truth.Ptr(f), *res.Fields.Ptr(f)
		ws, gs := "<nil>", "<nil>"
		if w != nil {
			ws = *w
		}
		if g != nil {
			gs = *g
		}
		if ws != gs {
			diffs = append(diffs, fmt.Sprintf("%s: want %q got %q", f, ws, gs))
		}
	}
	if len(cs.Truth.LineItems) != len(res.Fields.LineItems) {
		diffs = append(diffs, fmt.Sprintf("lines: want %d got %d", len(cs.Truth.LineItems), len(res.Fields.LineItems)))
	}
	var want []string
	for _, tr := range cs.Traps {
		want = append(want, invoicecorpus.ExpectedFlags(tr, ocr)...)
	}
	t.Logf("%s %s %s traps=%v want=%v got=%v diffs=%v flags=%+v", cs.ID, cs.Layout, cs.Render.Mode, cs.Traps, want, rep.Codes(), diffs, rep.Flags)
}

func allText(*invoicecorpus.Case) bool { return false }
func allOCR(*invoicecorpus.Case) bool  { return true }

// checkInvariants holds for every run: every trap that expects a flag
// raised it, no clean invoice was flagged, no misread amount and no trap
// was approved.
func checkInvariants(t *testing.T, s *invoicecorpus.Scores) {
	t.Helper()
	for _, tr := range invoicecorpus.Traps() {
		if s.TrapHit[tr] != s.TrapTotal[tr] {
			t.Errorf("%s: %s recall %d/%d", s.Name, tr, s.TrapHit[tr], s.TrapTotal[tr])
		}
	}
	if s.CleanFlagged != 0 {
		t.Errorf("%s: %d clean invoices flagged: %v", s.Name, s.CleanFlagged, s.CleanFlags)
	}
	if s.MisreadApprovals != 0 || s.TrapApprovals != 0 {
		t.Errorf("%s: %d approvals of misread amounts, %d of planted traps", s.Name, s.MisreadApprovals, s.TrapApprovals)
	}
}

// TestPipelineMeetsTargets is the evaluation: generator -> simulated
// extraction (clean text layer; OCR with noise; each case as rendered)
// -> Extract -> invoicecheck. Run with -v to see the tables.
func TestPipelineMeetsTargets(t *testing.T) {
	c, err := invoicecorpus.Generate(1, 210)
	if err != nil {
		t.Fatal(err)
	}
	rendered := invoicesim.SimOptions{AsRendered: true, Seed: 1}
	text := invoicecorpus.Eval("clean text layer", c.Cases, run(t, c, invoicesim.SimOptions{Seed: 1}), allText)
	ocr := invoicecorpus.Eval("OCR with noise", c.Cases, run(t, c, invoicesim.SimOptions{OCR: true, Seed: 1}), allOCR)
	mixed := invoicecorpus.Eval("as rendered (text PDFs as text, other modes by OCR)", c.Cases, run(t, c, rendered), rendered.ReadsOCR)
	for _, s := range []*invoicecorpus.Scores{text, ocr, mixed} {
		t.Log("\n" + s.Table())
		checkInvariants(t, s)
	}
	if a := text.FieldAccuracy(); a < 0.98 {
		t.Errorf("clean text field accuracy %.3f < 0.98", a)
	}
	if a := ocr.FieldAccuracy(); a < 0.95 {
		t.Errorf("OCR field accuracy %.3f < 0.95", a)
	}
}

// TestPipelineOtherSeeds guards against tuning to one corpus: other
// seeds, twice the OCR noise.
func TestPipelineOtherSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, seed := range []int64{2, 3} {
		c, err := invoicecorpus.Generate(seed, 210)
		if err != nil {
			t.Fatal(err)
		}
		opt := invoicesim.SimOptions{OCR: true, Seed: seed, Noise: 2}
		s := invoicecorpus.Eval(fmt.Sprintf("seed %d, OCR noise x2", seed), c.Cases, run(t, c, opt), allOCR)
		t.Logf("%s: field accuracy %.3f", s.Name, s.FieldAccuracy())
		checkInvariants(t, s)
		if a := s.FieldAccuracy(); a < 0.95 {
			t.Errorf("%s: field accuracy %.3f", s.Name, a)
		}
	}
}
