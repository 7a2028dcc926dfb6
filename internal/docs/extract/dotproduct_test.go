package extract

import (
	"context"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// TestDotProductsReadText: every dot product a caller may choose, and the
// ones "auto" resolves to, read a clean scan correctly. Debian 12's
// tesseract returns garbage with "sse" and "avx"; this is the test that
// keeps them out.
func TestDotProductsReadText(t *testing.T) {
	needTools(t, "tesseract")
	png := writeFile(t, "page.png", scan(t, invoicePage(), testdocs.Scan{DPI: 300}, testdocs.ScanPNG))
	for _, dp := range append([]string{"", EmulatedDotProduct}, DotProducts...) {
		for _, emulated := range []bool{false, true} {
			doc, err := Extract(context.Background(), png, Options{DotProduct: dp, Emulated: emulated})
			if err != nil {
				t.Fatalf("dotproduct %q emulated %v: %v", dp, emulated, err)
			}
			text := pageText(doc.Pages[0])
			for _, want := range []string{"Invoice", "INV-2041", "Northwind", "Traders", "1,234.56"} {
				if !strings.Contains(text, want) {
					t.Errorf("dotproduct %q emulated %v: %q not in %q", dp, emulated, want, text)
				}
			}
		}
	}
}

func TestSafeDotProduct(t *testing.T) {
	for _, tc := range []struct {
		emulated bool
		flags    string
		want     string
	}{
		{true, "sse4_1 avx avx2 fma", EmulatedDotProduct},
		{false, "sse4_1 avx avx2 fma", "auto"},
		{false, "sse4_1 fma", "auto"},
		{false, "sse4_1 avx", "generic"},  // tesseract would pick its AVX code
		{false, "sse2 sse4_1", "generic"}, // ... or its SSE code
		{false, "", "generic"},            // flags unknown
	} {
		flags := map[string]bool{}
		for _, f := range strings.Fields(tc.flags) {
			flags[f] = true
		}
		if got := safeDotProduct(tc.emulated, flags); got != tc.want {
			t.Errorf("emulated %v flags %q: %q, want %q", tc.emulated, tc.flags, got, tc.want)
		}
	}
	if o := (Options{DotProduct: "auto", Emulated: true}).withDefaults(); o.DotProduct != EmulatedDotProduct {
		t.Errorf("auto under emulation resolved to %q", o.DotProduct)
	}
	if o := (Options{DotProduct: "native", Emulated: true}).withDefaults(); o.DotProduct != "native" {
		t.Errorf("an explicit choice was overridden: %q", o.DotProduct)
	}
}

func pageText(p Page) string {
	var lines []string
	for _, l := range p.Lines {
		lines = append(lines, l.Text)
	}
	return strings.Join(lines, "\n")
}
