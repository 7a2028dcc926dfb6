//go:build unix

package invoicecorpus_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
)

// TestRealToolsEval runs corpus invoices through the real guest tools:
// invoicecorpus.TextPDF -> pdftotext -bbox + gs ink renders (text) and
// pdftoppm 200 dpi + tesseract (OCR of the clean page image) -> Extract ->
// invoicecheck. Slow (tesseract): opt in with INVOICE_CORPUS_REAL=<n>.
func TestRealToolsEval(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("INVOICE_CORPUS_REAL"))
	if n <= 0 {
		t.Skip("set INVOICE_CORPUS_REAL=<invoices> to run")
	}
	for _, tool := range []string{"pdftotext", "gs", "pdftoppm", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	c, err := invoicecorpus.Generate(1, n)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var textDocs, ocrDocs []*extract.Document
	var renders []map[int]*hidden.Render
	var offPage []map[int][]extract.Word
	for i := range c.Cases {
		cs := &c.Cases[i]
		b, err := invoicecorpus.TextPDF(cs)
		if err != nil {
			t.Fatal(err)
		}
		pdf := filepath.Join(dir, cs.ID+".pdf")
		if err := os.WriteFile(pdf, b, 0o644); err != nil {
			t.Fatal(err)
		}
		textDocs = append(textDocs, pdftotextBBox(t, pdf))
		r, err := hidden.RenderPages(context.Background(), hidden.RenderConfig{TempDir: dir}, pdf, 1, len(cs.Doc.Pages))
		if err != nil {
			t.Fatal(err)
		}
		renders = append(renders, r)
		sizes := map[int][2]float64{}
		for k := range cs.Doc.Pages {
			sizes[k+1] = [2]float64{612, 792}
		}
		off, err := hidden.OffPageWords(context.Background(), hidden.RenderConfig{TempDir: dir}, pdf, 1, len(cs.Doc.Pages), sizes)
		if err != nil {
			t.Fatal(err)
		}
		offPage = append(offPage, off)
		ocrDocs = append(ocrDocs, cachedOCR(t, pdf, dir, cs.ID))
	}
	text := invoicecorpus.Eval("real tools: pdftotext + gs", c.Cases, runDocs(t, c, textDocs, renders, offPage), allText)
	ocr := invoicecorpus.Eval("real tools: pdftoppm 200 dpi + tesseract", c.Cases, runDocs(t, c, ocrDocs, nil, nil), allOCR)
	for _, s := range []*invoicecorpus.Scores{text, ocr} {
		t.Log("\n" + s.Table())
		if s.MisreadApprovals != 0 || s.TrapApprovals != 0 {
			t.Errorf("%s: %d misread approvals, %d trap approvals", s.Name, s.MisreadApprovals, s.TrapApprovals)
		}
	}
}

var (
	bboxPage = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	bboxWord = regexp.MustCompile(`<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)</word>`)
)

func num(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

func pdftotextBBox(t *testing.T, pdf string) *extract.Document {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	doc := &extract.Document{}
	for i, chunk := range strings.Split(string(out), "<page ")[1:] {
		m := bboxPage.FindStringSubmatch("<page " + chunk)
		p := extract.Page{Number: i + 1, Width: num(m[1]), Height: num(m[2]), Method: extract.MethodText, OCRConfidence: -1}
		for _, w := range bboxWord.FindAllStringSubmatch(chunk, -1) {
			word := extract.Word{Text: htmlUnescape(w[5]), Conf: -1, Box: extract.Box{XMin: num(w[1]), YMin: num(w[2]), XMax: num(w[3]), YMax: num(w[4])}}
			p.Lines = append(p.Lines, extract.Line{Text: word.Text, Box: word.Box, Words: []extract.Word{word}})
		}
		doc.Pages = append(doc.Pages, p)
	}
	return doc
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'").Replace(s)
}

// cachedOCR keeps tesseract's reading of a case in
// $INVOICE_CORPUS_REAL_CACHE (when set), so extraction changes can be
// re-scored without re-running OCR.
func cachedOCR(t *testing.T, pdf, dir, id string) *extract.Document {
	cache := os.Getenv("INVOICE_CORPUS_REAL_CACHE")
	if cache == "" {
		return tesseractPages(t, pdf, dir, id)
	}
	path := filepath.Join(cache, id+".json")
	if b, err := os.ReadFile(path); err == nil {
		var d extract.Document
		if json.Unmarshal(b, &d) == nil {
			return &d
		}
	}
	d := tesseractPages(t, pdf, dir, id)
	if b, err := json.Marshal(d); err == nil {
		_ = os.WriteFile(path, b, 0o644)
	}
	return d
}

func tesseractPages(t *testing.T, pdf, dir, id string) *extract.Document {
	t.Helper()
	prefix := filepath.Join(dir, id)
	if out, err := exec.Command("pdftoppm", "-r", "200", "-gray", "-png", pdf, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	pngs, _ := filepath.Glob(prefix + "-*.png")
	doc := &extract.Document{}
	for i, png := range pngs {
		out, err := exec.Command("tesseract", png, "-", "-l", "eng", "tsv").Output()
		if err != nil {
			t.Fatalf("tesseract: %v", err)
		}
		p := extract.Page{Number: i + 1, Width: 612, Height: 792, Method: extract.MethodOCR}
		s := 72.0 / 200
		for _, ln := range strings.Split(string(out), "\n")[1:] {
			f := strings.Split(ln, "\t")
			if len(f) < 12 || f[0] != "5" || strings.TrimSpace(f[11]) == "" {
				continue
			}
			w := extract.Word{Text: f[11], Conf: num(f[10]),
				Box: extract.Box{XMin: num(f[6]) * s, YMin: num(f[7]) * s, XMax: (num(f[6]) + num(f[8])) * s, YMax: (num(f[7]) + num(f[9])) * s}}
			p.Lines = append(p.Lines, extract.Line{Text: w.Text, Box: w.Box, Words: []extract.Word{w}})
		}
		doc.Pages = append(doc.Pages, p)
	}
	return doc
}
