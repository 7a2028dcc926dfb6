package extract

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/image/tiff"
)

// A TIFF's pages are a chain of image file directories (IFDs). Go's
// image.DecodeConfig reads only the first, so a bomb on page 2 would pass
// it; readTIFFDirs walks every IFD and checks every page's declared size
// before any pixel is decoded.

const (
	tiffTagWidth      = 256
	tiffTagHeight     = 257
	tiffTagXRes       = 282
	tiffTagResUnit    = 296
	maxIFDEntries     = 4096
	tiffHeaderSize    = 8
	tiffEntrySize     = 12
	tiffTypeShort     = 3
	tiffTypeLong      = 4
	tiffTypeRational  = 5
	tiffResUnitInch   = 2
	tiffResUnitCentim = 3
)

// tiffDir is one page's directory.
type tiffDir struct {
	offset        int64 // of the IFD
	nextAt        int64 // of its next-IFD pointer
	width, height uint32
	dpi           float64 // 0 when not stated
}

type tiffFile struct {
	r     io.ReaderAt
	size  int64
	order binary.ByteOrder
	dirs  []tiffDir
}

// readTIFFDirs reads every IFD, refusing loops, more than maxPages pages
// and any page over maxPixels.
func readTIFFDirs(r io.ReaderAt, size int64, maxPages int, maxPixels int64) (*tiffFile, error) {
	var hdr [tiffHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, unreadable("the TIFF header is truncated")
	}
	t := &tiffFile{r: r, size: size, order: binary.LittleEndian}
	if hdr[0] == 'M' {
		t.order = binary.BigEndian
	}
	if t.order.Uint16(hdr[2:]) != 42 {
		return nil, unreadable("the TIFF header is invalid")
	}
	seen := map[int64]bool{}
	for off := int64(t.order.Uint32(hdr[4:])); off != 0; {
		if seen[off] {
			return nil, unreadable("the TIFF's page chain loops")
		}
		seen[off] = true
		if len(t.dirs) == maxPages {
			return nil, tooLarge("the TIFF has more than %d pages", maxPages)
		}
		d, err := t.readDir(off)
		if err != nil {
			return nil, err
		}
		page := len(t.dirs) + 1
		if d.width == 0 || d.height == 0 {
			return nil, unreadable("TIFF page %d has no dimensions", page)
		}
		if int64(d.width)*int64(d.height) > maxPixels {
			return nil, tooLarge("TIFF page %d is %d x %d pixels, over the limit of %d", page, d.width, d.height, maxPixels)
		}
		t.dirs = append(t.dirs, d)
		var next [4]byte
		if _, err := r.ReadAt(next[:], d.nextAt); err != nil {
			return nil, unreadable("the TIFF is truncated after page %d", page)
		}
		off = int64(t.order.Uint32(next[:]))
	}
	if len(t.dirs) == 0 {
		return nil, unreadable("the TIFF has no pages")
	}
	return t, nil
}

func (t *tiffFile) readDir(off int64) (tiffDir, error) {
	var cnt [2]byte
	if off < tiffHeaderSize || off >= t.size {
		return tiffDir{}, unreadable("a TIFF directory points outside the file")
	}
	if _, err := t.r.ReadAt(cnt[:], off); err != nil {
		return tiffDir{}, unreadable("a TIFF directory is truncated")
	}
	n := int(t.order.Uint16(cnt[:]))
	if n == 0 || n > maxIFDEntries {
		return tiffDir{}, unreadable("a TIFF directory has %d entries", n)
	}
	buf := make([]byte, n*tiffEntrySize)
	if _, err := t.r.ReadAt(buf, off+2); err != nil {
		return tiffDir{}, unreadable("a TIFF directory is truncated")
	}
	d := tiffDir{offset: off, nextAt: off + 2 + int64(n*tiffEntrySize)}
	unit := uint32(tiffResUnitInch)
	var xres float64
	for i := 0; i < n; i++ {
		e := buf[i*tiffEntrySize : (i+1)*tiffEntrySize]
		tag, typ := t.order.Uint16(e), t.order.Uint16(e[2:])
		switch tag {
		case tiffTagWidth:
			d.width = t.scalar(typ, e[8:])
		case tiffTagHeight:
			d.height = t.scalar(typ, e[8:])
		case tiffTagResUnit:
			unit = t.scalar(typ, e[8:])
		case tiffTagXRes:
			xres = t.rational(typ, e[8:])
		}
	}
	switch unit {
	case tiffResUnitInch:
		d.dpi = xres
	case tiffResUnitCentim:
		d.dpi = xres * 2.54
	}
	return d, nil
}

// scalar reads an inline SHORT or LONG value (count 1).
func (t *tiffFile) scalar(typ uint16, v []byte) uint32 {
	switch typ {
	case tiffTypeShort:
		return uint32(t.order.Uint16(v))
	case tiffTypeLong:
		return t.order.Uint32(v)
	}
	return 0
}

// rational reads a RATIONAL stored at the offset in v.
func (t *tiffFile) rational(typ uint16, v []byte) float64 {
	if typ != tiffTypeRational {
		return 0
	}
	var b [8]byte
	if _, err := t.r.ReadAt(b[:], int64(t.order.Uint32(v))); err != nil {
		return 0
	}
	num, den := t.order.Uint32(b[:4]), t.order.Uint32(b[4:])
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// page returns a view of the file in which page i is the first and only
// page: the header points at its IFD and its next pointer is zero. Every
// other offset stays valid because nothing moves.
func (t *tiffFile) page(i int) *patchedReader {
	d := t.dirs[i]
	first := make([]byte, 4)
	t.order.PutUint32(first, uint32(d.offset))
	return &patchedReader{r: t.r, size: t.size, patches: []patch{
		{at: 4, b: first},
		{at: d.nextAt, b: make([]byte, 4)},
	}}
}

type patch struct {
	at int64
	b  []byte
}

// patchedReader is r with a few byte ranges replaced.
type patchedReader struct {
	r       io.ReaderAt
	size    int64
	patches []patch
	pos     int64
}

func (p *patchedReader) ReadAt(b []byte, off int64) (int, error) {
	if off >= p.size {
		return 0, io.EOF
	}
	n, err := p.r.ReadAt(b[:min(int64(len(b)), p.size-off)], off)
	for _, pt := range p.patches {
		for j, c := range pt.b {
			if k := pt.at + int64(j) - off; k >= 0 && k < int64(n) {
				b[k] = c
			}
		}
	}
	if err == nil && n < len(b) {
		err = io.EOF
	}
	return n, err
}

func (p *patchedReader) Read(b []byte) (int, error) {
	n, err := p.ReadAt(b, p.pos)
	p.pos += int64(n)
	return n, err
}

// extractTIFF OCRs every page. Pages Go cannot decode (JPEG-in-TIFF, for
// one) go to tesseract as a one-page file, without deskew.
func (x *extraction) extractTIFF(ctx context.Context) error {
	f, err := os.Open(x.in.path)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	t, err := readTIFFDirs(f, x.in.size, x.o.MaxPages, x.o.MaxPixelsPerPage)
	if err != nil {
		return err
	}
	for i, d := range t.dirs {
		if err := ctx.Err(); err != nil {
			return interrupted(err, fmt.Sprintf("page %d", i+1))
		}
		dpi := trustDPI(d.dpi)
		img, err := decodeTIFFPage(t, i)
		var unsupported tiff.UnsupportedError
		switch {
		case errors.As(err, &unsupported):
			err = x.ocrTIFFPageFile(ctx, t, i, dpi)
		case err != nil:
			return unreadable("TIFF page %d is corrupt or truncated", i+1)
		default:
			err = x.ocrImage(ctx, img, dpi, i+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeTIFFPage decodes page i alone (x/image/tiff reads the first
// directory of what it is given, which the page view makes page i).
func decodeTIFFPage(t *tiffFile, i int) (*image.Gray, error) {
	img, err := tiff.Decode(t.page(i))
	if err != nil {
		return nil, err
	}
	return toGray(img), nil
}

func (x *extraction) ocrTIFFPageFile(ctx context.Context, t *tiffFile, i int, dpi float64) error {
	file := filepath.Join(x.tmp, fmt.Sprintf("page-%d.tif", i+1))
	out, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("page file: %w", err)
	}
	defer os.Remove(file)
	_, err = io.Copy(out, io.NewSectionReader(t.page(i), 0, t.size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("page file: %w", err)
	}
	start := time.Now()
	var p Page
	err = x.withinPageTimeout(ctx, i+1, func(ctx context.Context) error {
		var err error
		p, err = tesseract(ctx, file, dpi, i+1, "3", x.o)
		return err
	})
	x.doc.Timings.OCR += time.Since(start)
	if err != nil {
		return err
	}
	d := t.dirs[i]
	p.Width, p.Height = float64(d.width)*72/dpi, float64(d.height)*72/dpi
	x.doc.Pages = append(x.doc.Pages, p)
	return nil
}
