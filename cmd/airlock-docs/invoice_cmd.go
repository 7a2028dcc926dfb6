package main

import (
	"context"
	"flag"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
)

// invoiceCommand extracts an invoice's fields as claims: values with where
// each came from and how sure the tool is, plus hidden text and
// instruction-like text found in any layer. The host decides; this never
// does.
func invoiceCommand() command {
	var o extract.Options
	var dayFirst bool
	var modelURL, model string
	return command{
		name:    "invoice",
		summary: "extract an invoice (PDF, PNG, JPEG, TIFF) into fields with sources and confidence",
		common:  true,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.ForceOCR, "force-ocr", false, "OCR every page, ignoring any text layer")
			fs.BoolVar(&dayFirst, "day-first", false, "read ambiguous dates as day/month (European vendors)")
			fs.StringVar(&modelURL, "model-url", "", "OpenAI-compatible API root for a second reading, e.g. http://llm.internal/v1 (reached through the egress proxy; no key here)")
			fs.StringVar(&model, "model", "", "model name for --model-url")
		},
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			o.OCRLang = invoice.OCRLanguages // the default when --lang and $AIRLOCK_OCR_LANGS say nothing
			doc, env := extractDocument(ctx, inv, o)
			if env.Error != nil {
				return env
			}
			opts := invoice.Options{}
			if dayFirst {
				opts.DateOrder = invoice.OrderDMY
			}
			start := time.Now()
			if err := inkCheck(ctx, inv.in, doc, &opts); err != nil {
				env.Error = docs.AsError(err)
				return env
			}
			env.TimingsMS["ink"] = time.Since(start).Milliseconds()
			start = time.Now()
			ex, err := invoice.New()
			if err != nil {
				env.Error = docs.AsError(err)
				return env
			}
			res, err := ex.Extract(doc, opts)
			env.TimingsMS["analyse"] = time.Since(start).Milliseconds()
			if err != nil {
				env.Error = docs.AsError(err)
				return env
			}
			if modelURL != "" {
				start = time.Now()
				askModel(ctx, newModelClient(modelURL, model), ex.VisibleText(doc, opts), res)
				env.TimingsMS["model"] = time.Since(start).Milliseconds()
			}
			return withResult(env, res)
		},
	}
}

// inkCheck renders a PDF's text-layer pages twice with ghostscript (as
// printed, and with text filtered out) and reads the text it draws off the
// page, so the extractor can tell which words of the text layer a reader
// would actually see. Images have no text layer and need none of it.
func inkCheck(ctx context.Context, path string, doc *extract.Document, opts *invoice.Options) error {
	pages := invoice.TextPages(doc)
	if len(pages) == 0 {
		return nil
	}
	first, last := pages[0], pages[len(pages)-1]
	cfg := hidden.RenderConfig{}
	renders, err := hidden.RenderPages(ctx, cfg, path, first, last)
	if err != nil {
		return err
	}
	sizes := map[int][2]float64{}
	for _, n := range pages {
		p := doc.Pages[n-1]
		sizes[n] = [2]float64{p.Width, p.Height}
	}
	off, err := hidden.OffPageWords(ctx, cfg, path, first, last, sizes)
	if err != nil {
		return err
	}
	opts.Renders, opts.OffPage = renders, off
	return nil
}
