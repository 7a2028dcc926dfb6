package raster

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/draw"
	"golang.org/x/image/tiff"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// MaxImagePixels bounds a decoded page or input image (a 300 dpi A3
// page is ~17 MP).
const MaxImagePixels = 60_000_000

// PageImage is one rendered page and its resolution.
type PageImage struct {
	Image image.Image
	DPI   float64
}

// DrawBoxes returns a copy of img with opaque black rectangles over the
// boxes (points, origin top left) at the image's dpi. Gray images stay
// gray; anything else becomes RGBA. Boxes are clipped to the image.
func DrawBoxes(img image.Image, dpi float64, boxes []result.Box) image.Image {
	b := img.Bounds()
	var dst draw.Image
	if _, ok := img.(*image.Gray); ok {
		dst = image.NewGray(b)
	} else {
		dst = image.NewRGBA(b)
	}
	draw.Draw(dst, b, img, b.Min, draw.Src)
	s := dpi / 72
	black := image.NewUniform(color.Black)
	for _, bx := range boxes {
		r := image.Rect(
			b.Min.X+int(math.Floor(bx.XMin*s)), b.Min.Y+int(math.Floor(bx.YMin*s)),
			b.Min.X+int(math.Ceil(bx.XMax*s)), b.Min.Y+int(math.Ceil(bx.YMax*s)),
		).Intersect(b)
		draw.Draw(dst, r, black, image.Point{}, draw.Src)
	}
	return dst
}

// PageBoxes collects each page's boxes from findings (page numbers are
// 1-based; the result is indexed from 0).
func PageBoxes(findings []result.Finding, pages int) [][]result.Box {
	out := make([][]result.Box, pages)
	for _, f := range findings {
		if f.Page >= 1 && f.Page <= pages {
			out[f.Page-1] = append(out[f.Page-1], f.Boxes...)
		}
	}
	return out
}

// RebuildPDF writes a PDF made only of the page images, one per page at
// its physical size: no text layer, no fonts, no annotations, forms,
// attachments, JavaScript, outlines or XMP, and an empty Info dictionary.
// Nothing of the original file but its pixels (already redacted) goes in.
func RebuildPDF(w io.Writer, pages []PageImage) error {
	if len(pages) == 0 {
		return docs.Errorf(docs.CodeUnreadable, "no pages to write")
	}
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 612, Ht: 792}})
	pdf.SetProducer("", false)
	pdf.SetCreator("", false)
	pdf.SetCompression(true)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	pdf.SetCreationDate(epoch)
	pdf.SetModificationDate(epoch)
	for i, p := range pages {
		if err := addImagePage(pdf, i, p); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return fmt.Errorf("write pdf: %w", err)
	}
	out, err := blankInfoDates(buf.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func addImagePage(pdf *fpdf.Fpdf, i int, p PageImage) error {
	b := p.Image.Bounds()
	if p.DPI <= 0 || b.Dx() <= 0 || b.Dy() <= 0 || b.Dx()*b.Dy() > MaxImagePixels {
		return docs.Errorf(docs.CodeTooLarge, "page %d: bad size %dx%d at %v dpi", i+1, b.Dx(), b.Dy(), p.DPI)
	}
	wPt, hPt := float64(b.Dx())*72/p.DPI, float64(b.Dy())*72/p.DPI
	var enc bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&enc, p.Image); err != nil {
		return fmt.Errorf("page %d: encode: %w", i+1, err)
	}
	name := "p" + strconv.Itoa(i+1)
	pdf.AddPageFormat("P", fpdf.SizeType{Wd: wPt, Ht: hPt})
	pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, &enc)
	pdf.ImageOptions(name, 0, 0, wPt, hPt, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("page %d: %w", i+1, err)
	}
	return nil
}

// emptyEntries are what fpdf always writes that a redacted PDF must not
// have: the Info dictionary's dates, an empty embedded-files name tree
// and an empty font dictionary.
var emptyEntries = []*regexp.Regexp{
	regexp.MustCompile(`/CreationDate \(D:\d{14}\)`),
	regexp.MustCompile(`/ModDate \(D:\d{14}\)`),
	regexp.MustCompile(`/Names <<\n/EmbeddedFiles << /Names \[\n\s*\] >>\n>>`),
	regexp.MustCompile(`/Font <<\n>>`),
}

// blankInfoDates overwrites those entries with spaces of the same length,
// so the cross-reference offsets stay right and the dictionaries are
// empty. Each must be found: a new fpdf that writes them differently
// fails here rather than leaking.
func blankInfoDates(pdf []byte) ([]byte, error) {
	out := bytes.Clone(pdf)
	for _, re := range emptyEntries {
		locs := re.FindAllIndex(out, -1)
		if len(locs) == 0 {
			return nil, fmt.Errorf("rebuild pdf: no %s entry to blank", re)
		}
		for _, l := range locs {
			for k := l[0]; k < l[1]; k++ {
				out[k] = ' '
			}
		}
	}
	return out, nil
}

// Image formats RedactImage reads and writes.
const (
	FormatPNG  = "png"
	FormatJPEG = "jpeg"
	FormatTIFF = "tiff"
)

// RedactImage decodes an image, paints the boxes (points at dpi) and
// encodes it again in the same format. Re-encoding drops every metadata
// chunk (EXIF, XMP, text chunks) of the input.
func RedactImage(in []byte, format string, dpi float64, boxes []result.Box) ([]byte, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(in))
	if err == nil && cfg.Width*cfg.Height > MaxImagePixels {
		return nil, docs.Errorf(docs.CodeTooLarge, "image is %dx%d, over %d pixels", cfg.Width, cfg.Height, MaxImagePixels)
	}
	var img image.Image
	switch format {
	case FormatPNG:
		img, err = png.Decode(bytes.NewReader(in))
	case FormatJPEG:
		img, err = jpeg.Decode(bytes.NewReader(in))
	case FormatTIFF:
		img, err = tiff.Decode(bytes.NewReader(in))
	default:
		return nil, docs.Errorf(docs.CodeUnsupported, "image format %q", format)
	}
	if err != nil {
		return nil, docs.Errorf(docs.CodeUnreadable, "decode %s: %v", format, err)
	}
	out := DrawBoxes(img, dpi, boxes)
	var buf bytes.Buffer
	switch format {
	case FormatPNG:
		err = png.Encode(&buf, out)
	case FormatJPEG:
		err = jpeg.Encode(&buf, out, &jpeg.Options{Quality: 90})
	default:
		err = tiff.Encode(&buf, out, &tiff.Options{Compression: tiff.Deflate})
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", format, err)
	}
	return buf.Bytes(), nil
}
