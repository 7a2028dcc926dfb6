package invoicecorpus2

import (
	"sync"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/text/encoding/charmap"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// face is the typeface a document is set in. Text PDFs use the PDF core
// fonts where the text fits WinAnsi; scans are drawn by testdocs in the Go
// fonts whatever the face.
type face string

const (
	helvetica face = "Helvetica"
	times     face = "Times"
	courier   face = "Courier"
	gosans    face = "gosans" // embedded Go fonts, for text WinAnsi lacks
)

// align anchors a text's x.
type align int

const (
	alignLeft align = iota
	alignRight
	alignCentre
)

// text is one run of text at a baseline.
type text struct {
	x, y   float64
	s      string
	size   float64
	bold   bool
	align  align
	gray   float64 // 0 black .. 1 white, for faint print
	hidden testdocs.Hidden
	// invisible draws the text in PDF render mode 3 (no fill, no
	// stroke) instead of white: the other way text is hidden.
	invisible bool
}

// rule is a straight line.
type rule struct{ x1, y1, x2, y2, w float64 }

// sheet is one page under construction.
type sheet struct {
	texts []text
	rules []rule
}

// document is what a layout produces: pages of a given size in a face.
type document struct {
	w, h  float64
	face  face
	pages []*sheet
	title string
}

func (d *document) page() *sheet {
	p := &sheet{}
	d.pages = append(d.pages, p)
	return p
}

func (p *sheet) put(x, y float64, s string, size float64, bold bool, a align) *text {
	p.texts = append(p.texts, text{x: x, y: y, s: s, size: size, bold: bold, align: a})
	return &p.texts[len(p.texts)-1]
}

func (p *sheet) line(x1, y1, x2, y2 float64) {
	p.rules = append(p.rules, rule{x1, y1, x2, y2, 0.6})
}

// fixed is the document as testdocs draws it for scans, photos and faxes.
func (d *document) fixed() testdocs.Fixed {
	f := testdocs.Fixed{Width: d.w, Height: d.h, Meta: testdocs.Meta{Title: d.title, Creator: "Lyle AP test print"}}
	for _, p := range d.pages {
		var fp testdocs.FixedPage
		for _, t := range p.texts {
			al := map[align]testdocs.Align{alignLeft: testdocs.Left, alignRight: testdocs.Right, alignCentre: testdocs.Center}[t.align]
			fp.Items = append(fp.Items, testdocs.Item{X: t.x, Y: t.y, Text: t.s, Size: t.size, Bold: t.bold, Align: al, Gray: t.gray, Hidden: t.hidden})
		}
		for _, r := range p.rules {
			fp.Rules = append(fp.Rules, testdocs.Rule{X1: r.x1, Y1: r.y1, X2: r.x2, Y2: r.y2, Width: r.w})
		}
		f.Pages = append(f.Pages, fp)
	}
	return f
}

// winAnsi reports whether s can be set in a core font.
func winAnsi(s string) bool {
	_, err := charmap.Windows1252.NewEncoder().String(s)
	return err == nil
}

// measurer gives string widths in points, as the text PDF sets them.
type measurer struct {
	mu  sync.Mutex
	pdf *fpdf.Fpdf
}

var measure = sync.OnceValue(func() *measurer {
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 612, Ht: 792}})
	pdf.AddUTF8FontFromBytes(string(gosans), "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(string(gosans), "B", gobold.TTF)
	return &measurer{pdf: pdf}
})

// width is the widest the string sets in any face a document may use
// (the Go fonts for scans, a core font for the text PDF): what a layout
// must leave room for.
func (m *measurer) width(s string, size float64, bold bool) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	style := ""
	if bold {
		style = "B"
	}
	m.pdf.SetFont(string(gosans), style, size)
	w := m.pdf.GetStringWidth(s)
	if winAnsi(s) {
		for _, f := range []face{helvetica, times, courier} {
			m.pdf.SetFont(string(f), style, size)
			w = max(w, m.pdf.GetStringWidth(m.pdf.UnicodeTranslatorFromDescriptor("")(s)))
		}
	}
	return w
}
