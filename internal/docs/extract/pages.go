package extract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"

	"golang.org/x/image/tiff"

	"github.com/airlock-dev/airlock/internal/docs"
)

// PageImage is one page of a document as pixels, for jobs that write the
// document back as images (redaction rasterises and rebuilds).
type PageImage struct {
	Image *image.Gray
	DPI   float64
}

// PageImages renders every page of the document Extract read from path:
// PDF pages by pdftoppm at dpi (lowered per page to stay within the pixel
// limit, as for OCR), image pages decoded as they are. Boxes in doc map
// onto them through their DPI (points * DPI / 72). The same limits and
// error codes as Extract apply; it is meant to run after Extract succeeded.
func PageImages(ctx context.Context, path string, doc *Document, dpi int, opts Options) ([]PageImage, error) {
	o := opts.withDefaults()
	o.DPI = dpi
	o.MinDPI = min(o.MinDPI, dpi)
	in, err := openInput(path, o)
	if err != nil {
		return nil, err
	}
	switch in.kind {
	case kindPDF:
		return pdfPageImages(ctx, in, doc, o)
	case kindTIFF:
		return tiffPageImages(in, o)
	default:
		return singleImage(in, o)
	}
}

func pdfPageImages(ctx context.Context, in input, doc *Document, o Options) ([]PageImage, error) {
	out := make([]PageImage, 0, len(doc.Pages))
	for i, p := range doc.Pages {
		s := pageSize{w: p.Width, h: p.Height}
		dpi, err := pageDPI(i+1, s, o)
		if err != nil {
			return nil, err
		}
		img, err := renderPDFPage(ctx, in.path, i+1, s, dpi, o)
		if err != nil {
			return nil, err
		}
		out = append(out, PageImage{Image: img, DPI: float64(dpi)})
	}
	return out, nil
}

func tiffPageImages(in input, o Options) ([]PageImage, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	t, err := readTIFFDirs(f, in.size, o.MaxPages, o.MaxPixelsPerPage)
	if err != nil {
		return nil, err
	}
	out := make([]PageImage, 0, len(t.dirs))
	for i, d := range t.dirs {
		img, err := decodeTIFFPage(t, i)
		var unsupported tiff.UnsupportedError
		switch {
		case errors.As(err, &unsupported):
			// Readable by tesseract but not by Go: it cannot be redacted
			// in place, and a page left out would be a silent loss.
			return nil, docs.Errorf(docs.CodeUnsupported, "TIFF page %d uses an encoding this tool cannot rewrite", i+1)
		case err != nil:
			return nil, unreadable("TIFF page %d is corrupt or truncated", i+1)
		}
		out = append(out, PageImage{Image: img, DPI: trustDPI(d.dpi)})
	}
	return out, nil
}

func singleImage(in input, o Options) ([]PageImage, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	cfg, err := decodeConfig(in.kind, f)
	if err != nil {
		return nil, unreadable("the %s header is invalid", in.kind)
	}
	if int64(cfg.Width)*int64(cfg.Height) > o.MaxPixelsPerPage {
		return nil, tooLarge("the image is %d x %d pixels, over the limit of %d", cfg.Width, cfg.Height, o.MaxPixelsPerPage)
	}
	dpi := trustDPI(imageDPI(in.kind, f))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	img, err := decodeImage(in.kind, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, unreadable("the %s image is corrupt or truncated", in.kind)
	}
	return []PageImage{{Image: toGray(img), DPI: dpi}}, nil
}
