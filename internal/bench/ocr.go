package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// OCROptions shape `airlock bench ocr`.
type OCROptions struct {
	Template    string   // a template with airlock-docs (default legal-doc-review)
	DPIs        []int    // scan resolutions of the A4 test page (default 150, 200, 300)
	Concurrency []int    // sandboxes OCRing at once (default 1, 2)
	Runs        int      // rounds per setting (default 1)
	Workers     int      // pages a sandbox OCRs at once (0: one per vCPU)
	Pages       int      // pages per document (default 1)
	Lang        string   // tesseract models (default eng)
	Extra       []string // more airlock-docs flags for every run (e.g. --dotproduct generic)
	// Variants are settings compared in the same run: each adds its own
	// flags to Extra, and their rounds alternate (A B A B ...), so a busy
	// machine slows them alike. Empty: one variant, Extra alone.
	Variants []OCRVariant
	Progress func(format string, a ...any)
}

// OCRVariant is one setting of a comparison: a name and its flags.
type OCRVariant struct {
	Name  string
	Extra []string
}

// OCRResult is one setting's seconds per page.
type OCRResult struct {
	Variant          string // "" without variants
	DPI, Concurrency int
	PageSeconds      []float64 // every page's OCR time, over runs and sandboxes
	WallSeconds      []float64 // each document's tool time, end to end
	// WordsFound and WordsWanted count the page's words OCR read back
	// exactly (a multiset match over every document): speed is worth
	// nothing if the text is wrong.
	WordsFound, WordsWanted int
}

// WordRecall is the share of the page's words OCR read back exactly.
func (r OCRResult) WordRecall() float64 {
	if r.WordsWanted == 0 {
		return 0
	}
	return float64(r.WordsFound) / float64(r.WordsWanted)
}

// Median of the page seconds.
func (r OCRResult) Median() float64 { return median(r.PageSeconds) }

// OCR runs `airlock-docs extract --force-ocr` on a dense A4 scan at each
// resolution, with 1..n sandboxes at once, and collects the guest's own
// per-page OCR times (page_ms of the result envelope).
func OCR(ctx context.Context, sbxs jobs.Sandboxes, o OCROptions) ([]OCRResult, error) {
	o = o.withDefaults()
	dir, err := os.MkdirTemp("", "airlock-bench-ocr-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []OCRResult
	want := pageWords(denseA4Page(), o.Pages)
	for _, dpi := range o.DPIs {
		doc, err := writeScan(dir, dpi, o.Pages)
		if err != nil {
			return nil, err
		}
		for _, c := range o.Concurrency {
			rs := make([]OCRResult, len(o.Variants))
			for run := 0; run < o.Runs; run++ {
				for i, v := range o.Variants {
					rs[i].Variant, rs[i].DPI, rs[i].Concurrency = v.Name, dpi, c
					o.Progress("ocr: %d dpi, %d at once, %s run %d of %d", dpi, c, variantLabel(v), run+1, o.Runs)
					if err := ocrRound(ctx, sbxs, o, v, doc, want, c, &rs[i]); err != nil {
						return nil, fmt.Errorf("bench ocr %d dpi x %d %s: %w", dpi, c, variantLabel(v), err)
					}
				}
			}
			out = append(out, rs...)
		}
	}
	return out, nil
}

func (o OCROptions) withDefaults() OCROptions {
	if o.Template == "" {
		o.Template = "legal-doc-review"
	}
	if len(o.DPIs) == 0 {
		o.DPIs = []int{150, 200, 300}
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 2}
	}
	if o.Runs <= 0 {
		o.Runs = 1
	}
	if o.Pages <= 0 {
		o.Pages = 1
	}
	if o.Lang == "" {
		o.Lang = "eng"
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	if len(o.Variants) == 0 {
		o.Variants = []OCRVariant{{}}
	}
	return o
}

func variantLabel(v OCRVariant) string {
	if v.Name == "" {
		return "as configured"
	}
	return v.Name
}

// ocrRound runs c documents at once and adds their page times to r.
func ocrRound(ctx context.Context, sbxs jobs.Sandboxes, o OCROptions, v OCRVariant, doc jobs.Doc, want map[string]int, c int, r *OCRResult) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append(append([]string{"--force-ocr"}, o.Extra...), v.Extra...)
			if o.Workers > 0 {
				args = append(args, "--ocr-workers", fmt.Sprint(o.Workers))
			}
			env, t, lerr := jobs.RunTool(ctx, sbxs, jobs.ToolRun{Template: o.Template, Job: "extract", Doc: doc,
				Timeout: time.Hour, MaxPages: o.Pages, MaxResult: 64 << 20, Args: args,
				OCR: jobs.OCROptions{Lang: o.Lang, PageTimeout: 30 * time.Minute}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case lerr != nil:
				errs = append(errs, lerr)
			case env.Error != nil:
				errs = append(errs, fmt.Errorf("%s: %s", env.Error.Code, env.Error.Message))
			default:
				found, wanted, err := wordsRead(env.Result, want)
				if err != nil {
					errs = append(errs, err)
					return
				}
				r.WordsFound += found
				r.WordsWanted += wanted
				for _, ms := range env.PageMS {
					r.PageSeconds = append(r.PageSeconds, float64(ms)/1000)
				}
				r.WallSeconds = append(r.WallSeconds, t.Tool.Seconds())
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// writeScan writes an A4 contract page (about 55 lines of 10.5 pt text,
// as dense as a real agreement) scanned at dpi, pages times, as a PDF.
func writeScan(dir string, dpi, pages int) (jobs.Doc, error) {
	page := denseA4Page()
	f := testdocs.Fixed{Width: 595, Height: 842}
	for i := 0; i < pages; i++ {
		f.Pages = append(f.Pages, page)
	}
	var b bytes.Buffer
	if err := testdocs.WriteScan(&b, f, testdocs.Scan{DPI: dpi, Skew: 0.7, Noise: 0.1, JPEG: 80, Seed: int64(dpi)}, testdocs.ScanPDF); err != nil {
		return jobs.Doc{}, err
	}
	p := filepath.Join(dir, fmt.Sprintf("a4-%ddpi.pdf", dpi))
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		return jobs.Doc{}, err
	}
	return jobs.Doc{Path: p, Size: int64(b.Len()), ID: fmt.Sprintf("bench-ocr-%d", dpi)}, nil
}

// denseA4Page is one page of contract text laid out as a real one is.
func denseA4Page() testdocs.FixedPage {
	sentences := []string{
		"The Supplier shall provide the Services with reasonable skill and care and in accordance with",
		"Good Industry Practice, the Specification and all applicable laws, regulations and codes of",
		"practice. The Customer shall pay each undisputed invoice within thirty (30) days of receipt.",
		"Neither party's aggregate liability arising under or in connection with this Agreement shall",
		"exceed the Charges paid in the twelve (12) months preceding the event giving rise to the claim.",
		"Each party shall keep the other's Confidential Information secret for five (5) years after the",
		"termination of this Agreement and use it only for the purposes of performing its obligations.",
	}
	var items []testdocs.Item
	items = append(items, testdocs.Item{X: 60, Y: 70, Text: "MASTER SERVICES AGREEMENT", Size: 14, Bold: true})
	y := 100.0
	for i := 0; y < 790; i++ {
		if i%9 == 0 {
			items = append(items, testdocs.Item{X: 60, Y: y, Text: fmt.Sprintf("%d. Clause %d", i/9+1, i/9+1), Size: 11, Bold: true})
			y += 15
		}
		items = append(items, testdocs.Item{X: 60, Y: y, Text: sentences[i%len(sentences)], Size: 10.5})
		y += 13
	}
	return testdocs.FixedPage{Items: items}
}

// pageWords is the multiset of words on pages copies of page.
func pageWords(page testdocs.FixedPage, pages int) map[string]int {
	want := map[string]int{}
	for _, it := range page.Items {
		for _, w := range strings.Fields(it.Text) {
			want[w] += pages
		}
	}
	return want
}

// wordsRead counts how many of want's words the extract result (the
// guest's pages of lines) holds, each at most as often as wanted. The
// result is decoded leniently but bounded: it is the benchmark's own
// page, read back for a score, never a user's document.
func wordsRead(raw []byte, want map[string]int) (found, wanted int, err error) {
	var doc struct {
		Pages []struct {
			Lines []struct {
				Text string `json:"text"`
			} `json:"lines"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, 0, fmt.Errorf("extract result: %w", err)
	}
	got := map[string]int{}
	for _, p := range doc.Pages {
		for _, l := range p.Lines {
			for _, w := range strings.Fields(l.Text) {
				got[w]++
			}
		}
	}
	for w, n := range want {
		found += min(n, got[w])
		wanted += n
	}
	return found, wanted, nil
}

// FormatOCR is the table `airlock bench ocr` prints. With variants, each
// row's page time is also given as a ratio to the first variant's at the
// same resolution and concurrency (measured in the same run).
func FormatOCR(rs []OCRResult) string {
	var b strings.Builder
	variants := len(rs) > 0 && rs[0].Variant != ""
	if variants {
		fmt.Fprintf(&b, "%-12s ", "variant")
	}
	fmt.Fprintf(&b, "%-6s %-9s %-7s %-22s %-21s %-11s", "dpi", "at once", "pages", "s/page p50 (min-max)", "document wall s p50", "words read")
	if variants {
		fmt.Fprintf(&b, " %s", "vs first")
	}
	b.WriteString("\n")
	base := map[[2]int]float64{}
	for _, r := range rs {
		s := append([]float64(nil), r.PageSeconds...)
		sort.Float64s(s)
		lo, hi := 0.0, 0.0
		if len(s) > 0 {
			lo, hi = s[0], s[len(s)-1]
		}
		if variants {
			fmt.Fprintf(&b, "%-12s ", r.Variant)
		}
		fmt.Fprintf(&b, "%-6d %-9d %-7d %-22s %-21.1f %-11s", r.DPI, r.Concurrency, len(r.PageSeconds),
			fmt.Sprintf("%.1f (%.1f-%.1f)", median(s), lo, hi), median(r.WallSeconds), fmt.Sprintf("%.1f%%", 100*r.WordRecall()))
		if variants {
			key := [2]int{r.DPI, r.Concurrency}
			if _, ok := base[key]; !ok {
				base[key] = median(s)
			}
			if base[key] > 0 {
				fmt.Fprintf(&b, " %.2f", median(s)/base[key])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
