//go:build unix

package hidden

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// MaxTextBytes bounds what gs's text device may return for one document.
const MaxTextBytes = 32 << 20

// OffPageWords returns, by page number, the words a PDF draws outside its
// pages (pdftotext drops them, so extraction never sees them, but any
// other reader of the file may). It runs gs's txtwrite device, which
// keeps every glyph with its position, and keeps the words whose box lies
// off the page of w x h points, for the injection screen to read; they
// never reach a field. sizes gives each page's size in points.
func OffPageWords(ctx context.Context, cfg RenderConfig, pdfPath string, first, last int, sizes map[int][2]float64) (map[int][]extract.Word, error) {
	cfg = cfg.withDefaults()
	if first < 1 || last < first {
		return nil, fmt.Errorf("off-page text %d..%d: bad range", first, last)
	}
	abs, err := filepath.Abs(pdfPath)
	if err != nil {
		return nil, fmt.Errorf("off-page text: %w", err)
	}
	var out bytes.Buffer
	w := &limitedWriter{buf: &out, max: MaxTextBytes}
	args := []string{"-sDEVICE=txtwrite", "-dTextFormat=0", "-sOutputFile=-",
		fmt.Sprintf("-dFirstPage=%d", first), fmt.Sprintf("-dLastPage=%d", last), abs}
	if err := gsRun(ctx, cfg, args, w); err != nil {
		return nil, fmt.Errorf("gs text: %w", err)
	}
	res := map[int][]extract.Word{}
	for i, pg := range ParseTxtwrite(out.String()) {
		n := first + i
		size, ok := sizes[n]
		if !ok {
			continue
		}
		for _, wd := range pg {
			if offPage(DefaultConfig(), size[0], size[1], wd.Box) {
				res[n] = append(res[n], wd)
			}
		}
	}
	return res, nil
}

// ParseTxtwrite reads gs txtwrite -dTextFormat=0 output into words per
// page: each <span> (a font run at one baseline) is split at spaces, and
// a word's box spans its characters, from ascent to descent of the size.
func ParseTxtwrite(s string) [][]extract.Word {
	var pages [][]extract.Word
	for _, chunk := range strings.Split(s, "<page>")[1:] {
		var words []extract.Word
		for _, span := range strings.Split(chunk, "<span ")[1:] {
			words = append(words, spanWords(span)...)
		}
		pages = append(pages, words)
	}
	return pages
}

func spanWords(span string) []extract.Word {
	size := attrFloat(span, "size")
	if size <= 0 {
		size = 10
	}
	var words []extract.Word
	var cur []rune
	var box extract.Box
	flush := func() {
		if len(cur) > 0 {
			words = append(words, extract.Word{Text: string(cur), Box: box, Conf: -1})
		}
		cur = nil
	}
	for _, ch := range strings.Split(span, "<char ")[1:] {
		var x0, y0, x1, y1 float64
		if _, err := fmt.Sscanf(attr(ch, "bbox"), "%g %g %g %g", &x0, &y0, &x1, &y1); err != nil {
			continue
		}
		c := unescapeXML(attr(ch, "c"))
		if strings.TrimSpace(c) == "" {
			flush()
			continue
		}
		b := extract.Box{XMin: x0, YMin: y0 - 0.718*size, XMax: x1, YMax: y1 + 0.207*size}
		if len(cur) == 0 {
			box = b
		} else {
			box.XMax, box.YMin, box.YMax = max(box.XMax, b.XMax), min(box.YMin, b.YMin), max(box.YMax, b.YMax)
		}
		cur = append(cur, []rune(c)...)
	}
	flush()
	return words
}

func attr(s, name string) string {
	_, rest, ok := strings.Cut(s, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

func attrFloat(s, name string) float64 {
	var f float64
	if _, err := fmt.Sscanf(attr(s, name), "%g", &f); err != nil {
		return 0
	}
	return f
}

func unescapeXML(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&").Replace(s)
}
