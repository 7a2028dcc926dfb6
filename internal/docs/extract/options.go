package extract

import (
	"os"
	"time"
)

// Options are the limits and knobs of one extraction. The zero value is
// usable: every unset field takes its default.
type Options struct {
	// MaxBytes refuses larger input files (too_large). Default 256 MiB.
	MaxBytes int64
	// MaxPages refuses documents with more pages (too_large), decided from
	// pdfinfo or the TIFF directory chain before anything is rendered.
	// Default 500.
	MaxPages int
	// MaxPixelsPerPage caps the pixels of one page handed to OCR (and of
	// any image decoded). Default 40e6.
	MaxPixelsPerPage int64
	// DPI is the resolution pages are rasterised at for OCR; a scanned
	// page (one page-sized image) is rasterised at its image's own
	// resolution instead, when that is lower, but not below 150 or MinDPI.
	// A page that would exceed MaxPixelsPerPage is rasterised at a lower
	// DPI, down to MinDPI; below that it is too_large. Defaults 300 and
	// 150.
	DPI, MinDPI int
	// MinTextChars: a PDF page whose text layer has fewer non-space
	// characters is OCRed instead. Default 20.
	MinTextChars int
	// ToolTimeout bounds each external tool run. Default 2 minutes.
	ToolTimeout time.Duration
	// TotalTimeout bounds the whole extraction. Default 15 minutes.
	TotalTimeout time.Duration
	// OCRLang is tesseract's -l argument. Default "eng".
	OCRLang string
	// ForceOCR OCRs every page, ignoring any text layer.
	ForceOCR bool
	// TempDir is where page images for tesseract are written (and removed
	// again). Default os.TempDir().
	TempDir string
}

// Defaults.
const (
	DefaultMaxBytes         = 256 << 20
	DefaultMaxPages         = 500
	DefaultMaxPixelsPerPage = 40_000_000
	DefaultDPI              = 300
	DefaultMinDPI           = 150
	DefaultMinTextChars     = 20
	DefaultToolTimeout      = 2 * time.Minute
	DefaultTotalTimeout     = 15 * time.Minute
	DefaultOCRLang          = "eng"
)

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxPixelsPerPage <= 0 {
		o.MaxPixelsPerPage = DefaultMaxPixelsPerPage
	}
	if o.DPI <= 0 {
		o.DPI = DefaultDPI
	}
	if o.MinDPI <= 0 {
		o.MinDPI = DefaultMinDPI
	}
	o.MinDPI = min(o.MinDPI, o.DPI)
	if o.MinTextChars <= 0 {
		o.MinTextChars = DefaultMinTextChars
	}
	if o.ToolTimeout <= 0 {
		o.ToolTimeout = DefaultToolTimeout
	}
	if o.TotalTimeout <= 0 {
		o.TotalTimeout = DefaultTotalTimeout
	}
	if o.OCRLang == "" {
		o.OCRLang = DefaultOCRLang
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	return o
}
