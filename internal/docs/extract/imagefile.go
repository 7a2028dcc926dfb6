package extract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"os"
)

// Images have no page size of their own; their resolution metadata (PNG
// pHYs, JPEG JFIF density, TIFF XResolution) says how many pixels make an
// inch. Values outside this range are junk (72 dpi from cameras is kept:
// it is at least consistent), and assumedDPI stands in.
const (
	minTrustedDPI = 70
	maxTrustedDPI = 2400
	assumedDPI    = 300
)

func trustDPI(dpi float64) float64 {
	if dpi < minTrustedDPI || dpi > maxTrustedDPI {
		return assumedDPI
	}
	return dpi
}

// extractImage reads a PNG or JPEG: dimensions first (from the header
// alone), then the full decode, then OCR.
func (x *extraction) extractImage(ctx context.Context) error {
	f, err := os.Open(x.in.path)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	cfg, err := decodeConfig(x.in.kind, f)
	if err != nil {
		return unreadable("the %s header is invalid", x.in.kind)
	}
	if err := x.checkPixels(1, cfg.Width, cfg.Height); err != nil {
		return err
	}
	dpi := trustDPI(imageDPI(x.in.kind, f))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	img, err := decodeImage(x.in.kind, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return unreadable("the %s image is corrupt or truncated", x.in.kind)
	}
	return x.ocrImage(ctx, toGray(img), dpi, 1)
}

func decodeConfig(k kind, r io.Reader) (image.Config, error) {
	if k == kindPNG {
		return png.DecodeConfig(bufio.NewReader(r))
	}
	return jpeg.DecodeConfig(bufio.NewReader(r))
}

func decodeImage(k kind, r io.Reader) (image.Image, error) {
	if k == kindPNG {
		return png.Decode(r)
	}
	return jpeg.Decode(r)
}

// checkPixels refuses a page image over MaxPixelsPerPage before anything
// allocates it.
func (x *extraction) checkPixels(page, w, h int) error {
	if w <= 0 || h <= 0 {
		return unreadable("page %d has no pixels", page)
	}
	if int64(w)*int64(h) > x.o.MaxPixelsPerPage {
		return tooLarge("page %d is %d x %d pixels, over the limit of %d", page, w, h, x.o.MaxPixelsPerPage)
	}
	return nil
}

func toGray(img image.Image) *image.Gray {
	if g, ok := img.(*image.Gray); ok {
		return g
	}
	g := image.NewGray(img.Bounds())
	draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
	if g.Rect.Min != (image.Point{}) {
		g.Rect = g.Rect.Sub(g.Rect.Min)
	}
	return g
}

// imageDPI reads the resolution from the header, 0 when absent.
func imageDPI(k kind, r io.ReaderAt) float64 {
	if k == kindPNG {
		return pngDPI(r)
	}
	return jfifDPI(r)
}

// pngDPI walks the chunks before IDAT looking for pHYs (unit: metre).
func pngDPI(r io.ReaderAt) float64 {
	off := int64(8)
	for range 64 {
		var hdr [8]byte
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return 0
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		switch string(hdr[4:]) {
		case "IDAT", "IEND":
			return 0
		case "pHYs":
			var b [9]byte
			if n != 9 {
				return 0
			}
			if _, err := r.ReadAt(b[:], off+8); err != nil || b[8] != 1 {
				return 0
			}
			return float64(binary.BigEndian.Uint32(b[:4])) * 0.0254
		}
		off += 12 + n
	}
	return 0
}

// jfifDPI reads the JFIF APP0 density right after SOI.
func jfifDPI(r io.ReaderAt) float64 {
	var b [18]byte
	if _, err := r.ReadAt(b[:], 0); err != nil {
		return 0
	}
	if b[2] != 0xFF || b[3] != 0xE0 || !bytes.Equal(b[6:11], []byte("JFIF\x00")) {
		return 0
	}
	d := float64(binary.BigEndian.Uint16(b[14:16]))
	switch b[13] {
	case 1:
		return d
	case 2:
		return d * 2.54
	}
	return 0
}
