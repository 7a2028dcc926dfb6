package testdocs

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// PDFOptions are how a text PDF is written.
type PDFOptions struct {
	// UserPassword, when set, encrypts the file (fpdf's RC4 standard
	// security handler): nothing can read it without the password.
	UserPassword string
	// OwnerPassword defaults to a fixed string so encrypted output stays
	// deterministic (fpdf would otherwise pick a random one).
	OwnerPassword string
}

// fixedDate keeps the Info dictionary's dates, and so the bytes, stable.
func fixedDate() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

const (
	fontFamily   = "go"
	nearWhite    = 250 // #FAFAFA
	offPageShift = 200 // points beyond the right edge for OffPage text
	coverImage   = "cover"
)

// WriteFlowPDF lays f out and writes it as a text PDF.
func WriteFlowPDF(w io.Writer, f Flow, o PDFOptions) error {
	fx, err := LayoutFlow(f)
	if err != nil {
		return err
	}
	return WriteFixedPDF(w, fx, o)
}

// WriteFixedPDF writes f as a text PDF: every Item is a real text-layer
// string in the embedded Go font (subset, Identity-H, with a ToUnicode map,
// so pdftotext gets the original Unicode back).
func WriteFixedPDF(w io.Writer, f Fixed, o PDFOptions) error {
	m, err := newMetrics()
	if err != nil {
		return err
	}
	width, height := pageSize(f)
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: width, Ht: height}})
	setupPDF(pdf, f.Meta, o)
	for i, p := range f.Pages {
		pdf.AddPage()
		if err := drawPDFPage(pdf, m, p, width); err != nil {
			return fmt.Errorf("page %d: %w", i+1, err)
		}
	}
	if len(f.Pages) == 0 {
		pdf.AddPage()
	}
	if err := pdf.Output(w); err != nil {
		return fmt.Errorf("write pdf: %w", err)
	}
	return nil
}

func pageSize(f Fixed) (w, h float64) {
	w, h = f.Width, f.Height
	if w <= 0 {
		w = letterWidth
	}
	if h <= 0 {
		h = letterHeight
	}
	return w, h
}

func setupPDF(pdf *fpdf.Fpdf, meta Meta, o PDFOptions) {
	pdf.SetCompression(true)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(fixedDate())
	pdf.SetModificationDate(fixedDate())
	pdf.SetProducer("airlock testdocs", false)
	pdf.AddUTF8FontFromBytes(fontFamily, "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
	pdf.SetTitle(meta.Title, true)
	pdf.SetAuthor(meta.Author, true)
	pdf.SetSubject(meta.Subject, true)
	pdf.SetKeywords(meta.Keywords, true)
	pdf.SetCreator(meta.Creator, true)
	pdf.RegisterImageOptionsReader(coverImage, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(whitePNG()))
	if o.UserPassword != "" {
		owner := o.OwnerPassword
		if owner == "" {
			owner = "airlock-testdocs-owner"
		}
		pdf.SetProtection(fpdf.CnProtectPrint, o.UserPassword, owner)
	}
}

// whitePNG is the opaque image UnderImage text is hidden beneath.
func whitePNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 4, 4))
	for i := range img.Pix {
		img.Pix[i] = 0xFF
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // cannot fail on an in-memory buffer
	return b.Bytes()
}

func drawPDFPage(pdf *fpdf.Fpdf, m *metrics, p FixedPage, pageW float64) error {
	for _, r := range p.Rules {
		lw := r.Width
		if lw <= 0 {
			lw = 0.5
		}
		pdf.SetDrawColor(0, 0, 0)
		pdf.SetLineWidth(lw)
		pdf.Line(r.X1, r.Y1, r.X2, r.Y2)
	}
	for _, it := range p.Items {
		pl, err := place(m, it, pageW)
		if err != nil {
			return err
		}
		style := ""
		if it.Bold {
			style = "B"
		}
		pdf.SetFont(fontFamily, style, pl.size)
		pdf.SetTextColor(pl.gray, pl.gray, pl.gray)
		pdf.Text(pl.x, it.Y, it.Text)
		if it.Hidden == UnderImage {
			pdf.ImageOptions(coverImage, pl.x-1, it.Y-pl.ascent-1, pl.width+2, pl.ascent+pl.size*0.3+2,
				false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
		}
		if err := pdf.Error(); err != nil {
			return fmt.Errorf("draw %q: %w", it.Text, err)
		}
	}
	return nil
}

// placement is where and how an item is actually drawn once alignment and
// its hidden-text kind are applied; the PDF and raster renderers share it.
type placement struct {
	x, size, width, ascent float64
	gray                   int // 0 black .. 255 white
}

func place(m *metrics, it Item, pageW float64) (placement, error) {
	size := it.Size
	if size <= 0 {
		size = 10
	}
	if it.Hidden == Tiny {
		size = 1
	}
	w, err := m.width(it.Text, it.Bold, size)
	if err != nil {
		return placement{}, err
	}
	asc, err := m.ascent(it.Bold, size)
	if err != nil {
		return placement{}, err
	}
	x := it.X
	switch it.Align {
	case Right:
		x -= w
	case Center:
		x -= w / 2
	}
	gray := int(math.Round(math.Min(math.Max(it.Gray, 0), 1) * 255))
	switch it.Hidden {
	case White:
		gray = 255
	case NearWhite:
		gray = nearWhite
	case OffPage:
		x = pageW + offPageShift
	}
	return placement{x: x, size: size, width: w, ascent: asc, gray: gray}, nil
}

// color is the raster colour for a placement.
func (p placement) color() color.Gray { return color.Gray{Y: uint8(p.gray)} }
