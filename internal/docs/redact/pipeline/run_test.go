package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/redact/raster"
	redactresult "github.com/airlock-dev/airlock/internal/docs/redact/result"
	"github.com/airlock-dev/airlock/internal/docs/verify"
	verifyresult "github.com/airlock-dev/airlock/internal/docs/verify/result"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// These mirror cmd/airlock-docs/redact_cmd.go and verify_cmd.go, which
// are package main and cannot be imported. Keep them in step: the point
// is to measure exactly what the guest does.

// redactDPI is the guest's rebuild resolution (redact_cmd.go).
const redactDPI = 150

var textFormats = map[string]string{".txt": "text", ".json": "json", ".csv": "csv"}

// redactFile redacts in into outDir under the same name, as the guest's
// redact command does, and returns the findings and the output path.
func redactFile(ctx context.Context, r *redact.Redactor, in, outDir string) ([]redact.Finding, string, error) {
	out := filepath.Join(outDir, filepath.Base(in))
	ext := strings.ToLower(filepath.Ext(in))
	if f, ok := textFormats[ext]; ok {
		b, err := os.ReadFile(in)
		if err != nil {
			return nil, "", err
		}
		var o *redact.Output
		switch f {
		case "json":
			o, err = r.JSON(b)
		case "csv":
			o, err = r.CSV(b)
		default:
			o, err = r.Text(b)
		}
		if err != nil {
			return nil, "", err
		}
		return o.Findings, out, os.WriteFile(out, o.Data, 0o644)
	}
	data, findings, err := redactPages(ctx, r, in, ext == ".pdf")
	if err != nil {
		return nil, "", err
	}
	return findings, out, os.WriteFile(out, data, 0o644)
}

// redactPages is redact_cmd.go's redactPages for PDFs and PNGs.
func redactPages(ctx context.Context, r *redact.Redactor, in string, pdf bool) ([]byte, []redact.Finding, error) {
	o := extract.Options{}
	doc, err := extract.Extract(ctx, in, o)
	if err != nil {
		return nil, nil, fmt.Errorf("extract: %w", err)
	}
	findings := r.Pages(doc)
	boxes := raster.PageBoxes(findings, len(doc.Pages))
	pages, err := extract.PageImages(ctx, in, doc, redactDPI, o)
	if err != nil {
		return nil, nil, fmt.Errorf("page images: %w", err)
	}
	var buf bytes.Buffer
	if pdf || len(pages) > 1 {
		imgs := make([]raster.PageImage, len(pages))
		for i, p := range pages {
			imgs[i] = raster.PageImage{Image: raster.DrawBoxes(p.Image, p.DPI, boxes[i]), DPI: p.DPI}
		}
		err = raster.RebuildPDF(&buf, imgs)
	} else {
		err = writePNG(&buf, pages[0], boxes[0])
	}
	return buf.Bytes(), findings, err
}

func writePNG(w io.Writer, p extract.PageImage, boxes []redactresult.Box) error {
	g, ok := raster.DrawBoxes(p.Image, p.DPI, boxes).(*image.Gray)
	if !ok {
		return fmt.Errorf("the page did not stay gray")
	}
	return testdocs.WriteImages(w, []*image.Gray{g}, testdocs.Scan{DPI: int(p.DPI + 0.5)}, testdocs.ScanPNG)
}

// verifyFile is the guest's verify command: text as it is, pages OCRed
// whatever their text layer says, then the canaries over the same text.
// It also returns the text it read, for the harness's own canary check.
func verifyFile(ctx context.Context, path string, canaries []string) (*verifyresult.Report, string, error) {
	if _, ok := textFormats[strings.ToLower(filepath.Ext(path))]; ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", err
		}
		text := string(b)
		return verify.WithCanaries(verify.Check(text), verify.FindCanaries(text, canaries)), text, nil
	}
	doc, err := extract.Extract(ctx, path, extract.Options{ForceOCR: true})
	if err != nil {
		return nil, "", fmt.Errorf("verify extract: %w", err)
	}
	rep := verify.CheckPages(doc)
	var text strings.Builder
	for _, p := range doc.Pages {
		text.WriteString(p.Text())
		text.WriteByte('\n')
	}
	return verify.WithCanaries(rep, verify.FindCanaries(text.String(), canaries)), text.String(), nil
}
