package imagewrite

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/tiff"
)

func page(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	return img
}

// Each format decodes back to the page, carries its resolution, and a
// single-page format refuses two pages.
func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, []*image.Gray{page(40, 30)}, PNG, Options{DPI: 300}); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b.Bytes())); err != nil || !bytes.Contains(b.Bytes(), []byte("pHYs")) {
		t.Fatalf("png: %v", err)
	}
	i := bytes.Index(b.Bytes(), []byte("pHYs"))
	if ppm := binary.BigEndian.Uint32(b.Bytes()[i+4:]); ppm != 11811 { // 300 dpi in pixels per metre
		t.Errorf("png pHYs %d px/m, want 11811", ppm)
	}
	b.Reset()
	if err := Write(&b, []*image.Gray{page(40, 30)}, JPEG, Options{DPI: 150}); err != nil {
		t.Fatal(err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(b.Bytes())); err != nil || !bytes.Contains(b.Bytes()[:20], []byte("JFIF")) {
		t.Fatalf("jpeg: %v", err)
	}
	b.Reset()
	if err := Write(&b, []*image.Gray{page(40, 30), page(20, 10)}, TIFF, Options{DPI: 200}); err != nil {
		t.Fatal(err)
	}
	img, err := tiff.Decode(bytes.NewReader(b.Bytes()))
	if err != nil || img.Bounds().Dx() != 40 {
		t.Fatalf("tiff: %v %v", img, err)
	}
	if err := Write(&b, []*image.Gray{page(4, 4), page(4, 4)}, PNG, Options{}); err == nil {
		t.Error("two pages as one PNG were accepted")
	}
}
