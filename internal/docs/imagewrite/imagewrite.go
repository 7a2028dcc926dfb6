package imagewrite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math"
)

// Format is the container pages are written in.
type Format int

const (
	PNG  Format = iota // one page; pHYs carries the DPI
	JPEG               // one page; JFIF density carries the DPI
	TIFF               // every page; Deflate gray, or CCITT G4 when Bilevel
)

func (f Format) String() string {
	switch f {
	case PNG:
		return "png"
	case JPEG:
		return "jpeg"
	case TIFF:
		return "tiff"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf is the Format named by "png", "jpeg" or "tiff".
func FormatOf(name string) (Format, bool) {
	switch name {
	case "png":
		return PNG, true
	case "jpeg", "jpg":
		return JPEG, true
	case "tiff", "tif":
		return TIFF, true
	}
	return 0, false
}

// Options shape what Write writes.
type Options struct {
	DPI         int  // the pages' resolution, written into the file (0 = 200)
	JPEGQuality int  // 1..100 (0 = 90)
	Bilevel     bool // TIFF pages as CCITT G4 black and white (a fax)
}

// Write writes pages in format f. PNG and JPEG hold one page and refuse
// more.
func Write(w io.Writer, pages []*image.Gray, f Format, o Options) error {
	if len(pages) == 0 {
		return errors.New("no pages to write")
	}
	if (f == PNG || f == JPEG) && len(pages) > 1 {
		return fmt.Errorf("%s holds one page, got %d: use TIFF", f, len(pages))
	}
	if o.DPI <= 0 {
		o.DPI = 200
	}
	if o.JPEGQuality <= 0 {
		o.JPEGQuality = 90
	}
	switch f {
	case PNG:
		return writePNG(w, pages[0], o.DPI)
	case JPEG:
		return writeJPEG(w, pages[0], o.DPI, o.JPEGQuality)
	case TIFF:
		tp := make([]TIFFPage, 0, len(pages))
		for i, img := range pages {
			p, err := encodeTIFFPage(img, o.Bilevel, o.DPI, i, len(pages))
			if err != nil {
				return fmt.Errorf("tiff page %d: %w", i+1, err)
			}
			tp = append(tp, p)
		}
		return WriteTIFF(w, tp)
	}
	return fmt.Errorf("unknown image format %v", f)
}

func writePNG(w io.Writer, img *image.Gray, dpi int) error {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return fmt.Errorf("png encode: %w", err)
	}
	_, err := w.Write(withPHYs(b.Bytes(), dpi))
	return err
}

// withPHYs inserts a pHYs chunk right after IHDR (Go's encoder writes
// none), so readers know the page's physical size.
func withPHYs(p []byte, dpi int) []byte {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	ppm := uint32(math.Round(float64(dpi) / 0.0254))
	chunk := binary.BigEndian.AppendUint32(nil, 9)
	body := append([]byte("pHYs"), binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, ppm), ppm)...)
	body = append(body, 1) // unit: metre
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(body))
	out := append([]byte{}, p[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, p[ihdrEnd:]...)
}

func writeJPEG(w io.Writer, img *image.Gray, dpi, q int) error {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		return fmt.Errorf("jpeg encode: %w", err)
	}
	_, err := w.Write(withJFIF(b.Bytes(), dpi))
	return err
}

// withJFIF inserts a JFIF APP0 segment with the density in dots per inch
// after SOI (Go's encoder writes none).
func withJFIF(j []byte, dpi int) []byte {
	seg := []byte{0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 1}
	seg = binary.BigEndian.AppendUint16(seg, uint16(dpi))
	seg = binary.BigEndian.AppendUint16(seg, uint16(dpi))
	seg = append(seg, 0, 0)
	out := append([]byte{}, j[:2]...)
	out = append(out, seg...)
	return append(out, j[2:]...)
}
