package draftcorpus

import (
	"fmt"
	"sync"
	"unicode"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The typesetter measures words in the Go fonts that testdocs draws
// them in (advance widths, no kerning), so a line it sets never runs
// into the next column or cell.

var parseFonts = sync.OnceValues(func() ([2]*sfnt.Font, error) {
	r, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		return [2]*sfnt.Font{}, fmt.Errorf("parse goregular: %w", err)
	}
	b, err := sfnt.Parse(gobold.TTF)
	if err != nil {
		return [2]*sfnt.Font{}, fmt.Errorf("parse gobold: %w", err)
	}
	return [2]*sfnt.Font{r, b}, nil
})

// measurer caches advance widths; it is used by one goroutine.
type measurer struct {
	fonts [2]*sfnt.Font
	buf   sfnt.Buffer
	adv   map[[2]rune]float64 // {rune, bold} -> advance at size 1
}

func newMeasurer() (*measurer, error) {
	fs, err := parseFonts()
	if err != nil {
		return nil, err
	}
	return &measurer{fonts: fs, adv: map[[2]rune]float64{}}, nil
}

// width is s's advance in points at size; a rune the fonts cannot draw
// is an error, as in testdocs.
func (m *measurer) width(s string, bold bool, size float64) (float64, error) {
	b := rune(0)
	if bold {
		b = 1
	}
	w := 0.0
	for _, r := range s {
		a, ok := m.adv[[2]rune{r, b}]
		if !ok {
			f := m.fonts[b]
			idx, err := f.GlyphIndex(&m.buf, r)
			if err != nil {
				return 0, fmt.Errorf("glyph for %U: %w", r, err)
			}
			if idx == 0 && !unicode.IsSpace(r) {
				return 0, fmt.Errorf("the Go fonts have no glyph for %U %q", r, r)
			}
			upem := f.UnitsPerEm()
			x, err := f.GlyphAdvance(&m.buf, idx, fixed.I(int(upem)), font.HintingNone)
			if err != nil {
				return 0, fmt.Errorf("advance of %U: %w", r, err)
			}
			a = float64(x) / 64 / float64(upem)
			m.adv[[2]rune{r, b}] = a
		}
		w += a * size
	}
	return w, nil
}
