package pages

import (
	"math"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/redact/analyzer"
	"github.com/airlock-dev/airlock/internal/docs/redact/operator"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

// tw is a test word: text and box (points).
type tw struct {
	text           string
	x0, y0, x1, y1 float64
}

// testDoc is a one-page document of the given lines.
func testDoc(method string, lines ...[]tw) *extract.Document {
	p := extract.Page{Number: 1, Width: 612, Height: 792, Method: method, OCRConfidence: -1}
	conf := -1.0
	if method == extract.MethodOCR {
		p.OCRConfidence, conf = 95, 95
	}
	for _, ws := range lines {
		l := extract.Line{Box: extract.Box{XMin: ws[0].x0, YMin: ws[0].y0, XMax: ws[0].x1, YMax: ws[0].y1}}
		var texts []string
		for _, w := range ws {
			b := extract.Box{XMin: w.x0, YMin: w.y0, XMax: w.x1, YMax: w.y1}
			l.Words = append(l.Words, extract.Word{Text: w.text, Box: b, Conf: conf})
			l.Box = extractUnion(l.Box, b)
			texts = append(texts, w.text)
		}
		l.Text = strings.Join(texts, " ")
		p.Lines = append(p.Lines, l)
	}
	return &extract.Document{Pages: []extract.Page{p}}
}

// boxedAs returns the type of the finding whose boxes hold the word's
// centre ("" when none does).
func boxedAs(fs []Finding, w tw) string {
	cx, cy := (w.x0+w.x1)/2, (w.y0+w.y1)/2
	for _, f := range fs {
		for _, b := range f.Boxes {
			if b.XMin <= cx && cx <= b.XMax && b.YMin <= cy && cy <= b.YMax {
				return f.Type
			}
		}
	}
	return ""
}

// TestTableCells: values that a table's layout splits or labels only
// through its header.
func TestTableCells(t *testing.T) {
	ssnHead, ssnTail := tw{"799-51-", 254, 275, 290, 283}, tw{"1602", 254, 287, 275, 295}
	acct := tw{"885511137", 364, 275, 410, 283}
	first, last := tw{"Liam", 76, 275, 98, 283}, tw{"Johansson", 164, 275, 210, 283}
	ocrHeader := []tw{{"First", 76, 250, 98, 258}, {"name", 100, 250, 120, 258}, {"Last", 164, 250, 184, 258},
		{"name", 186, 250, 206, 258}, {"SSN", 254, 250, 272, 258}, {"Account", 364, 250, 400, 258}, {"number", 402, 250, 436, 258}}
	zungre, orair := tw{"Zungre", 72, 270, 110, 280}, tw{"Orairkalethwick", 72, 282, 150, 292}
	ssn := tw{"739-72-2838", 180, 270, 240, 280}
	misread := tw{"734-480-3536", 254, 275, 310, 283}
	d1, a1, d2, a2 := tw{"01/10/2024", 72, 270, 120, 280}, tw{"$1883.53", 300, 270, 340, 280}, tw{"01/03/2024", 72, 282, 120, 292}, tw{"$1890.51", 300, 282, 340, 292}
	for _, tc := range []struct {
		name string
		doc  *extract.Document
		want map[tw]policy.Type // word -> type it must be boxed as ("" = not boxed)
	}{
		{"an OCR row splits an SSN around other cells",
			testDoc(extract.MethodOCR, ocrHeader, []tw{first, last, ssnHead, acct}, []tw{ssnTail}),
			map[tw]policy.Type{ssnHead: policy.SSN, ssnTail: policy.SSN, acct: policy.BankAccount, first: policy.Person, last: policy.Person}},
		{"a narrow cell wraps a name under a role header",
			testDoc(extract.MethodText, []tw{{"Employee", 72, 250, 120, 260}}, []tw{{"SSN", 180, 250, 200, 260}}, []tw{zungre}, []tw{orair}, []tw{ssn}),
			map[tw]policy.Type{zungre: policy.Person, orair: policy.Person, ssn: policy.SSN}},
		{"a typed header says what a misread value is",
			testDoc(extract.MethodOCR, ocrHeader, []tw{first, last, misread}),
			map[tw]policy.Type{misread: policy.SSN}},
		{"dates and amounts stay",
			testDoc(extract.MethodOCR, []tw{{"Date", 72, 250, 95, 258}, {"Amount", 300, 250, 335, 258}}, []tw{d1, a1}, []tw{d2, a2}),
			map[tw]policy.Type{d1: "", a1: "", d2: "", a2: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newTestFinder(t).Pages(tc.doc)
			for w, typ := range tc.want {
				if got := policy.Type(boxedAs(fs, w)); got != typ {
					t.Errorf("%q boxed as %q, want %q", w.text, got, typ)
				}
			}
		})
	}
}

// TestStraighten: a box extraction turned onto a crooked page (the
// upright box around the turned one) comes back as it was.
func TestStraighten(t *testing.T) {
	orig := extract.Box{XMin: 400, YMin: 120, XMax: 520, YMax: 131}
	for _, deg := range []float64{0, 0.6, -2.5, 4} {
		th := deg * math.Pi / 180
		c, s := math.Cos(th), math.Sin(th)
		turned := extract.Box{XMin: math.Inf(1), YMin: math.Inf(1), XMax: math.Inf(-1), YMax: math.Inf(-1)}
		for _, p := range [][2]float64{{orig.XMin, orig.YMin}, {orig.XMax, orig.YMin}, {orig.XMin, orig.YMax}, {orig.XMax, orig.YMax}} {
			dx, dy := p[0]-306, p[1]-396
			x, y := 306+c*dx-s*dy, 396+s*dx+c*dy
			turned = extract.Box{XMin: math.Min(turned.XMin, x), YMin: math.Min(turned.YMin, y), XMax: math.Max(turned.XMax, x), YMax: math.Max(turned.YMax, y)}
		}
		got := straighten(turned, deg, 306, 396)
		for _, d := range []float64{got.XMin - orig.XMin, got.YMin - orig.YMin, got.XMax - orig.XMax, got.YMax - orig.YMax} {
			if math.Abs(d) > 1e-6 {
				t.Fatalf("skew %v: straightened %+v, want %+v", deg, got, orig)
			}
		}
	}
}

func TestPagesBoxesAndSkew(t *testing.T) {
	r := newTestFinder(t)
	word := func(s string, x, y float64) extract.Word {
		return extract.Word{Text: s, Box: extract.Box{XMin: x, YMin: y, XMax: x + 40, YMax: y + 10}, Conf: 90}
	}
	page := extract.Page{Number: 1, Width: 612, Height: 792, Method: extract.MethodOCR, Lines: []extract.Line{
		{Words: []extract.Word{word("Address:", 72, 100), word("12", 120, 100), word("Main", 165, 100), word("St", 210, 100)}},
		{Words: []extract.Word{word("Springfield,", 120, 114), word("IL", 165, 114), word("62704", 210, 114)}},
		{Words: []extract.Word{word("Total", 72, 140), word("42", 120, 140)}},
	}}
	for _, skew := range []float64{0, 2, -4} {
		page.SkewDegrees = skew
		fs := r.Pages(&extract.Document{Pages: []extract.Page{page}})
		if len(fs) != 1 || fs[0].Type != "STREET_ADDRESS" || len(fs[0].Boxes) != 2 {
			t.Fatalf("skew %v: findings %+v", skew, fs)
		}
		if b := fs[0].Boxes[0]; b.XMin != 118 || b.XMax != 252 || b.YMin != 98 || b.YMax != 112 {
			t.Fatalf("skew %v: first box %+v", skew, b)
		}
	}
}

// newTestFinder is a finder under the default policy.
func newTestFinder(t *testing.T) *Finder {
	t.Helper()
	an, err := analyzer.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(an, operator.New(policy.Default(), nil))
}
