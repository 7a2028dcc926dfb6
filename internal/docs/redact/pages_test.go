package redact_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus/redactsim"

	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/redact/raster"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// pageDocs returns the corpus's page documents.
func pageDocs() []redactcorpus.Doc {
	var out []redactcorpus.Doc
	for _, d := range redactcorpus.Generate(corpusSeed, corpusSize) {
		if d.Format == "page" {
			out = append(out, d)
		}
	}
	return out
}

// inBox reports whether the word's centre is inside a box on its page.
func inBox(w redactcorpus.Word, fs []redact.Finding) (string, bool) {
	cx, cy := (w.XMin+w.XMax)/2, (w.YMin+w.YMax)/2
	for _, f := range fs {
		if f.Page != w.Page {
			continue
		}
		for _, b := range f.Boxes {
			if b.XMin <= cx && cx <= b.XMax && b.YMin <= cy && cy <= b.YMax {
				return f.Type, true
			}
		}
	}
	return "", false
}

// TestPageWordCoverage runs the page pipeline on the corpus's page
// documents and scores it per word: every PII word must be under a box
// (recall), and boxes over other words are false positives.
func TestPageWordCoverage(t *testing.T) {
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	truth, found, boxedOther, other := map[string]int{}, map[string]int{}, 0, 0
	var missed []string
	for _, d := range pageDocs() {
		if d.Page.Scan != nil && math.Abs(d.Page.Scan.Skew) > 1 {
			// Upright boxes around a crooked page's words cover bits of
			// their neighbours too; the pipeline harness scores those by
			// area.
			continue
		}
		fs := r.Pages(redactsim.Document(d.Page))
		for _, w := range d.Page.Words {
			_, boxed := inBox(w, fs)
			if w.Type == "" {
				other++
				if boxed {
					boxedOther++
					missed = append(missed, fmt.Sprintf("%s: extra box over %q", d.Name, w.Text))
				}
				continue
			}
			truth[w.Type]++
			if boxed {
				found[w.Type]++
			} else {
				missed = append(missed, fmt.Sprintf("%s: %s word not boxed", d.Name, w.Type))
			}
		}
	}
	var types []string
	for k := range truth {
		types = append(types, k)
	}
	sort.Strings(types)
	var b strings.Builder
	for _, k := range types {
		fmt.Fprintf(&b, "%-18s words %4d boxed %4d recall %.3f\n", k, truth[k], found[k], float64(found[k])/float64(truth[k]))
	}
	fmt.Fprintf(&b, "non-PII words %d, boxed %d\n", other, boxedOther)
	t.Log("\n" + b.String())
	for _, m := range missed {
		t.Error(m)
	}
}

// renderPDF draws a corpus page document as a text PDF with the
// corpus's renderer, and metadata for CheckPDF to catch.
func renderPDF(t *testing.T, pd *redactcorpus.PageDoc, path string) {
	t.Helper()
	f := pd.Fixed
	f.Meta = testdocs.Meta{Title: "Intake form for a patient", Author: "Clinic"}
	var b bytes.Buffer
	if err := testdocs.WriteFixedPDF(&b, f, testdocs.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// TestRasteriseAndRebuild renders a page document, redacts its page
// image, rebuilds the PDF from it and checks with poppler and qpdf that no
// original value, metadata or active content survived, and with tesseract
// that no PII is readable on the redacted page. Each check is first shown
// to fail on the unredacted input.
func TestRasteriseAndRebuild(t *testing.T) {
	needTools(t, "pdftoppm", "pdftotext", "pdfinfo", "pdfdetach", "pdffonts", "qpdf")
	ctx := context.Background()
	dir := t.TempDir()
	d := pageDocs()[0]
	src := filepath.Join(dir, "in.pdf")
	renderPDF(t, d.Page, src)
	rs := []rune(d.Text)
	var originals []string
	for _, s := range d.Spans {
		originals = append(originals, string(rs[s.Start:s.End]))
	}
	if err := raster.CheckPDF(ctx, src, originals); err == nil {
		t.Fatal("CheckPDF passed the unredacted PDF")
	}
	const dpi = 200
	if out, err := exec.Command("pdftoppm", "-r", fmt.Sprint(dpi), "-gray", "-png", src, filepath.Join(dir, "pg")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	img := decodePNG(t, filepath.Join(dir, "pg-1.png"))
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	boxes := raster.PageBoxes(r.Pages(redactsim.Document(d.Page)), 1)
	redacted := raster.DrawBoxes(img, dpi, boxes[0])
	var buf bytes.Buffer
	if err := raster.RebuildPDF(&buf, []raster.PageImage{{Image: redacted, DPI: dpi}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := raster.CheckPDF(ctx, out, originals); err != nil {
		t.Fatal(err)
	}
	checkOCR(t, dir, img, redacted, d)
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// checkOCR: tesseract reads the SSN, card and phone digits on the
// original page image and none of them on the redacted one.
func checkOCR(t *testing.T, dir string, orig, redacted image.Image, d redactcorpus.Doc) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Log("tesseract not installed: OCR check skipped")
		return
	}
	rs := []rune(d.Text)
	var want []string
	for _, s := range d.Spans {
		if s.Type == redactcorpus.SSN || s.Type == redactcorpus.CreditCard || s.Type == redactcorpus.Phone {
			if v := digits(string(rs[s.Start:s.End])); len(v) >= 4 {
				want = append(want, v)
			}
		}
	}
	before, after := ocr(t, dir, "orig", orig), ocr(t, dir, "red", redacted)
	seen := 0
	for _, v := range want {
		if strings.Contains(before, v) {
			seen++
		}
		if strings.Contains(after, v) {
			t.Errorf("OCR reads a redacted number on the output page")
		}
	}
	if seen == 0 {
		t.Fatalf("OCR read none of %d numbers on the original page: the check proves nothing", len(want))
	}
}

func ocr(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	path := filepath.Join(dir, name+".png")
	data, err := raster.RedactImage(encodePNG(t, img), raster.FormatPNG, 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tesseract", path, "-", "--psm", "6").Output()
	if err != nil {
		t.Fatalf("tesseract: %v", err)
	}
	return digits(string(out))
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var _ = result.Box{}
