package corpus

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/testdocs"
	"github.com/go-pdf/fpdf"
)

// Word is one word of a page document with its box (points, origin top
// left, as extract.Box) and the entity type it belongs to ("" if none).
type Word struct {
	Page                   int // 1-based
	Line                   int // index of the line (Item) on its page
	Text                   string
	XMin, YMin, XMax, YMax float64
	Type                   string
}

// PageDoc is a page document: what to render, and every word's position.
type PageDoc struct {
	Fixed testdocs.Fixed
	Scan  *testdocs.Scan // non-nil: render as a scan (image-only)
	Words []Word
}

// pageBuilder places runs of text on Fixed pages and records word boxes
// with Helvetica metrics (what the renderer uses for Fixed items).
type pageBuilder struct {
	b     *builder
	pd    *PageDoc
	pdf   *fpdf.Fpdf
	page  int
	lines int
}

func newPageBuilder(b *builder) *pageBuilder {
	pdf := fpdf.New("P", "pt", "Letter", "")
	pdf.SetFont("Helvetica", "", 10)
	pb := &pageBuilder{b: b, pd: &PageDoc{}, pdf: pdf}
	pb.newPage()
	return pb
}

func (pb *pageBuilder) newPage() {
	if pb.page > 0 {
		pb.b.text("\f")
	}
	pb.pd.Fixed.Pages = append(pb.pd.Fixed.Pages, testdocs.FixedPage{})
	pb.page++
	pb.lines = 0
}

// part is a run of one line: plain text (typ "") or an entity.
type part struct{ typ, text string }

// line places parts as one Item at (x, y) (y = baseline) in size pt.
func (pb *pageBuilder) line(x, y, size float64, parts ...part) {
	if pb.lines > 0 {
		pb.b.text("\n")
	}
	pb.pdf.SetFontSize(size)
	var full strings.Builder
	var ranges [][3]int // start, end, index into parts
	for k, p := range parts {
		start := full.Len()
		full.WriteString(p.text)
		ranges = append(ranges, [3]int{start, full.Len(), k})
		if p.typ != "" {
			pb.b.pii(p.typ, p.text)
		} else {
			pb.b.text(p.text)
		}
	}
	pb.words(x, y, size, full.String(), func(i, j int) string {
		for _, r := range ranges {
			if parts[r[2]].typ != "" && r[0] < j && i < r[1] {
				return parts[r[2]].typ
			}
		}
		return ""
	})
	pg := &pb.pd.Fixed.Pages[pb.page-1]
	pg.Items = append(pg.Items, testdocs.Item{X: x, Y: y, Text: full.String(), Size: size})
	pb.lines++
}

// words records the words of a line with their boxes; typeOf names the
// entity a word's bytes [i, j) overlap.
func (pb *pageBuilder) words(x, y, size float64, line string, typeOf func(i, j int) string) {
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' {
			j++
		}
		x0 := x + pb.pdf.GetStringWidth(line[:i])
		x1 := x + pb.pdf.GetStringWidth(line[:j])
		pb.pd.Words = append(pb.pd.Words, Word{Page: pb.page, Line: pb.lines, Text: line[i:j],
			XMin: x0, YMin: y - 0.75*size, XMax: x1, YMax: y + 0.22*size, Type: typeOf(i, j)})
		i = j
	}
}

// rule draws a table border.
func (pb *pageBuilder) rule(x1, y1, x2, y2 float64) {
	pg := &pb.pd.Fixed.Pages[pb.page-1]
	pg.Rules = append(pg.Rules, testdocs.Rule{X1: x1, Y1: y1, X2: x2, Y2: y2})
}

// pageForm: a labelled form, then a table whose narrow cells wrap names
// and numbers onto two lines. ASCII only (the renderer's core fonts).
func pageForm(g *gen, b *builder, scan bool) *PageDoc {
	pb := newPageBuilder(b)
	name := g.pick(firstNames[34:]) + " " + g.pick(surnames[30:])
	y := 90.0
	pb.line(72, y, 16, part{"", "Patient Intake Form"})
	rows := [][]part{
		{{"", "Name: "}, {Person, name}},
		{{"", "Date of Birth: "}, {DateOfBirth, g.date(1950, 2003)}},
		{{"", "SSN: "}, {SSN, g.ssn()}},
		{{"", "Phone: "}, {Phone, g.phone()}},
		{{"", "Email: "}, {Email, g.email(name)}},
		{{"", "Insurance card: "}, {CreditCard, g.card()}},
		{{"", "Visit date: 03/14/2024 Claim no. 55"}, {"", g.digits(6)}},
	}
	for _, r := range rows {
		y += 22
		pb.line(72, y, 11, r...)
	}
	y += 22
	addr := strings.Split(g.usAddressLines(), "\n")
	pb.line(72, y, 11, part{"", "Address: "}, part{StreetAddress, addr[0]})
	y += 16
	pb.line(118, y, 11, part{StreetAddress, addr[1]})
	pb.table(g, y+40)
	pd := pb.pd
	if scan {
		pd.Scan = &testdocs.Scan{DPI: 200, Skew: 0.6, Noise: 0.05, Blur: 0.5, Seed: int64(g.n(1, 1<<30))}
	}
	return pd
}

// table: two rows of narrow cells; each name and SSN is split over two
// lines inside its cell.
func (pb *pageBuilder) table(g *gen, y float64) {
	xs := []float64{72, 160, 250, 360}
	pb.rule(72, y-14, 540, y-14)
	pb.line(xs[0]+4, y, 10, part{"", "First name"})
	pb.line(xs[1]+4, y, 10, part{"", "Last name"})
	pb.line(xs[2]+4, y, 10, part{"", "SSN"})
	pb.line(xs[3]+4, y, 10, part{"", "Account number"})
	for r := 0; r < 2; r++ {
		y += 30
		pb.rule(72, y-14, 540, y-14)
		ssn := g.ssn()
		pb.line(xs[0]+4, y, 10, part{Person, g.pick(firstNames[:30])})
		pb.line(xs[1]+4, y, 10, part{Person, g.pick(surnames[:20])})
		pb.line(xs[2]+4, y, 10, part{SSN, ssn[:7]})
		pb.line(xs[2]+4, y+12, 10, part{SSN, ssn[7:]})
		pb.line(xs[3]+4, y, 10, part{BankAccount, g.account()})
	}
}

// Document returns the page document as extraction would: one line per
// placed item, its words with their boxes (text-layer method). Tests use
// it where the real extractor is not wanted.
func (pd *PageDoc) Document() *extract.Document {
	doc := &extract.Document{}
	for i := range pd.Fixed.Pages {
		doc.Pages = append(doc.Pages, extract.Page{Number: i + 1, Width: 612, Height: 792,
			Method: extract.MethodText, OCRConfidence: -1})
	}
	for _, w := range pd.Words {
		p := &doc.Pages[w.Page-1]
		for len(p.Lines) <= w.Line {
			p.Lines = append(p.Lines, extract.Line{})
		}
		l := &p.Lines[w.Line]
		box := extract.Box{XMin: w.XMin, YMin: w.YMin, XMax: w.XMax, YMax: w.YMax}
		if len(l.Words) == 0 {
			l.Box = box
		} else {
			l.Box.XMin, l.Box.YMin = min(l.Box.XMin, box.XMin), min(l.Box.YMin, box.YMin)
			l.Box.XMax, l.Box.YMax = max(l.Box.XMax, box.XMax), max(l.Box.YMax, box.YMax)
			l.Text += " "
		}
		l.Text += w.Text
		l.Words = append(l.Words, extract.Word{Text: w.Text, Box: box, Conf: -1})
	}
	return doc
}

// usAddressLines is a US address on two lines.
func (g *gen) usAddressLines() string {
	c := usCities[g.r.IntN(len(usCities))]
	return strings.Join([]string{
		strings.TrimSpace(g.pick([]string{"12", "455", "1600", "77", "2100"}) + " " + g.pick(usStreets) + " " + g.pick(usSuffixes) + g.usUnit()),
		c[0] + ", " + c[1] + " " + "6" + g.digits(4),
	}, "\n")
}
