package bench

import (
	"strings"
	"testing"
)

func TestWordsRead(t *testing.T) {
	want := pageWords(denseA4Page(), 2)
	total := 0
	for _, n := range want {
		total += n
	}
	// Every line of the page, once: half the words of two pages.
	var lines []string
	for _, it := range denseA4Page().Items {
		lines = append(lines, `{"text": "`+it.Text+`"}`)
	}
	raw := `{"pages": [{"lines": [` + strings.Join(lines, ",") + `]}], "ocr_lang": "eng"}`
	found, wanted, err := wordsRead([]byte(raw), want)
	if err != nil || wanted != total || 2*found != total {
		t.Fatalf("found %d of %d (total %d), err %v", found, wanted, total, err)
	}
	// Garbage reads nothing; a word read more often than wanted counts once.
	found, _, err = wordsRead([]byte(`{"pages": [{"lines": [{"text": "_é§HS_«#»Y2 #Y2&/=/&§"}, {"text": "the the the"}]}]}`), map[string]int{"the": 1, "Supplier": 1})
	if err != nil || found != 1 {
		t.Fatalf("found %d, err %v", found, err)
	}
	if _, _, err := wordsRead([]byte(`{"pages": 3}`), want); err == nil {
		t.Fatal("a malformed result was read")
	}
	out := FormatOCR([]OCRResult{{DPI: 150, Concurrency: 1, PageSeconds: []float64{3}, WallSeconds: []float64{4}, WordsFound: 9, WordsWanted: 10}})
	if !strings.Contains(out, "90.0%") {
		t.Fatalf("table without the word share:\n%s", out)
	}
}

func TestFormatOCRVariants(t *testing.T) {
	out := FormatOCR([]OCRResult{
		{Variant: "generic", DPI: 150, Concurrency: 1, PageSeconds: []float64{10, 12}, WordsFound: 1, WordsWanted: 1},
		{Variant: "avx2", DPI: 150, Concurrency: 1, PageSeconds: []float64{15, 15}, WordsFound: 1, WordsWanted: 1},
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "vs first") || !strings.HasSuffix(lines[1], " 1.00") || !strings.HasSuffix(lines[2], " 1.36") {
		t.Fatalf("table:\n%s", out)
	}
}
