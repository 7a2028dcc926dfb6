package testdocs

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// degrade makes a clean page look scanned, in the order a real scan
// happens: paper tint, crooked placement, optics blur, sensor noise,
// lossy compression, then the fax threshold. rng makes it repeatable.
func degrade(img *image.Gray, s Scan, rng *rand.Rand) (*image.Gray, error) {
	paper := uint8(255)
	if s.Darkness > 0 {
		paper = tint(img, s.Darkness)
	}
	if s.Skew != 0 {
		img = rotate(img, s.Skew, paper)
	}
	if r := int(math.Round(s.Blur)); r > 0 {
		img = boxBlur(img, r)
	}
	if s.Noise > 0 {
		addNoise(img, s.Noise, rng)
	}
	if s.JPEG > 0 {
		var err error
		if img, err = jpegRoundTrip(img, s.JPEG); err != nil {
			return nil, err
		}
	}
	if s.Bilevel {
		threshold(img, 128)
	}
	return img, nil
}

// tint darkens the page towards d (0..1) with a left-to-right gradient,
// like old paper or a phone photo's uneven light, and returns the colour
// the paper ends up (the fill for corners a rotation exposes).
func tint(img *image.Gray, d float64) uint8 {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[(y-b.Min.Y)*img.Stride:]
		for x := 0; x < b.Dx(); x++ {
			f := 1 - d*(0.25+0.15*float64(x)/float64(b.Dx()))
			row[x] = uint8(float64(row[x]) * f)
		}
	}
	return uint8(255 * (1 - d*0.25))
}

// rotate turns img by deg clockwise about its centre, keeping its size.
func rotate(img *image.Gray, deg float64, paper uint8) *image.Gray {
	b := img.Bounds()
	dst := image.NewGray(b)
	fill(dst, b, paper)
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	cx, cy := float64(b.Dx())/2, float64(b.Dy())/2
	// In y-down pixel space this matrix turns the page clockwise.
	m := f64.Aff3{c, -s, cx - c*cx + s*cy, s, c, cy - s*cx - c*cy}
	draw.BiLinear.Transform(dst, m, img, b, draw.Src, nil)
	return dst
}

// boxBlur is a separable box filter of radius r (two passes look enough
// like optical blur for OCR to struggle realistically).
func boxBlur(img *image.Gray, r int) *image.Gray {
	for range 2 {
		img = blurPass(img, r, true)
		img = blurPass(img, r, false)
	}
	return img
}

func blurPass(src *image.Gray, r int, horizontal bool) *image.Gray {
	b := src.Bounds()
	dst := image.NewGray(b)
	w, h := b.Dx(), b.Dy()
	outer, inner := h, w
	if !horizontal {
		outer, inner = w, h
	}
	at := func(o, i int) int {
		if horizontal {
			return o*src.Stride + i
		}
		return i*src.Stride + o
	}
	for o := 0; o < outer; o++ {
		sum, n := 0, 0
		for i := 0; i < r && i < inner; i++ {
			sum += int(src.Pix[at(o, i)])
			n++
		}
		for i := 0; i < inner; i++ {
			if j := i + r; j < inner {
				sum += int(src.Pix[at(o, j)])
				n++
			}
			if j := i - r - 1; j >= 0 {
				sum -= int(src.Pix[at(o, j)])
				n--
			}
			dst.Pix[at(o, i)] = uint8(sum / n)
		}
	}
	return dst
}

// addNoise flips a share of pixels to black or white (dust, toner specks)
// and jitters the rest (sensor noise), both scaled by n (0..1).
func addNoise(img *image.Gray, n float64, rng *rand.Rand) {
	speck := n * 0.01
	jitter := n * 40
	for i, v := range img.Pix {
		switch p := rng.Float64(); {
		case p < speck/2:
			img.Pix[i] = 0
		case p < speck:
			img.Pix[i] = 255
		default:
			d := (rng.Float64()*2 - 1) * jitter
			img.Pix[i] = uint8(math.Max(0, math.Min(255, float64(v)+d)))
		}
	}
}

func jpegRoundTrip(img *image.Gray, q int) (*image.Gray, error) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		return nil, fmt.Errorf("jpeg encode: %w", err)
	}
	out, err := jpeg.Decode(&b)
	if err != nil {
		return nil, fmt.Errorf("jpeg decode: %w", err)
	}
	g, ok := out.(*image.Gray)
	if !ok {
		return nil, fmt.Errorf("jpeg decoded as %T, want gray", out)
	}
	return g, nil
}

func threshold(img *image.Gray, t uint8) {
	for i, v := range img.Pix {
		if v < t {
			img.Pix[i] = 0
		} else {
			img.Pix[i] = 255
		}
	}
}
