package redactcorpus

import (
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// metrics measures text the way internal/docseval/testdocs sets it: the
// embedded Go fonts, advance widths from hmtx, no kerning. Truth boxes are
// only as good as this agreement, so it is the same arithmetic, not an
// approximation (the renderer's own helper is unexported).
type metrics struct {
	regular, bold *sfnt.Font
	buf           sfnt.Buffer
}

func newMetrics() *metrics {
	r, err1 := sfnt.Parse(goregular.TTF)
	b, err2 := sfnt.Parse(gobold.TTF)
	if err1 != nil || err2 != nil {
		// The fonts are compiled in; failing to parse them is a broken build.
		panic("corpus: the embedded Go fonts do not parse")
	}
	return &metrics{regular: r, bold: b}
}

func (m *metrics) face(bold bool) *sfnt.Font {
	if bold {
		return m.bold
	}
	return m.regular
}

// width is s's advance width in points at size. A rune the font lacks
// counts half an em: the renderer refuses such text anyway, so the
// document fails loudly when written, not here.
func (m *metrics) width(s string, bold bool, size float64) float64 {
	f := m.face(bold)
	upem := f.UnitsPerEm()
	w := 0.0
	for _, r := range s {
		idx, err := f.GlyphIndex(&m.buf, r)
		if err != nil || idx == 0 {
			w += size / 2
			continue
		}
		adv, err := f.GlyphAdvance(&m.buf, idx, fixed.I(int(upem)), font.HintingNone)
		if err != nil {
			w += size / 2
			continue
		}
		w += float64(adv) / 64 / float64(upem) * size
	}
	return w
}

// extent is how far glyphs reach above and below the baseline at size:
// the font's ascent and descent, as pdftotext reports a word's box.
func (m *metrics) extent(bold bool, size float64) (up, down float64) {
	f := m.face(bold)
	upem := f.UnitsPerEm()
	fm, err := f.Metrics(&m.buf, fixed.I(int(upem)), font.HintingNone)
	if err != nil {
		return 0.9 * size, 0.22 * size
	}
	scale := size / 64 / float64(upem)
	return float64(fm.Ascent) * scale, math.Abs(float64(fm.Descent)) * scale
}
