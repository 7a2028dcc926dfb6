package hidden

import (
	"image"
	"image/color"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

const testDPI = 72 // one pixel per point keeps the fixtures readable

func blank(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	return img
}

func fill(img *image.Gray, r image.Rectangle, v uint8) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
}

// glyphs inks every other pixel of r, roughly like text strokes.
func glyphs(img *image.Gray, r image.Rectangle, v uint8) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
}

func TestClassify(t *testing.T) {
	word := extract.Box{XMin: 100, YMin: 100, XMax: 140, YMax: 112}
	wr := image.Rect(100, 100, 140, 112)
	tests := []struct {
		name  string
		box   extract.Box
		setup func(n, f *image.Gray)
		noImg bool
		want  Verdict
	}{
		{"black text", word, func(n, f *image.Gray) { glyphs(n, wr, 0) }, false, Verdict{Visible: true}},
		{"faint gray print is still visible", word, func(n, f *image.Gray) { glyphs(n, wr, 180) }, false, Verdict{Visible: true}},
		{"light gray just over the ink threshold", word, func(n, f *image.Gray) { glyphs(n, wr, 230) }, false, Verdict{Visible: true}},
		{"near-white is low contrast", word, func(n, f *image.Gray) { glyphs(n, wr, 250) }, false, Verdict{Kind: result.HiddenLowContrast}},
		{"white on white", word, func(n, f *image.Gray) {}, false, Verdict{Kind: result.HiddenWhite}},
		{"under an opaque image", word, func(n, f *image.Gray) { fill(n, wr, 120); fill(f, wr, 120) }, false, Verdict{Kind: result.HiddenCovered}},
		{"half under an image is visible", word, func(n, f *image.Gray) {
			glyphs(n, wr, 0)
			half := image.Rect(100, 100, 120, 112)
			fill(n, half, 120)
			fill(f, half, 120)
		}, false, Verdict{Visible: true}},
		{"one stray pixel is not ink", word, func(n, f *image.Gray) { n.SetGray(110, 105, color.Gray{}) }, false, Verdict{Kind: result.HiddenWhite}},
		{"off the right edge", extract.Box{XMin: 700, YMin: 100, XMax: 740, YMax: 112}, nil, false, Verdict{Kind: result.HiddenOffPage}},
		{"above the page", extract.Box{XMin: 100, YMin: -30, XMax: 140, YMax: -18}, nil, false, Verdict{Kind: result.HiddenOffPage}},
		{"mostly off the page", extract.Box{XMin: 596, YMin: 100, XMax: 636, YMax: 112}, nil, false, Verdict{Kind: result.HiddenOffPage}},
		{"slightly over the edge stays on page", extract.Box{XMin: 580, YMin: 100, XMax: 620, YMax: 112}, func(n, f *image.Gray) {
			glyphs(n, image.Rect(580, 100, 612, 112), 0)
		}, false, Verdict{Visible: true}},
		{"tiny print", extract.Box{XMin: 100, YMin: 100, XMax: 110, YMax: 101.2}, nil, false, Verdict{Kind: result.HiddenTiny}},
		{"small but readable print", extract.Box{XMin: 100, YMin: 100, XMax: 110, YMax: 104}, func(n, f *image.Gray) {
			glyphs(n, image.Rect(100, 100, 110, 104), 0)
		}, false, Verdict{Visible: true}},
		{"no render: geometry only", word, nil, true, Verdict{Visible: true}},
		{"no render still catches tiny", extract.Box{XMin: 1, YMin: 1, XMax: 5, YMax: 2}, nil, true, Verdict{Kind: result.HiddenTiny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *Render
			if !tt.noImg {
				n, f := blank(612, 792), blank(612, 792)
				if tt.setup != nil {
					tt.setup(n, f)
				}
				r = &Render{DPI: testDPI, Normal: n, NoText: f}
			}
			got := Classify(DefaultConfig(), 612, 792, tt.box, r)
			if got != tt.want {
				t.Errorf("Classify = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClassifyScalesBoxesByDPI(t *testing.T) {
	// At 144 dpi a box at x=100pt covers pixels 200..280: ink drawn at
	// the unscaled position must not count.
	n, f := blank(1224, 1584), blank(1224, 1584)
	glyphs(n, image.Rect(100, 100, 140, 112), 0)
	r := &Render{DPI: 144, Normal: n, NoText: f}
	box := extract.Box{XMin: 100, YMin: 100, XMax: 140, YMax: 112}
	if got := Classify(DefaultConfig(), 612, 792, box, r); got.Visible {
		t.Fatalf("ink at unscaled position counted: %+v", got)
	}
	glyphs(n, image.Rect(200, 200, 280, 224), 0)
	if got := Classify(DefaultConfig(), 612, 792, box, r); !got.Visible {
		t.Fatalf("ink at scaled position missed: %+v", got)
	}
}

func TestRenderMatches(t *testing.T) {
	tests := []struct {
		name string
		r    *Render
		want bool
	}{
		{"same size", &Render{DPI: 72, Normal: blank(612, 792), NoText: blank(612, 792)}, true},
		{"rounded at 100 dpi", &Render{DPI: 100, Normal: blank(850, 1100), NoText: blank(850, 1100)}, true},
		{"rotated", &Render{DPI: 72, Normal: blank(792, 612), NoText: blank(792, 612)}, false},
		{"renders differ", &Render{DPI: 72, Normal: blank(612, 792), NoText: blank(612, 790)}, false},
		{"no dpi", &Render{Normal: blank(612, 792), NoText: blank(612, 792)}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := tt.r.Matches(612, 792); got != tt.want {
			t.Errorf("%s: Matches = %v", tt.name, got)
		}
	}
}
