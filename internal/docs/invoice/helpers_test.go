package invoice

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func boxAt(x, y, w float64) extract.Box {
	return extract.Box{XMin: x, YMin: y, XMax: x + w, YMax: y + 10}
}

// tx is one run of text for a test page: at X (left edge, or right edge
// when right is set), baseline Y, size 10 unless set.
type tx struct {
	x, y  float64
	text  string
	right bool
	size  float64
	conf  float64 // 0 = text layer (-1); else an OCR confidence
	gray  uint8   // ink for the simulated render; 0 = black
	ink   bool    // draw gray instead of black
}

func charW(size float64) float64 { return 0.55 * size }

// words places a run's words like pdftotext would.
func (t tx) words() []extract.Word {
	size := t.size
	if size == 0 {
		size = 10
	}
	conf := t.conf
	if conf == 0 {
		conf = -1
	}
	x := t.x
	if t.right {
		x -= float64(len([]rune(t.text))) * charW(size)
	}
	var out []extract.Word
	for _, part := range strings.Split(t.text, " ") {
		w := float64(len([]rune(part))) * charW(size)
		if part != "" {
			out = append(out, extract.Word{Text: part, Conf: conf,
				Box: extract.Box{XMin: x, YMin: t.y - 0.718*size, XMax: x + w, YMax: t.y + 0.207*size}})
		}
		x += w + charW(size)
	}
	return out
}

func mkPage(n int, method string, runs ...tx) extract.Page {
	p := extract.Page{Number: n, Width: 612, Height: 792, Method: method, OCRConfidence: -1}
	for _, r := range runs {
		ws := r.words()
		p.Lines = append(p.Lines, extract.Line{Text: r.text, Words: ws})
	}
	return p
}

func textDoc(pages ...[]tx) *extract.Document {
	d := &extract.Document{}
	for i, runs := range pages {
		d.Pages = append(d.Pages, mkPage(i+1, extract.MethodText, runs...))
	}
	return d
}

// inkFor renders runs as the ink check would see them: each word's box
// in stroke-like ink of its gray (black by default); skip lists texts
// that draw no ink (white text).
func inkFor(p extract.Page, runs []tx, skip map[string]bool) *hidden.Render {
	n := image.NewGray(image.Rect(0, 0, 612, 792))
	f := image.NewGray(n.Bounds())
	for i := range n.Pix {
		n.Pix[i], f.Pix[i] = 255, 255
	}
	for _, r := range runs {
		if skip[r.text] {
			continue
		}
		v := uint8(0)
		if r.ink {
			v = r.gray
		}
		for _, w := range r.words() {
			for y := int(w.Box.YMin); y < int(w.Box.YMax); y++ {
				for x := int(w.Box.XMin); x < int(w.Box.XMax); x += 2 {
					n.SetGray(x, y, color.Gray{Y: v})
				}
			}
		}
	}
	return &hidden.Render{DPI: 72, Normal: n, NoText: f}
}

func mustExtract(t *testing.T, doc *extract.Document, opts Options) *Result {
	t.Helper()
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Extract(doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func val(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func field(res *Result, name string) string { return val(*res.Fields.Ptr(name)) }

func hasIssue(s result.FieldSource, is string) bool {
	for _, x := range s.Issues {
		if x == is {
			return true
		}
	}
	return false
}
