package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/imagewrite"
	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/redact/raster"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Formats by extension. Text formats are told apart by the name (their
// bytes say nothing reliable); page formats are sniffed by extraction,
// which refuses a file that is not what its name claims.
var textFormats = map[string]string{".txt": "text", ".text": "text", ".md": "text", ".log": "text", "": "text",
	".json": "json", ".csv": "csv"}

var pageFormats = map[string]string{".pdf": "pdf", ".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg",
	".tif": "tiff", ".tiff": "tiff"}

// redactDPI is the resolution PDF pages are rebuilt at: readable when
// printed, small enough to rasterise quickly under emulation.
const redactDPI = 150

// redactCommand writes the document back redacted, in the same format,
// and a result listing what was found (offsets and types, never values).
func redactCommand() command {
	var output, policyPath, saltHex string
	var o extract.Options
	return command{
		name:    "redact",
		summary: "redact personal data from text, JSON, CSV, PDF or image files, in the same format",
		common:  true,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&output, "output", "", "where to write the redacted document (default /job/out/<input name>)")
			fs.StringVar(&policyPath, "policy", "", "redaction policy, YAML or JSON (default: every type, replaced by <TYPE>)")
			fs.StringVar(&saltHex, "salt", "", "hex salt for the hash operator (16+ bytes)")
			fs.BoolVar(&o.ForceOCR, "force-ocr", false, "OCR every page of a PDF, ignoring any text layer")
		},
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			if output == "" {
				output = filepath.Join("/job/out", filepath.Base(inv.in))
			}
			r, err := newRedactor(policyPath, saltHex)
			if err != nil {
				return &docs.Envelope{Error: docs.AsError(err)}
			}
			ext := strings.ToLower(filepath.Ext(inv.in))
			if f, ok := textFormats[ext]; ok {
				return redactText(inv, r, f, output)
			}
			if f, ok := pageFormats[ext]; ok {
				return redactPages(ctx, inv, r, f, output, o)
			}
			return &docs.Envelope{Error: docs.Errorf(docs.CodeUnsupported, "files named %q are not a format this job reads", ext)}
		},
	}
}

func newRedactor(policyPath, saltHex string) (*redact.Redactor, error) {
	opts := redact.Options{}
	if policyPath != "" {
		b, err := readBounded(policyPath, 1<<20)
		if err != nil {
			return nil, docs.Errorf(docs.CodeInvalidArg, "policy: %v", err)
		}
		if opts.Policy, err = policy.Parse(policyPath, b); err != nil {
			return nil, err
		}
	}
	if saltHex != "" {
		s, err := hex.DecodeString(saltHex)
		if err != nil {
			return nil, docs.Errorf(docs.CodeInvalidArg, "--salt is not hex")
		}
		opts.Salt = s
	}
	return redact.New(opts)
}

func readBounded(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), max)
	}
	return os.ReadFile(path)
}

// redactText handles text, JSON and CSV: the redactor rewrites the bytes.
func redactText(inv *invocation, r *redact.Redactor, format, output string) *docs.Envelope {
	env := &docs.Envelope{TimingsMS: map[string]int64{}, Pages: 0}
	max := int64(redact.DefaultLimits().MaxTextBytes)
	if inv.maxBytes > 0 {
		max = min(max, inv.maxBytes)
	}
	in, err := readBounded(inv.in, max)
	if err != nil {
		env.Error = docs.Errorf(docs.CodeTooLarge, "%v", err)
		if errors.Is(err, os.ErrNotExist) {
			env.Error = docs.Errorf(docs.CodeUnreadable, "the input is missing")
		}
		return env
	}
	start := time.Now()
	var out *redact.Output
	switch format {
	case "json":
		out, err = r.JSON(in)
	case "csv":
		out, err = r.CSV(in)
	default:
		out, err = r.Text(in)
	}
	env.TimingsMS["redact"] = time.Since(start).Milliseconds()
	if err != nil {
		env.Error = docs.AsError(err)
		return env
	}
	return finishRedaction(env, format, output, out.Data, out.Findings, out.Truncated)
}

// redactPages handles PDFs and images: extraction finds the words (text
// layer or OCR), the redactor boxes the findings, and the document is
// rebuilt from its page images with the boxes painted in. Nothing of the
// original file but its pixels survives: no text layer, metadata,
// annotation, form or attachment.
func redactPages(ctx context.Context, inv *invocation, r *redact.Redactor, format, output string, o extract.Options) *docs.Envelope {
	doc, env := extractDocument(ctx, inv, o)
	if env.Error != nil {
		return env
	}
	start := time.Now()
	findings := r.Pages(doc)
	boxes := raster.PageBoxes(findings, len(doc.Pages))
	pages, err := extract.PageImages(ctx, inv.in, doc, redactDPI, o)
	if err != nil {
		env.Error = docs.AsError(err)
		return env
	}
	var buf bytes.Buffer
	switch {
	case format == "pdf" || len(pages) > 1 && format != "tiff":
		imgs := make([]raster.PageImage, len(pages))
		for i, p := range pages {
			imgs[i] = raster.PageImage{Image: raster.DrawBoxes(p.Image, p.DPI, boxes[i]), DPI: p.DPI}
		}
		err = raster.RebuildPDF(&buf, imgs)
		format = "pdf"
	default:
		err = writeImages(&buf, format, pages, boxes)
	}
	env.TimingsMS["redact"] = time.Since(start).Milliseconds()
	if err != nil {
		env.Error = docs.AsError(err)
		return env
	}
	return finishRedaction(env, format, output, buf.Bytes(), findings, false)
}

// finishRedaction writes the output file and the result.
func finishRedaction(env *docs.Envelope, format, output string, data []byte, findings []redact.Finding, truncated bool) *docs.Envelope {
	if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
		env.Error = docs.Errorf(docs.CodeInternal, "output dir: %v", err)
		return env
	}
	if err := os.WriteFile(output, data, 0o644); err != nil {
		env.Error = docs.Errorf(docs.CodeInternal, "write the output: %v", err)
		return env
	}
	timings := map[string]int{}
	for k, v := range env.TimingsMS {
		timings[k] = int(v)
	}
	res := redact.NewResult(format, filepath.Base(output), format, data, findings, truncated, timings)
	return withResult(env, res)
}

// writeImages writes redacted page images back in the input's image
// format: PNG and JPEG hold one page, TIFF every page.
func writeImages(w io.Writer, format string, pages []extract.PageImage, boxes [][]result.Box) error {
	grays := make([]*image.Gray, len(pages))
	for i, p := range pages {
		g, ok := raster.DrawBoxes(p.Image, p.DPI, boxes[i]).(*image.Gray)
		if !ok {
			return docs.Errorf(docs.CodeInternal, "page %d did not stay gray", i+1)
		}
		grays[i] = g
	}
	f, ok := imagewrite.FormatOf(format)
	if !ok {
		return docs.Errorf(docs.CodeInternal, "no writer for %q images", format)
	}
	return imagewrite.Write(w, grays, f, imagewrite.Options{DPI: int(pages[0].DPI + 0.5)})
}
