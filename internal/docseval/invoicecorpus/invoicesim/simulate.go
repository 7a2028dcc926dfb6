package invoicesim

import (
	"hash/fnv"
	"image"
	"image/color"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

type SimOptions struct {
	// OCR reads every page as OCR would: hidden text is not seen, words
	// get confidences and OCR noise (O/0, l/1, S/5, B/8 in numbers, lost
	// spaces, now and then a lost decimal separator), faint print reads
	// badly. Otherwise pages are a clean text layer with ink renders.
	OCR bool
	// AsRendered reads each case the way its Render.Mode would be read:
	// text PDFs as a text layer, every other mode by OCR.
	AsRendered bool
	// Noise scales the OCR noise rates (1 = the default rates).
	Noise float64
	Seed  int64
}

func (o SimOptions) ReadsOCR(c *invoicecorpus.Case) bool {
	return o.OCR || o.AsRendered && c.Render.Mode.OCR()
}

type SimInfo struct {
	// Degraded: an amount's separators were damaged, so the only right
	// outcome is a flag, not a value.
	Degraded bool
}

const simDPI = 72

func Simulate(c *invoicecorpus.Case, opt SimOptions) (*extract.Document, map[int]*hidden.Render, SimInfo) {
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), h.Sum64()))
	w, ht := c.Doc.Width, c.Doc.Height
	if w == 0 {
		w, ht = 612, 792
	}
	doc := &extract.Document{}
	renders := map[int]*hidden.Render{}
	var info SimInfo
	opt.OCR = opt.ReadsOCR(c)
	for i, fp := range c.Doc.Pages {
		pg := extract.Page{Number: i + 1, Width: w, Height: ht, Method: extract.MethodText, OCRConfidence: -1}
		if opt.OCR {
			pg.Method = extract.MethodOCR
		} else {
			renders[i+1] = inkRenders(fp, w, ht)
		}
		var confSum float64
		var n int
		for _, it := range fp.Items {
			if opt.OCR && it.Hidden != testdocs.Visible {
				continue // not in the image, so OCR cannot see it
			}
			ws := itemWords(it)
			if opt.OCR {
				ws = ocrNoise(rng, ws, it, opt.Noise, &info)
			}
			for _, x := range ws {
				confSum += x.Conf
				n++
			}
			pg.Lines = append(pg.Lines, extract.Line{Text: joinText(ws), Box: lineBox(ws), Words: ws})
		}
		if opt.OCR && n > 0 {
			pg.OCRConfidence = confSum / float64(n)
		}
		doc.Pages = append(doc.Pages, pg)
	}
	return doc, renders, info
}

func helvetica() [95]int {
	return [95]int{
		278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // ' '../
		556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0..?
		1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @..O
		667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P.._
		333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // `..o
		556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p..~
	}
}

func runeWidth(r rune) float64 {
	switch {
	case r >= 32 && r < 127:
		return float64(helvetica()[r-32]) / 1000
	case r == '\u00a0':
		return 0.278
	case r == '\u2009' || r == '\u202f':
		return 0.167
	}
	return 0.556
}

func textWidth(s string, size float64) float64 {
	wd := 0.0
	for _, r := range s {
		wd += runeWidth(r)
	}
	return wd * size
}

func itemWords(it testdocs.Item) []extract.Word {
	size := it.Size
	if size == 0 {
		size = 10
	}
	x := it.X
	switch it.Align {
	case testdocs.Right:
		x -= textWidth(it.Text, size)
	case testdocs.Center:
		x -= textWidth(it.Text, size) / 2
	}
	var out []extract.Word
	for i, part := range strings.Split(it.Text, " ") {
		if i > 0 {
			x += runeWidth(' ') * size
		}
		wd := textWidth(part, size)
		if part != "" {
			out = append(out, extract.Word{Text: part, Conf: -1,
				Box: extract.Box{XMin: x, YMin: it.Y - 0.718*size, XMax: x + wd, YMax: it.Y + 0.207*size}})
		}
		x += wd
	}
	return out
}

func joinText(ws []extract.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

func lineBox(ws []extract.Word) extract.Box {
	if len(ws) == 0 {
		return extract.Box{}
	}
	b := ws[0].Box
	for _, w := range ws[1:] {
		b.XMin, b.YMin = min(b.XMin, w.Box.XMin), min(b.YMin, w.Box.YMin)
		b.XMax, b.YMax = max(b.XMax, w.Box.XMax), max(b.YMax, w.Box.YMax)
	}
	return b
}

func inkRenders(fp testdocs.FixedPage, w, h float64) *hidden.Render {
	s := float64(simDPI) / 72
	bounds := image.Rect(0, 0, int(w*s), int(h*s))
	normal, noText := blankGray(bounds), blankGray(bounds)
	for _, r := range fp.Rules {
		for _, img := range []*image.Gray{normal, noText} {
			fillRect(img, image.Rect(int(r.X1*s), int(r.Y1*s), int(r.X2*s)+1, int(r.Y2*s)+1), 0, false)
		}
	}
	for _, it := range fp.Items {
		ink := uint8(255 * it.Gray)
		switch it.Hidden {
		case testdocs.White:
			ink = 255
		case testdocs.NearWhite:
			ink = 250
		case testdocs.OffPage:
			continue
		}
		for _, wd := range itemWords(it) {
			b := wd.Box
			fillRect(normal, image.Rect(int(b.XMin*s), int(b.YMin*s), int(b.XMax*s+0.999), int(b.YMax*s+0.999)), ink, true)
		}
		if it.Hidden == testdocs.UnderImage {
			lb := lineBox(itemWords(it))
			r := image.Rect(int(lb.XMin*s)-2, int(lb.YMin*s)-2, int(lb.XMax*s)+3, int(lb.YMax*s)+3)
			fillRect(normal, r, 180, false)
			fillRect(noText, r, 180, false)
		}
	}
	return &hidden.Render{DPI: simDPI, Normal: normal, NoText: noText}
}

func blankGray(r image.Rectangle) *image.Gray {
	img := image.NewGray(r)
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	return img
}

func fillRect(img *image.Gray, r image.Rectangle, v uint8, strokes bool) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !strokes || (x-r.Min.X)%2 == 0 {
				img.SetGray(x, y, color.Gray{Y: v})
			}
		}
	}
}

func ocrNoise(rng *rand.Rand, ws []extract.Word, it testdocs.Item, scale float64, info *SimInfo) []extract.Word {
	if scale == 0 {
		scale = 1
	}
	faint := it.Gray >= 0.5
	out := make([]extract.Word, 0, len(ws))
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		w.Conf = 86 + rng.Float64()*11
		j := rng.Float64() * 0.4
		w.Box.XMin, w.Box.XMax = w.Box.XMin+j, w.Box.XMax+j
		switch {
		case faint:
			// extract marks light ink as faint (its ink check), whatever
			// tesseract's confidence.
			w.Conf, w.Faint = 25+rng.Float64()*20, true
			if numeric(w.Text) {
				w.Text = degrade(rng, w.Text)
				info.Degraded = true
			}
		case numeric(w.Text) && rng.Float64() < 0.01*scale && strings.ContainsAny(w.Text, ".,"):
			w.Text = dropLastSeparator(w.Text)
			w.Conf = 45 + rng.Float64()*15
			info.Degraded = true
		case hasDigit(w.Text) && rng.Float64() < 0.06*scale:
			w.Text = confuse(rng, w.Text)
			w.Conf = 72 + rng.Float64()*16
		}
		if i+1 < len(ws) && rng.Float64() < 0.04*scale {
			// A lost space: two words come back as one.
			nx := ws[i+1]
			w.Text += nx.Text
			w.Box.XMax = nx.Box.XMax
			i++
		}
		out = append(out, w)
	}
	return out
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func numeric(s string) bool {
	d := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			d++
		case strings.ContainsRune(".,$€£\u00a0\u2009", r):
		default:
			return false
		}
	}
	return d >= 3
}

func confuse(rng *rand.Rand, s string) string {
	swaps := map[rune]rune{'0': 'O', '1': 'l', '5': 'S', '8': 'B'}
	rs := []rune(s)
	var at []int
	for i, r := range rs {
		if _, ok := swaps[r]; ok {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return s
	}
	k := at[rng.IntN(len(at))]
	rs[k] = swaps[rs[k]]
	return string(rs)
}

func degrade(rng *rand.Rand, s string) string {
	switch rng.IntN(3) {
	case 0:
		return strings.NewReplacer(",", "", ".", "", "\u00a0", "", "\u2009", "").Replace(s)
	case 1:
		if strings.Contains(s, ",") && strings.Contains(s, ".") {
			return strings.ReplaceAll(s, ",", ".")
		}
		return strings.ReplaceAll(s, ".", ",")
	}
	return strings.Replace(s, "0", "O", 1)
}

func dropLastSeparator(s string) string {
	i := strings.LastIndexAny(s, ".,")
	if i < 0 {
		return s
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return s[:i] + s[i+n:]
}
