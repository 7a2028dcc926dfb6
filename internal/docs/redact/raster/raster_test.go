package raster

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

func whitePage(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	return img
}

// TestRedactImageFormats: a box at 72..144 pt on a 144 dpi image covers
// pixels 144..288, in each format, which is kept.
func TestRedactImageFormats(t *testing.T) {
	src := whitePage(400, 400)
	box := []result.Box{{XMin: 72, YMin: 72, XMax: 144, YMax: 144}}
	encoders := map[string]func(*bytes.Buffer) error{
		FormatPNG:  func(b *bytes.Buffer) error { return png.Encode(b, src) },
		FormatJPEG: func(b *bytes.Buffer) error { return jpeg.Encode(b, src, nil) },
		FormatTIFF: func(b *bytes.Buffer) error { return tiff.Encode(b, src, nil) },
	}
	for format, enc := range encoders {
		var in bytes.Buffer
		if err := enc(&in); err != nil {
			t.Fatal(err)
		}
		out, err := RedactImage(in.Bytes(), format, 144, box)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		img, got, err := image.Decode(bytes.NewReader(out))
		if err != nil || got != format {
			t.Fatalf("%s: decoded as %q: %v", format, got, err)
		}
		if gray(img.At(200, 200)) > 40 || gray(img.At(100, 100)) < 200 || gray(img.At(300, 300)) < 200 {
			t.Errorf("%s: box not where expected", format)
		}
	}
	if _, err := RedactImage([]byte("not an image"), FormatPNG, 72, nil); err == nil {
		t.Fatal("garbage decoded")
	}
	_, err := RedactImage(nil, "bmp", 72, nil)
	var de *docs.Error
	if err == nil || !errorsAs(err, &de) || de.Code != docs.CodeUnsupported {
		t.Fatalf("bmp: %v", err)
	}
}

func gray(c color.Color) uint8 { return color.GrayModel.Convert(c).(color.Gray).Y }

// TestPagesBoxesAndSkew: a finding across two lines gets one padded box
// per line; on a deskewed OCR page the boxes are used as extraction gives
// them, since it has already mapped them back onto the page as it is
// (turning them again put them off the words by twice the skew).
func errorsAs(err error, target **docs.Error) bool {
	e, ok := err.(*docs.Error)
	if ok {
		*target = e
	}
	return ok
}
