//go:build unix

// Package hostread reads corpus invoices the way the guest does, on the
// host and without VMs: each document is written to a temporary file,
// read by the real extract.Extract (poppler, deskew, tesseract),
// ink-checked like cmd/airlock-docs, extracted with invoice.Extract and
// judged by invoicecheck in corpus order. It links the guest's extractor
// and so is for tests and evals only (internal/hostimports keeps it out of
// every host binary).
package hostread

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// Input is one document to read.
type Input struct {
	ID    string
	Ext   string // ".pdf", ".png", ...
	OCR   bool   // read by OCR (so a cached reading may stand in)
	Write func(io.Writer) error
	// Key names a cached reading of an OCR document: it must change
	// whenever what the document prints or how it is rendered changes.
	Key string
}

// Reading is what the guest's tools made of one document.
type Reading struct {
	Doc     *extract.Document
	Renders map[int]*hidden.Render
	OffPage map[int][]extract.Word
	// DocID is the first 16 hex digits of the file's SHA-256, as the
	// runner names documents (jobs.Doc.ID).
	DocID string
	// OCRPages and OCRTime are what extract.Extract spent on OCR (zero
	// for a cached reading).
	OCRPages int
	OCRTime  time.Duration
}

// Read writes and reads every input, workers at a time (the tools are
// single-threaded). cache, when set, keeps the readings of OCR inputs by
// their Key, so extractor changes re-score in seconds.
func Read(ctx context.Context, ins []Input, dir, cache string, workers int) ([]Reading, error) {
	out := make([]Reading, len(ins))
	errs := make([]error, len(ins))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = readOne(ctx, ins[i], dir, cache)
			}
		}()
	}
	for i := range ins {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ins[i].ID, err)
		}
	}
	return out, nil
}

func readOne(ctx context.Context, in Input, dir, cache string) (Reading, error) {
	var b bytes.Buffer
	if err := in.Write(&b); err != nil {
		return Reading{}, err
	}
	sum := sha256.Sum256(b.Bytes())
	id := hex.EncodeToString(sum[:])[:16]
	key := ""
	if cache != "" && in.OCR {
		key = filepath.Join(cache, in.ID+"-"+in.Key+".json")
		if raw, err := os.ReadFile(key); err == nil {
			var d extract.Document
			if json.Unmarshal(raw, &d) == nil {
				return Reading{Doc: &d, DocID: id}, nil
			}
		}
	}
	path := filepath.Join(dir, in.ID+in.Ext)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return Reading{}, err
	}
	defer os.Remove(path)
	// The limits are for accuracy runs on a shared host, not a guest's
	// budget: a page that takes three minutes beside other work is read.
	doc, err := extract.Extract(ctx, path, extract.Options{TempDir: dir, OCRLang: invoice.OCRLanguages,
		ToolTimeout: 10 * time.Minute, PageTimeout: 10 * time.Minute, TotalTimeout: time.Hour})
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Doc: doc, DocID: id, OCRPages: doc.OCRPages(), OCRTime: doc.Timings.OCR}
	if err := inkCheck(ctx, path, dir, &r); err != nil {
		return Reading{}, err
	}
	if key != "" {
		if raw, err := json.Marshal(doc); err == nil {
			_ = os.WriteFile(key, raw, 0o644)
		}
	}
	return r, nil
}

// inkCheck is cmd/airlock-docs' ink check on r's text-layer pages.
func inkCheck(ctx context.Context, path, dir string, r *Reading) error {
	renders, off, err := InkCheck(ctx, path, dir, r.Doc)
	r.Renders, r.OffPage = renders, off
	return err
}

// InkCheck is cmd/airlock-docs' ink check: gs renders of doc's
// text-layer pages (the document at path) and the words drawn off them.
// No text-layer pages: nothing.
func InkCheck(ctx context.Context, path, dir string, doc *extract.Document) (map[int]*hidden.Render, map[int][]extract.Word, error) {
	pages := invoice.TextPages(doc)
	if len(pages) == 0 {
		return nil, nil, nil
	}
	first, last := pages[0], pages[len(pages)-1]
	cfg := hidden.RenderConfig{TempDir: dir}
	renders, err := hidden.RenderPages(ctx, cfg, path, first, last)
	if err != nil {
		return nil, nil, err
	}
	sizes := map[int][2]float64{}
	for _, n := range pages {
		p := doc.Pages[n-1]
		sizes[n] = [2]float64{p.Width, p.Height}
	}
	off, err := hidden.OffPageWords(ctx, cfg, path, first, last, sizes)
	if err != nil {
		return nil, nil, err
	}
	return renders, off, nil
}

// Judged is one document's extraction and the host's verdict.
type Judged struct {
	Result  *result.Result
	Report  *invoicecheck.Report
	Outcome invoicecorpus.Outcome
}

// Judge extracts and judges every reading in order with one checker (and
// its history), as `airlock eval invoice` does.
func Judge(ctx context.Context, chk *invoicecheck.Checker, rs []Reading) ([]Judged, error) {
	ex, err := invoice.New()
	if err != nil {
		return nil, err
	}
	out := make([]Judged, 0, len(rs))
	for i, r := range rs {
		res, err := ex.Extract(r.Doc, invoice.Options{Renders: r.Renders, OffPage: r.OffPage})
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		rep, err := chk.CheckDocument(ctx, raw, r.DocID)
		if err != nil {
			return nil, err
		}
		out = append(out, Judged{Result: res, Report: rep,
			Outcome: invoicecorpus.Outcome{Fields: rep.Fields, Flags: rep.Codes(), Decision: rep.Decision}})
	}
	return out, nil
}

// Dump writes a reading as JSON (document, ink renders, off-page words),
// for the invoice package's TestDebugDocument.
func Dump(path string, r Reading) error {
	b, err := json.Marshal(struct {
		Doc     *extract.Document
		Renders map[int]*hidden.Render
		OffPage map[int][]extract.Word
	}{r.Doc, r.Renders, r.OffPage})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
