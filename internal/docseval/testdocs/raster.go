package testdocs

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// rasterizer draws Fixed pages at one resolution. Faces are cached per
// call (opentype faces are not safe for concurrent use).
type rasterizer struct {
	m     *metrics
	dpi   float64
	faces map[faceKey]font.Face
}

type faceKey struct {
	bold bool
	size float64
}

func newRasterizer(dpi float64) (*rasterizer, error) {
	m, err := newMetrics()
	if err != nil {
		return nil, err
	}
	return &rasterizer{m: m, dpi: dpi, faces: map[faceKey]font.Face{}}, nil
}

func (r *rasterizer) px(pt float64) float64 { return pt * r.dpi / 72 }

func (r *rasterizer) face(bold bool, size float64) (font.Face, error) {
	k := faceKey{bold, size}
	if f, ok := r.faces[k]; ok {
		return f, nil
	}
	f, err := opentype.NewFace(r.m.fonts.face(bold), &opentype.FaceOptions{Size: size, DPI: r.dpi, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("face %.1fpt: %w", size, err)
	}
	r.faces[k] = f
	return f, nil
}

// page renders p on a white page of width x height points, drawing hidden
// text exactly as a viewer would show it (white on white, 1 pt specks,
// nothing off the page, a white box over UnderImage text).
func (r *rasterizer) page(p FixedPage, width, height float64) (*image.Gray, error) {
	img := image.NewGray(image.Rect(0, 0, int(math.Ceil(r.px(width))), int(math.Ceil(r.px(height)))))
	fill(img, img.Bounds(), 0xFF)
	for _, rl := range p.Rules {
		r.rule(img, rl)
	}
	for _, it := range p.Items {
		pl, err := place(r.m, it, width)
		if err != nil {
			return nil, err
		}
		if err := r.text(img, it, pl); err != nil {
			return nil, err
		}
		if it.Hidden == UnderImage {
			box := image.Rect(int(r.px(pl.x-1)), int(r.px(it.Y-pl.ascent-1)),
				int(math.Ceil(r.px(pl.x+pl.width+1))), int(math.Ceil(r.px(it.Y+pl.size*0.3+1))))
			fill(img, box, 0xFF)
		}
	}
	return img, nil
}

// text draws glyph by glyph, advancing by the same hmtx widths the PDF
// uses (font.Drawer would add kerning the PDF does not have).
func (r *rasterizer) text(img *image.Gray, it Item, pl placement) error {
	f, err := r.face(it.Bold, pl.size)
	if err != nil {
		return err
	}
	src := image.NewUniform(pl.color())
	x := pl.x
	for _, ch := range it.Text {
		dot := fixed.Point26_6{X: fixed.Int26_6(r.px(x) * 64), Y: fixed.Int26_6(r.px(it.Y) * 64)}
		if dr, mask, mp, _, ok := f.Glyph(dot, ch); ok {
			draw.DrawMask(img, dr, src, image.Point{}, mask, mp, draw.Over)
		}
		adv, err := r.m.advance(ch, it.Bold, pl.size)
		if err != nil {
			return err
		}
		x += adv
	}
	return nil
}

// rule draws a straight line by stamping squares along it.
func (r *rasterizer) rule(img *image.Gray, rl Rule) {
	w := rl.Width
	if w <= 0 {
		w = 0.5
	}
	t := math.Max(1, r.px(w))
	x1, y1, x2, y2 := r.px(rl.X1), r.px(rl.Y1), r.px(rl.X2), r.px(rl.Y2)
	n := int(math.Max(math.Abs(x2-x1), math.Abs(y2-y1))) + 1
	for i := 0; i <= n; i++ {
		f := float64(i) / float64(n)
		cx, cy := x1+(x2-x1)*f, y1+(y2-y1)*f
		fill(img, image.Rect(int(cx-t/2), int(cy-t/2), int(math.Ceil(cx+t/2)), int(math.Ceil(cy+t/2))), 0)
	}
}

func fill(img *image.Gray, r image.Rectangle, v uint8) {
	draw.Draw(img, r.Intersect(img.Bounds()), image.NewUniform(color.Gray{Y: v}), image.Point{}, draw.Src)
}
