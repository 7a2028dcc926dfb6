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

	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// reviewLine is the part of an `airlock review --json` line the tests read.
type reviewLine struct {
	File      string           `json:"file"`
	OK        bool             `json:"ok"`
	Error     *lineError       `json:"error"`
	Pages     int              `json:"pages"`
	OCRPages  int              `json:"ocr_pages"`
	Risks     []string         `json:"risks"`
	TimingsMS map[string]int64 `json:"timings_ms"`
	Findings  []struct {
		Clause        string  `json:"clause"`
		Status        string  `json:"status"`
		NumericChange bool    `json:"numeric_change"`
		Similarity    float64 `json:"similarity"`
	} `json:"findings"`
}

func parseLines(t *testing.T, out string) map[string]reviewLine {
	t.Helper()
	lines := map[string]reviewLine{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l reviewLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not an NDJSON line: %v: %.200s", err, sc.Text())
		}
		lines[filepath.Base(l.File)] = l
	}
	return lines
}

// TestReviewBatch reviews generated contracts and hostile files in one
// batch through real sandboxes, in this process (no daemon): the contracts
// come back right, every hostile file gets its own classified error, the
// batch completes and exits 1, and the audit log names documents by hash
// without a word of their text.
func TestReviewBatch(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "legal-doc-review")
	dir := t.TempDir()
	cs, err := reviewcorpus.Generate(reviewcorpus.Options{Seed: 42, Contracts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reviewcorpus.WritePDFs(dir, cs, reviewcorpus.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	var enc bytes.Buffer
	if err := testdocs.WriteFlowPDF(&enc, cs[0].Flow, testdocs.PDFOptions{UserPassword: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	contract, _ := os.ReadFile(filepath.Join(dir, cs[0].Name+".pdf"))
	hostile := map[string][]byte{
		"encrypted.pdf":  enc.Bytes(),
		"truncated.pdf":  testdocs.TruncatedPDF(contract, 0.5),
		"empty.pdf":      nil,
		"not-a-pdf.pdf":  testdocs.NotPDF(),
		"2000-pages.pdf": testdocs.ManyPagesPDF(2000),
		"page-bomb.pdf":  testdocs.ImageBombPDF(14400, 14400),
	}
	want := map[string]string{"encrypted.pdf": "encrypted", "truncated.pdf": "unreadable", "empty.pdf": "unreadable",
		"not-a-pdf.pdf": "unreadable", "2000-pages.pdf": "too_large", "page-bomb.pdf": "too_large"}
	// Active content is reviewed like any text, and reported, never run.
	hostile["active.pdf"] = testdocs.Polyglot([]byte("<html><script>fetch('x')</script>\n"),
		testdocs.JavaScriptPDF([]string{"SERVICES AGREEMENT", "1. Term. One year."}, "app.launchURL('https://x.test')"), nil)
	for name, b := range hostile {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runDir := shortRunDir(t)
	out, stderr, code := e.cli(t, "review", "--json", "--concurrency", "2", "--state-dir", e.stateDir, "--run-dir", runDir,
		"--timeout", "4m", "--meta", "matter=M-e2e", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 (some documents failed); stderr:\n%s", code, stderr)
	}
	lines := parseLines(t, out)
	if len(lines) != len(cs)+len(hostile) {
		t.Fatalf("%d lines for %d documents:\n%s", len(lines), len(cs)+len(hostile), out)
	}
	for name, code := range want {
		l := lines[name]
		if l.OK || l.Error == nil || l.Error.Code != code {
			t.Errorf("%s: ok=%v error=%+v; want error code %s", name, l.OK, l.Error, code)
		}
	}
	if l := lines["active.pdf"]; !l.OK || strings.Join(l.Risks, ",") != "pdf_data_before_start,pdf_javascript" {
		t.Errorf("active.pdf: ok=%v error=%+v risks=%v; want ok with pdf_data_before_start,pdf_javascript", l.OK, l.Error, l.Risks)
	}
	for _, c := range cs {
		l := lines[c.Name+".pdf"]
		if len(l.Risks) != 0 {
			t.Errorf("%s: risks %v in a plain contract", c.Name, l.Risks)
		}
		if !l.OK {
			t.Errorf("%s: %+v", c.Name, l.Error)
			continue
		}
		checkAgainstTruth(t, c, l)
		if l.TimingsMS["create"] <= 0 || l.TimingsMS["tool"] <= 0 {
			t.Errorf("%s: timings %v", c.Name, l.TimingsMS)
		}
	}

	// The audit trail names the documents by hash and the matter, never
	// by a word of their text.
	auditOut, stderr, code := e.cli(t, "audit", "ls", "--json", "--state-dir", e.stateDir, "--meta", "matter=M-e2e")
	if code != 0 {
		t.Fatalf("audit ls: exit %d: %s", code, stderr)
	}
	if !strings.Contains(auditOut, "doc_sha256") || !regexp.MustCompile(`"job":\s*"review"`).MatchString(auditOut) {
		t.Errorf("audit records lack the document ids:\n%.2000s", auditOut)
	}
	for _, p := range cs[0].Paragraphs {
		if len(p.Text) > 40 && strings.Contains(auditOut, p.Text[:40]) {
			t.Fatalf("audit records contain document text %q", p.Text[:40])
		}
	}
}

// checkAgainstTruth: never a false MATCH, every numeric change caught,
// and most statuses right (the eval measures accuracy; this guards the
// path end to end).
func checkAgainstTruth(t *testing.T, c reviewcorpus.Contract, l reviewLine) {
	t.Helper()
	byClause := map[string]int{}
	for i, f := range l.Findings {
		byClause[f.Clause] = i
	}
	right := 0
	for _, ct := range c.Truth.Clauses {
		i, ok := byClause[ct.Clause]
		if !ok {
			t.Errorf("%s: no finding for %s", c.Name, ct.Clause)
			continue
		}
		f := l.Findings[i]
		if f.Status == "MATCH" && ct.Status != "MATCH" {
			t.Errorf("%s %s: false MATCH (truth %s)", c.Name, ct.Clause, ct.Status)
		}
		if ct.NumericChange && !f.NumericChange {
			t.Errorf("%s %s: numeric change missed", c.Name, ct.Clause)
		}
		if f.Status == ct.Status {
			right++
		}
	}
	if right*10 < len(c.Truth.Clauses)*8 {
		t.Errorf("%s: only %d of %d statuses right", c.Name, right, len(c.Truth.Clauses))
	}
}

// shortRunDir is a run directory under /run (unix socket paths are short).
func shortRunDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/run", "alk-e2e-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestReviewThroughDaemon runs the same job through a daemon's API (the
// runner's other backend): the sandbox belongs to the key's tenant and is
// gone afterwards.
func TestReviewThroughDaemon(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "legal-doc-review")
	d := startDaemon(t, e)
	dir := t.TempDir()
	cs, err := reviewcorpus.Generate(reviewcorpus.Options{Seed: 43, Contracts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reviewcorpus.WritePDFs(dir, cs, reviewcorpus.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := d.cli(t, tenantA, "review", "--json", dir)
	if code != 0 {
		t.Fatalf("airlock review --url: exit %d\n%s", code, stderr)
	}
	l := parseLines(t, out)[cs[0].Name+".pdf"]
	if !l.OK {
		t.Fatalf("review through the daemon: %+v", l)
	}
	checkAgainstTruth(t, cs[0], l)
	left, err := d.client(t, tenantA).ListSandboxes(ctx(t), map[string]string{"job": "review"})
	if err != nil || len(left) != 0 {
		t.Errorf("sandboxes left running after the batch: %v, %v", ids(left), err)
	}
}
