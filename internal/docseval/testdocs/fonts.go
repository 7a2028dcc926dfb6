package testdocs

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

// The Go fonts cover Latin (with the accented letters of European
// languages), Greek and Cyrillic, i.e. WGL4; they have no CJK, Arabic,
// Hebrew, Devanagari or Thai glyphs. Text outside the fonts is refused with
// an error rather than rendered as empty boxes, so a fixture never silently
// loses the characters a test is about.

// fontSet is the two parsed faces. sfnt.Font is safe for concurrent use as
// long as every caller brings its own sfnt.Buffer, which metrics does.
type fontSet struct {
	regular, bold *sfnt.Font
}

// loadFonts parses the embedded TTFs once; the result is never mutated.
var loadFonts = sync.OnceValues(func() (*fontSet, error) {
	r, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("parse goregular: %w", err)
	}
	b, err := sfnt.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("parse gobold: %w", err)
	}
	return &fontSet{regular: r, bold: b}, nil
})

func (fs *fontSet) face(bold bool) *sfnt.Font {
	if bold {
		return fs.bold
	}
	return fs.regular
}

// metrics measures strings the way fpdf lays them out: advance widths from
// hmtx, no kerning. The raster renderer advances by the same numbers, so a
// scan and its PDF put every glyph in the same place.
type metrics struct {
	fonts *fontSet
	buf   sfnt.Buffer
}

func newMetrics() (*metrics, error) {
	fs, err := loadFonts()
	if err != nil {
		return nil, err
	}
	return &metrics{fonts: fs}, nil
}

// advance is one rune's advance in points at size.
func (m *metrics) advance(r rune, bold bool, size float64) (float64, error) {
	f := m.fonts.face(bold)
	idx, err := f.GlyphIndex(&m.buf, r)
	if err != nil {
		return 0, fmt.Errorf("glyph for %U: %w", r, err)
	}
	if idx == 0 && !unicode.IsSpace(r) {
		return 0, fmt.Errorf("the Go fonts have no glyph for %U %q", r, r)
	}
	upem := f.UnitsPerEm()
	adv, err := f.GlyphAdvance(&m.buf, idx, fixed.I(int(upem)), font.HintingNone)
	if err != nil {
		return 0, fmt.Errorf("advance of %U: %w", r, err)
	}
	return float64(adv) / 64 / float64(upem) * size, nil
}

// width is s's advance width in points.
func (m *metrics) width(s string, bold bool, size float64) (float64, error) {
	w := 0.0
	for _, r := range s {
		a, err := m.advance(r, bold, size)
		if err != nil {
			return 0, err
		}
		w += a
	}
	return w, nil
}

// ascent is the font's ascent in points at size (for covering boxes).
func (m *metrics) ascent(bold bool, size float64) (float64, error) {
	f := m.fonts.face(bold)
	upem := f.UnitsPerEm()
	fm, err := f.Metrics(&m.buf, fixed.I(int(upem)), font.HintingNone)
	if err != nil {
		return 0, fmt.Errorf("font metrics: %w", err)
	}
	return float64(fm.Ascent) / 64 / float64(upem) * size, nil
}
