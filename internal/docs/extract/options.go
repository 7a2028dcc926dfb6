package extract

import (
	"os"
	"runtime"
	"strings"
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
	// OCRLang is tesseract's -l argument. Default "eng". Several models
	// joined with '+' ("eng+deu") are all tried on every page. Several
	// joined with ',' ("eng,deu,fra") are a choice (OCRLangChoice).
	OCRLang string
	// OCRLangChoice, when it names more than one model, replaces OCRLang:
	// the first OCR page's middle band is read with the first model and
	// the document is then OCRed with the one model its words show
	// (function words, common invoice and contract terms), or with all of
	// them joined when none stands out. Reading every page with four
	// models costs about four times one.
	OCRLangChoice []string
	// PageTimeout bounds the OCR of one page: rendering, tesseract and
	// any second pass over faint print. Default DefaultPageTimeout, or
	// DefaultPageTimeoutEmulated when the guest is emulated (Emulated).
	PageTimeout time.Duration
	// OCRWorkers is how many pages are OCRed at once. Default: one per CPU
	// the guest has.
	OCRWorkers int
	// Emulated says the guest's CPU is emulated (QEMU TCG): pages get
	// DefaultPageTimeoutEmulated and tesseract's dot product is
	// EmulatedDotProduct. The platform says so in every sandbox's
	// environment (AIRLOCK_ACCEL=tcg; see EmulatedFromEnv).
	Emulated bool
	// DotProduct is tesseract's dotproduct, one of DotProducts. "" or
	// "auto": EmulatedDotProduct when Emulated; tesseract's own choice on
	// a CPU with AVX2 or FMA; "generic" on any other CPU, because there
	// tesseract would choose its SSE or AVX code, which reads garbage.
	DotProduct string
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
	// DefaultPageTimeout is the OCR limit per page on a host with
	// hardware virtualisation, DefaultPageTimeoutEmulated under
	// emulation, where a dense 300-dpi page takes minutes.
	DefaultPageTimeout         = 2 * time.Minute
	DefaultPageTimeoutEmulated = 6 * time.Minute
)

// EmulatedFromEnv reports whether the platform said the guest's CPU is
// emulated (AIRLOCK_ACCEL=tcg in the sandbox's environment).
func EmulatedFromEnv() bool { return os.Getenv("AIRLOCK_ACCEL") == "tcg" }

// DotProducts are the tesseract dot products a caller may ask for. The
// SSE and AVX ones are left out: with the float models of Debian 12's
// tesseract 5.3.0 they return garbage ("_é§HS_«#»Y2" for "Dear Grace"),
// and TestDotProductsReadText holds every listed one to the right text.
var DotProducts = []string{"auto", "generic", "native", "avx2", "fma"}

// EmulatedDotProduct is the dot product under CPU emulation (QEMU TCG),
// the fastest one that reads correctly there (`airlock bench ocr`; see
// the README's OCR numbers).
const EmulatedDotProduct = "generic"

// safeDotProduct resolves "auto": tesseract picks by CPU flags, and picks
// its broken SSE or AVX code on a CPU without AVX2 and FMA.
func safeDotProduct(emulated bool, flags map[string]bool) string {
	switch {
	case emulated:
		return EmulatedDotProduct
	case flags["avx2"] || flags["fma"]:
		return "auto"
	default:
		return "generic"
	}
}

// cpuFlags reads this CPU's feature flags from /proc/cpuinfo (none when
// it cannot be read, which resolves to the safe generic dot product).
func cpuFlags() map[string]bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(name) == "flags" {
			flags := map[string]bool{}
			for _, f := range strings.Fields(value) {
				flags[f] = true
			}
			return flags
		}
	}
	return nil
}

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
	if strings.Contains(o.OCRLang, ",") {
		o.OCRLangChoice = strings.FieldsFunc(o.OCRLang, func(r rune) bool { return r == ',' })
		o.OCRLang = ""
	}
	if len(o.OCRLangChoice) == 1 {
		o.OCRLang, o.OCRLangChoice = o.OCRLangChoice[0], nil
	}
	if o.OCRLang == "" {
		o.OCRLang = DefaultOCRLang
		if len(o.OCRLangChoice) > 1 {
			// Until the choice is made (and the fallback when it cannot
			// be): every candidate.
			o.OCRLang = strings.Join(o.OCRLangChoice, "+")
		}
	}
	if o.PageTimeout <= 0 {
		o.PageTimeout = DefaultPageTimeout
		if o.Emulated {
			o.PageTimeout = DefaultPageTimeoutEmulated
		}
	}
	if o.OCRWorkers <= 0 {
		o.OCRWorkers = runtime.NumCPU()
	}
	if o.DotProduct == "" || o.DotProduct == "auto" {
		o.DotProduct = safeDotProduct(o.Emulated, cpuFlags())
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	return o
}
