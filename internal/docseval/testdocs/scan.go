package testdocs

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"

	"github.com/airlock-dev/airlock/internal/docs/imagewrite"

	"github.com/go-pdf/fpdf"
)

// ScanFormat is the container a scan is written in.
type ScanFormat int

const (
	ScanPNG  ScanFormat = iota // one page; pHYs carries the DPI
	ScanJPEG                   // one page; JFIF density carries the DPI
	ScanTIFF                   // every page; Deflate gray, or CCITT G4 when Bilevel
	ScanPDF                    // every page as one image, no text layer
)

func (f ScanFormat) String() string {
	switch f {
	case ScanPNG:
		return "png"
	case ScanJPEG:
		return "jpeg"
	case ScanTIFF:
		return "tiff"
	case ScanPDF:
		return "pdf"
	}
	return fmt.Sprintf("ScanFormat(%d)", int(f))
}

const defaultScanDPI = 200

func (s Scan) dpi() int {
	if s.DPI <= 0 {
		return defaultScanDPI
	}
	return s.DPI
}

// ScanPages renders f's pages at s.DPI and degrades them as s says. The
// same Scan (Seed included) always gives the same pixels.
func ScanPages(f Fixed, s Scan) ([]*image.Gray, error) {
	r, err := newRasterizer(float64(s.dpi()))
	if err != nil {
		return nil, err
	}
	w, h := pageSize(f)
	out := make([]*image.Gray, 0, len(f.Pages))
	for i, p := range f.Pages {
		img, err := r.page(p, w, h)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		// Each page its own stream, so page 2's noise does not depend on
		// how many random numbers page 1 used.
		rng := rand.New(rand.NewPCG(uint64(s.Seed), uint64(i)))
		if img, err = degrade(img, s, rng); err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		out = append(out, img)
	}
	return out, nil
}

// WriteScan renders and degrades f and writes it in format. PNG and JPEG
// hold one page and refuse more.
func WriteScan(w io.Writer, f Fixed, s Scan, format ScanFormat) error {
	pages, err := ScanPages(f, s)
	if err != nil {
		return err
	}
	return WriteImages(w, pages, s, format)
}

// WriteImages writes already rendered pages (at s.DPI) in format.
func WriteImages(w io.Writer, pages []*image.Gray, s Scan, format ScanFormat) error {
	if format == ScanPDF {
		if len(pages) == 0 {
			return errors.New("no pages to write")
		}
		return writeImagePDF(w, pages, s)
	}
	f := map[ScanFormat]imagewrite.Format{ScanPNG: imagewrite.PNG, ScanJPEG: imagewrite.JPEG, ScanTIFF: imagewrite.TIFF}[format]
	return imagewrite.Write(w, pages, f, imagewrite.Options{DPI: s.dpi(), JPEGQuality: jpegQuality(s), Bilevel: s.Bilevel})
}

func jpegQuality(s Scan) int {
	if s.JPEG > 0 {
		return s.JPEG
	}
	return 90
}

// writeImagePDF puts each page image on a page of its physical size, with
// no text at all: what a scanner's "scan to PDF" produces.
func writeImagePDF(w io.Writer, pages []*image.Gray, s Scan) error {
	dpi := float64(s.dpi())
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: letterWidth, Ht: letterHeight}})
	pdf.SetCompression(true)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(fixedDate())
	pdf.SetModificationDate(fixedDate())
	pdf.SetProducer("airlock testdocs scan", false)
	for i, img := range pages {
		var b bytes.Buffer
		kind := "PNG"
		if s.JPEG > 0 {
			kind = "JPG"
			if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: s.JPEG}); err != nil {
				return fmt.Errorf("page %d: jpeg: %w", i+1, err)
			}
		} else if err := png.Encode(&b, img); err != nil {
			return fmt.Errorf("page %d: png: %w", i+1, err)
		}
		name := fmt.Sprintf("page%d", i+1)
		opt := fpdf.ImageOptions{ImageType: kind}
		pdf.RegisterImageOptionsReader(name, opt, &b)
		pw, ph := float64(img.Bounds().Dx())*72/dpi, float64(img.Bounds().Dy())*72/dpi
		pdf.AddPageFormat("P", fpdf.SizeType{Wd: pw, Ht: ph})
		pdf.ImageOptions(name, 0, 0, pw, ph, false, opt, 0, "")
	}
	if err := pdf.Output(w); err != nil {
		return fmt.Errorf("write image pdf: %w", err)
	}
	return nil
}
