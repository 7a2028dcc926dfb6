package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// extractCommand writes the extract.Document itself as the result: every
// page's lines and words with boxes, the method used and OCR confidence.
func extractCommand() command {
	var o extract.Options
	return command{
		name:    "extract",
		summary: "read a PDF, PNG, JPEG or TIFF into pages of lines and words",
		common:  true,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.ForceOCR, "force-ocr", false, "OCR every page, ignoring any text layer")
			fs.IntVar(&o.DPI, "dpi", 0, "rasterisation resolution for OCR (0 = 300)")
			fs.IntVar(&o.MinTextChars, "min-text-chars", 0, "OCR pages with fewer text-layer characters (0 = 20)")
		},
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			doc, env := extractDocument(ctx, inv, o)
			if env.Error != nil {
				return env
			}
			return withResult(env, doc)
		},
	}
}

// extractDocument runs extraction with the invocation's limits and
// returns the document and an envelope carrying its page counts and
// timings (or the classified error). Job commands start from here.
func extractDocument(ctx context.Context, inv *invocation, o extract.Options) (*extract.Document, *docs.Envelope) {
	o.MaxPages = inv.maxPages
	o.MaxBytes = inv.maxBytes
	o.TotalTimeout = inv.timeout
	o.PageTimeout = inv.pageTimeout
	o.OCRWorkers = inv.ocrWorkers
	o.Emulated = extract.EmulatedFromEnv()
	o.DotProduct = inv.dotProduct
	o.OCRLang = ocrLanguages(inv.lang, o.OCRLang)
	start := time.Now()
	doc, err := extract.Extract(ctx, inv.in, o)
	env := &docs.Envelope{TimingsMS: map[string]int64{"extract": time.Since(start).Milliseconds()}}
	if err != nil {
		env.Error = docs.AsError(err)
		return nil, env
	}
	env.Pages = len(doc.Pages)
	env.OCRPages = doc.OCRPages()
	env.TimingsMS["probe"] = doc.Timings.Probe.Milliseconds()
	env.TimingsMS["text"] = doc.Timings.Text.Milliseconds()
	env.TimingsMS["ocr"] = doc.Timings.OCR.Milliseconds()
	if doc.Timings.LangDetect > 0 {
		env.TimingsMS["ocr_lang"] = doc.Timings.LangDetect.Milliseconds()
	}
	env.OCRLang = doc.OCRLang
	if doc.OCRPages() > 0 {
		env.PageMS = make([]int64, len(doc.PageOCR))
		for i, d := range doc.PageOCR {
			env.PageMS[i] = d.Milliseconds()
		}
	}
	return doc, env
}

// ocrLanguages is --lang, else $AIRLOCK_OCR_LANGS (a template's default),
// else the job's default: "eng" one model, "eng+deu" several on every
// page, "eng,deu" several to choose one from (extract.Options).
func ocrLanguages(flagValue, jobDefault string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := os.Getenv("AIRLOCK_OCR_LANGS"); v != "" && validLang(v) {
		return v
	}
	return jobDefault
}

// validLang accepts "" and model names joined by '+' or ','.
func validLang(v string) bool {
	if v == "" {
		return true
	}
	if len(v) > 200 || strings.Contains(v, "+") && strings.Contains(v, ",") {
		return false
	}
	for _, m := range strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' }) {
		for _, r := range m {
			if !(r >= 'a' && r <= 'z' || r == '_') {
				return false
			}
		}
	}
	return !strings.HasPrefix(v, "+") && !strings.HasSuffix(v, "+") && !strings.HasPrefix(v, ",") && !strings.HasSuffix(v, ",") &&
		!strings.Contains(v, "++") && !strings.Contains(v, ",,")
}

// withResult encodes result into env.
func withResult(env *docs.Envelope, result any) *docs.Envelope {
	b, err := json.Marshal(result)
	if err != nil {
		env.Error = docs.Errorf(docs.CodeInternal, "encode result: %v", err)
		return env
	}
	env.Result = b
	return env
}
