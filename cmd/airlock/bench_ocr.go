package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/bench"
)

func newBenchOCRCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	var (
		o                   bench.OCROptions
		dpis, concurrencies string
		dotProducts         []string
	)
	cmd := &cobra.Command{
		Use:   "ocr [--template T] [--dpis 150,200,300] [--at-once 1,2] [--runs N]",
		Short: "Seconds per scanned A4 page, read by OCR in sandboxes, at several resolutions and sandboxes at once",
		Long: `Scan a dense A4 contract page at each resolution (a PDF of one gray JPEG
image, 0.7 degrees of skew, light noise), then read it with
"airlock-docs extract --force-ocr" in 1..N sandboxes of the template at
once, and print the seconds each page's OCR took in the guest (rendering,
deskewing, tesseract), the median over every page and run, with the tool's
wall time per document. Sandboxes run in this process unless --url names a
daemon. --extra passes more airlock-docs flags (e.g. "--dotproduct generic");
--dotproducts compares several in the same run, alternating rounds so that
a busy machine slows them alike, with each row's ratio to the first. The
share of the page's words read back exactly is reported beside every time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.DPIs, err = intList(dpis); err != nil {
				return usageError{fmt.Errorf("--dpis: %w", err)}
			}
			if o.Concurrency, err = intList(concurrencies); err != nil {
				return usageError{fmt.Errorf("--at-once: %w", err)}
			}
			for _, dp := range dotProducts {
				o.Variants = append(o.Variants, bench.OCRVariant{Name: dp, Extra: []string{"--dotproduct", dp}})
			}
			o.Progress = func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
			sbxs, release, err := jf.sandboxes(cmd.Context())
			if err != nil {
				return err
			}
			defer release()
			rs, err := bench.OCR(cmd.Context(), sbxs, o)
			if err != nil {
				return err
			}
			fmt.Print(bench.FormatOCR(rs))
			return nil
		},
	}
	jf.register(cmd, g)
	f := cmd.Flags()
	f.StringVar(&o.Template, "template", "legal-doc-review", "template with airlock-docs")
	f.StringVar(&dpis, "dpis", "150,200,300", "scan resolutions")
	f.StringVar(&concurrencies, "at-once", "1,2", "sandboxes OCRing at once")
	f.IntVar(&o.Runs, "runs", 1, "rounds per setting")
	f.IntVar(&o.Pages, "pages", 1, "pages per document")
	f.IntVar(&o.Workers, "ocr-workers", 0, "pages a sandbox OCRs at once (0: one per vCPU)")
	f.StringSliceVar(&o.Extra, "extra", nil, "more airlock-docs flags, comma-separated")
	f.StringSliceVar(&dotProducts, "dotproducts", nil, "compare tesseract dot products in one run, rounds alternating, each row also as a ratio to the first (e.g. generic,native,avx2,fma)")
	return cmd
}

// intList parses "150,200,300".
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}
