package extract

import (
	"context"
	"fmt"
	"image"
	"os"
	"sync"
	"time"
)

// Timings are how long extraction's phases took. They are not part of the
// Document's JSON: the result envelope reports them as timings_ms.
type Timings struct {
	Probe      time.Duration // pdfinfo, or reading image headers
	Text       time.Duration // pdftotext
	OCR        time.Duration // rasterising, deskewing and tesseract (wall time, pages in parallel)
	LangDetect time.Duration // the language-choice pass, part of OCR
}

// Extract reads the document at path into pages of lines and words. Every
// failure the document can cause is a *docs.Error with a job error code;
// other errors are environment problems (internal).
func Extract(ctx context.Context, path string, opts Options) (*Document, error) {
	o := opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, o.TotalTimeout)
	defer cancel()
	in, err := openInput(path, o)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.TempDir, "airlock-extract-")
	if err != nil {
		return nil, fmt.Errorf("scratch dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	x := &extraction{in: in, o: o, tmp: tmp, doc: &Document{}}
	if o.OCRLang != "" && len(o.OCRLangChoice) < 2 {
		x.doc.OCRLang = o.OCRLang
	}
	switch in.kind {
	case kindPDF:
		err = x.extractPDF(ctx)
	case kindTIFF:
		err = x.extractTIFF(ctx)
	default:
		err = x.extractImage(ctx)
	}
	if err != nil {
		return nil, err
	}
	return x.doc, nil
}

// extraction is the state of one Extract call.
type extraction struct {
	in  input
	o   Options // OCRLang settles once chooseLanguage ran, before pages run in parallel
	tmp string
	doc *Document
	mu  sync.Mutex // guards doc.PageOCR while pages run in parallel
}

// extractPDF: limits from pdfinfo first, then the text layer, then OCR of
// the pages whose text layer is too thin, each checked against the pixel
// limit before the first one is rendered.
func (x *extraction) extractPDF(ctx context.Context) error {
	start := time.Now()
	info, err := probePDF(ctx, x.in, x.o)
	x.doc.Timings.Probe = time.Since(start)
	if err != nil {
		return err
	}
	pages, err := x.textPages(ctx, info)
	if err != nil {
		return err
	}
	var ocr []int
	for i := range pages {
		if x.o.ForceOCR || textChars(pages[i]) < x.o.MinTextChars {
			ocr = append(ocr, i)
		}
	}
	dpis, err := x.ocrDPIs(ctx, info, ocr)
	if err != nil {
		return err
	}
	x.doc.Pages = pages
	if err := x.ocrPDFPages(ctx, info, ocr, dpis); err != nil {
		return err
	}
	if len(ocr) == 0 {
		x.doc.OCRLang = ""
	}
	return nil
}

// textPages is one Page per PDF page from the text layer (empty pages
// where pdftotext gave none, or all empty under ForceOCR).
func (x *extraction) textPages(ctx context.Context, info pdfInfo) ([]Page, error) {
	pages := make([]Page, info.pages)
	for i := range pages {
		pages[i] = Page{Number: i + 1, Width: info.sizes[i].w, Height: info.sizes[i].h, Method: MethodText, OCRConfidence: -1}
	}
	if x.o.ForceOCR {
		return pages, nil
	}
	start := time.Now()
	text, err := readTextLayer(ctx, x.in.path, info.pages, x.o)
	x.doc.Timings.Text = time.Since(start)
	if err != nil {
		return nil, err
	}
	for i := range min(len(text), len(pages)) {
		text[i].Number = i + 1
		pages[i] = text[i]
	}
	return pages, nil
}

// ocrDPIs picks the resolution of each page to OCR (indexed like the
// pages): a scanned page's own, others the configured DPI, each lowered to
// the pixel limit. Every page is checked before the first is rendered.
func (x *extraction) ocrDPIs(ctx context.Context, info pdfInfo, ocr []int) ([]int, error) {
	dpis := make([]int, info.pages)
	if len(ocr) == 0 {
		return dpis, nil
	}
	start := time.Now()
	native, err := scanDPIs(ctx, x.in.path, info, x.o)
	x.doc.Timings.Probe += time.Since(start)
	if err != nil {
		return nil, err
	}
	for _, i := range ocr {
		o := x.o
		if d, ok := native[i]; ok {
			o.DPI = d
		}
		if dpis[i], err = pageDPI(i+1, info.sizes[i], o); err != nil {
			return nil, err
		}
	}
	return dpis, nil
}

// ocrImage OCRs one decoded page image (page n, in order) and appends it,
// choosing the language on the first.
func (x *extraction) ocrImage(ctx context.Context, img *image.Gray, dpi float64, n int) error {
	start := time.Now()
	defer func() { x.doc.Timings.OCR += time.Since(start) }()
	return x.withinPageTimeout(ctx, n, func(ctx context.Context) error {
		if n == 1 {
			if err := x.chooseLanguage(ctx, img, dpi, n); err != nil {
				return err
			}
		}
		p, err := ocrGray(ctx, img, dpi, n, x.tmp, x.o)
		if err != nil {
			return err
		}
		x.doc.Pages = append(x.doc.Pages, p)
		return nil
	})
}
