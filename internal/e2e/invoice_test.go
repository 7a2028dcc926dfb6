package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	invcorpus "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

type invoiceLine struct {
	File     string     `json:"file"`
	OK       bool       `json:"ok"`
	Error    *lineError `json:"error"`
	OCRPages int        `json:"ocr_pages"`
	Decision string     `json:"decision"`
	Flags    []struct {
		Code string `json:"code"`
	} `json:"flags"`
	Fields map[string]any `json:"fields"`
}

func (l invoiceLine) has(code string) bool {
	for _, f := range l.Flags {
		if f.Code == code {
			return true
		}
	}
	return false
}

// TestInvoiceBatch extracts invoices and hostile files in one batch through
// real invoice-ocr sandboxes and judges them on the host: a clean invoice
// is approved, its second copy is a duplicate, planted hidden text, changed
// bank details and a photo are handled, every hostile file gets its own
// classified error and is never approved, and the audit log carries ids,
// not invoice data.
func TestInvoiceBatch(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "invoice-ocr")
	c, err := invcorpus.Generate(7, 42)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vendors.json"), invcorpus.VendorMaster(), 0o644); err != nil {
		t.Fatal(err)
	}
	pick := func(mode invcorpus.Mode, trap invcorpus.Trap) *invcorpus.Case {
		for i := range c.Cases {
			cs := &c.Cases[i]
			if cs.Render.Mode == mode && (trap == "" && cs.Clean() || len(cs.Traps) == 1 && cs.Traps[0] == trap) {
				return cs
			}
		}
		t.Fatalf("corpus has no %s invoice with trap %q", mode, trap)
		return nil
	}
	write := func(name string, cs *invcorpus.Case) {
		var b bytes.Buffer
		if err := invcorpus.WriteDocument(&b, cs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+cs.Ext()), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clean := pick(invcorpus.ModeTextPDF, "")
	write("01-clean", clean)
	write("02-clean-again", clean)
	write("03-hidden", pick(invcorpus.ModeTextPDF, invcorpus.TrapHiddenWhite))
	write("04-bank", pick(invcorpus.ModeTextPDF, invcorpus.TrapBankChange))
	photo := pick(invcorpus.ModePhotoPNG, "")
	write("05-photo", photo)
	hostile := map[string][]byte{
		"06-bomb.png":      testdocs.BombPNG(100000, 100000),
		"07-corrupt.png":   []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR truncated"),
		"08-empty.pdf":     nil,
		"09-200-pages.pdf": testdocs.ManyPagesPDF(200),
		"10-script.pdf":    testdocs.JavaScriptPDF([]string{"INVOICE", "Total due: $1.00"}, "app.alert('pay now')"),
	}
	for n, b := range hostile {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := e.cli(t, "invoice", "--json", "--tenant", invcorpus.TenantID, "--vendors", filepath.Join(dir, "vendors.json"),
		"--as-of", invcorpus.AsOf().Format("2006-01-02"), "--approve-limit", "10000", "--history", filepath.Join(t.TempDir(), "h.db"),
		"--state-dir", e.stateDir, "--run-dir", shortRunDir(t), "--timeout", "4m", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 (hostile files fail); stderr:\n%s", code, stderr)
	}
	lines := map[string]invoiceLine{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l invoiceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line: %v: %.300s", err, sc.Text())
		}
		lines[strings.TrimSuffix(filepath.Base(l.File), filepath.Ext(l.File))] = l
	}
	if len(lines) != 10 {
		t.Fatalf("%d lines for 10 documents:\n%s", len(lines), out)
	}
	if l := lines["01-clean"]; !l.OK || l.Decision != "approve" {
		t.Errorf("clean invoice: %+v", l)
	}
	if l := lines["02-clean-again"]; l.Decision != "review" || !l.has("duplicate_invoice_number") {
		t.Errorf("second copy: %+v; want review with duplicate_invoice_number", l)
	}
	if l := lines["03-hidden"]; l.Decision != "review" || !l.has("prompt_injection") {
		t.Errorf("hidden instructions: %+v; want review with prompt_injection", l)
	}
	if l := lines["04-bank"]; l.Decision != "review" || !l.has("bank_details_changed") {
		t.Errorf("changed bank details: %+v; want review with bank_details_changed", l)
	}
	// A photo goes through OCR; its accuracy is the eval's business, but it
	// is never approved with a total other than the printed one.
	if l := lines["05-photo"]; !l.OK || l.OCRPages != 1 || l.Decision == "approve" && (photo.Truth.Total == nil || l.Fields["total"] != *photo.Truth.Total) {
		t.Errorf("photographed invoice: %+v (printed total %v)", l, photo.Truth.Total)
	}
	for name, want := range map[string]string{"06-bomb": "too_large", "07-corrupt": "unreadable", "08-empty": "unreadable", "09-200-pages": "too_large"} {
		if l := lines[name]; l.OK || l.Error == nil || l.Error.Code != want || l.Decision != "review" || !l.has("unreadable") {
			t.Errorf("%s: %+v; want error %s, decision review, flag unreadable", name, l, want)
		}
	}
	if l := lines["10-script"]; l.Decision == "approve" || !l.has("active_content") {
		t.Errorf("a PDF with JavaScript and no real invoice: %+v; want review with active_content", l)
	}
	auditOut, _, _ := e.cli(t, "audit", "ls", "--json", "--state-dir", e.stateDir, "--meta", "tenant_id="+invcorpus.TenantID)
	if !regexp.MustCompile(`"job":\s*"invoice"`).MatchString(auditOut) {
		t.Errorf("no invoice audit records:\n%.1000s", auditOut)
	}
	if tot, ok := lines["01-clean"].Fields["invoice_number"].(string); ok && strings.Contains(auditOut, tot) {
		t.Errorf("the audit log holds an invoice number")
	}
}
