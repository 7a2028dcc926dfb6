//go:build unix

package invoicecorpus2_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	ic "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus/hostread"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus2"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// TestRenderedEval reads the second corpus through the real guest tools
// on the host (hostread: poppler, ghostscript, tesseract), as the guest
// reads them in a sandbox, and prints the scores of text-layer and OCR
// cases. (`airlock corpus invoice` writes only the first corpus.)
//
//	INVOICE_CORPUS2_RENDERED=tune|heldout|all   which split(s); all seeds of each
//	INVOICE_CORPUS2_N=<n>                       invoices per seed (default 52)
//	INVOICE_CORPUS2_TEXT=only                   text-layer cases only (fast)
//	INVOICE_CORPUS_REAL_CACHE=DIR               keep OCR readings between runs
//	INVOICE_CORPUS_DEBUG=1                      log every case with a wrong field or a flag
//	INVOICE_DEBUG_DUMP=DIR                      write each reading as DIR/<id>.json (for
//	                                            the invoice package's TestDebugDocument)
func TestRenderedEval(t *testing.T) {
	var splits []invoicecorpus2.Split
	switch v := os.Getenv("INVOICE_CORPUS2_RENDERED"); v {
	case "":
		t.Skip("set INVOICE_CORPUS2_RENDERED=tune|heldout|all to run")
	case "all":
		splits = invoicecorpus2.Splits()
	default:
		s, err := invoicecorpus2.ParseSplit(v)
		if err != nil {
			t.Fatal(err)
		}
		splits = []invoicecorpus2.Split{s}
	}
	n := 52
	if v := os.Getenv("INVOICE_CORPUS2_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("INVOICE_CORPUS2_N=%q", v)
		}
	}
	needTools(t)
	for _, s := range splits {
		cases, err := invoicecorpus2.GenerateSplit(s, invoicecorpus2.Seeds(s), n)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("INVOICE_CORPUS2_TEXT") == "only" {
			cases = textOnly(cases)
		}
		for _, sc := range evalSplit(t, s, cases) {
			if sc.Cases == 0 {
				continue // a text-only run has no OCR cases to show
			}
			t.Log("\n" + sc.Table())
			if sc.MisreadApprovals != 0 || sc.TrapApprovals != 0 {
				t.Errorf("%s: %d approvals of misread amounts, %d despite a trap", sc.Name, sc.MisreadApprovals, sc.TrapApprovals)
			}
		}
	}
}

// textOnly keeps the text-layer cases, less a duplicate whose original
// is a scan: a run that does not read the original cannot find the
// duplicate of it.
func textOnly(cs []invoicecorpus2.Case) []invoicecorpus2.Case {
	var out []invoicecorpus2.Case
	kept := map[string]bool{}
	for _, c := range cs {
		if c.Mode.OCR() || (c.DuplicateOf != "" && !kept[c.DuplicateOf]) {
			continue
		}
		kept[c.ID] = true
		out = append(out, c)
	}
	return out
}

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"pdfinfo", "pdftotext", "pdftoppm", "gs", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

func isOCR(c *ic.Case) bool { return c.Render.Mode.OCR() }

// evalSplit reads and judges a split's cases in order and scores text and
// OCR cases apart.
func evalSplit(t *testing.T, s invoicecorpus2.Split, cases []invoicecorpus2.Case) []*ic.Scores {
	ins := make([]hostread.Input, len(cases))
	for i := range cases {
		c := &cases[i]
		ins[i] = hostread.Input{ID: c.ID, Ext: c.Ext(), OCR: c.Mode.OCR(), Write: c.WriteDocument, Key: c.Digest()}
	}
	rs, err := hostread.Read(context.Background(), ins, t.TempDir(), os.Getenv("INVOICE_CORPUS_REAL_CACHE"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("INVOICE_DEBUG_DUMP"); dir != "" {
		for i := range rs {
			if err := hostread.Dump(filepath.Join(dir, cases[i].ID+".json"), rs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	js, err := hostread.Judge(context.Background(), checker(t), rs)
	if err != nil {
		t.Fatal(err)
	}
	var text, ocr []ic.Case
	var textOut, ocrOut []ic.Outcome
	for i := range cases {
		sc := cases[i].Scored()
		if os.Getenv("INVOICE_CORPUS_DEBUG") != "" {
			if m := hostread.Misses(&sc, rs[i].Doc, js[i], isOCR); m != "" {
				t.Log(m)
			}
		}
		if sc.Render.Mode.OCR() {
			ocr, ocrOut = append(ocr, sc), append(ocrOut, js[i].Outcome)
		} else {
			text, textOut = append(text, sc), append(textOut, js[i].Outcome)
		}
	}
	name := fmt.Sprintf("invoicecorpus2 %s (seeds %v)", s, invoicecorpus2.Seeds(s))
	return []*ic.Scores{ic.Eval(name+": text-layer PDFs", text, textOut, isOCR), ic.Eval(name+": scans, photos and faxes (OCR)", ocr, ocrOut, isOCR)}
}

func checker(t *testing.T) *invoicecheck.Checker {
	t.Helper()
	m, err := invoicecheck.ParseMaster(bytes.NewReader(invoicecorpus2.VendorMaster()))
	if err != nil {
		t.Fatal(err)
	}
	lim := decimal.NewFromInt(invoicecorpus2.AutoApproveLimit)
	chk, err := invoicecheck.NewChecker(m, invoicecheck.Policy{AsOf: invoicecorpus2.AsOf(), DefaultLimit: &lim,
		AutoApproveLimit: invoicecorpus2.Limits()}, invoicecheck.NewMemoryHistory())
	if err != nil {
		t.Fatal(err)
	}
	return chk
}
