package invoicecorpus2

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// writePDF sets the document as a text PDF: core fonts (unembedded,
// WinAnsi) for what fits them, the Go fonts embedded for the rest.
func writePDF(w io.Writer, d *document) error {
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: d.w, Ht: d.h}})
	pdf.SetCompression(true)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	pdf.SetCatalogSort(true)
	stamp := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	pdf.SetCreationDate(stamp)
	pdf.SetModificationDate(stamp)
	pdf.SetProducer("Lyle AP test print", false)
	pdf.SetTitle(d.title, true)
	pdf.AddUTF8FontFromBytes(string(gosans), "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(string(gosans), "B", gobold.TTF)
	pdf.RegisterImageOptionsReader("patch", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(patchPNG()))
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	for i, p := range d.pages {
		pdf.AddPage()
		for _, r := range p.rules {
			pdf.SetDrawColor(0, 0, 0)
			pdf.SetLineWidth(r.w)
			pdf.Line(r.x1, r.y1, r.x2, r.y2)
		}
		for _, t := range p.texts {
			drawText(pdf, tr, d, t)
		}
		if err := pdf.Error(); err != nil {
			return fmt.Errorf("page %d: %w", i+1, err)
		}
	}
	return pdf.Output(w)
}

func drawText(pdf *fpdf.Fpdf, tr func(string) string, d *document, t text) {
	size := t.size
	if t.hidden == testdocs.Tiny {
		size = 1
	}
	style := ""
	if t.bold {
		style = "B"
	}
	s := t.s
	if d.face != gosans && winAnsi(s) {
		pdf.SetFont(string(d.face), style, size)
		s = tr(s)
	} else {
		pdf.SetFont(string(gosans), style, size)
	}
	wd := pdf.GetStringWidth(s)
	x := t.x
	switch t.align {
	case alignRight:
		x -= wd
	case alignCentre:
		x -= wd / 2
	}
	g := int(t.gray * 255)
	switch t.hidden {
	case testdocs.White:
		g = 255
	case testdocs.NearWhite:
		g = 249
	case testdocs.OffPage:
		x = d.w + 120
	}
	pdf.SetTextColor(g, g, g)
	if t.invisible {
		pdf.SetTextRenderingMode(3)
	}
	pdf.Text(x, t.y, s)
	if t.invisible {
		pdf.SetTextRenderingMode(0)
	}
	if t.hidden == testdocs.UnderImage {
		pdf.ImageOptions("patch", x-2, t.y-size, wd+4, size*1.35, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
}

// patchPNG is the opaque white patch some traps hide text under.
func patchPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = 0xFF
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // an in-memory buffer does not fail
	return b.Bytes()
}
