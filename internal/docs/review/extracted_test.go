package review

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// line sets text at (x, y) in size-point type, the way pdftotext reports
// it: a box per word, a box for the line.
func line(text string, x, y, size float64) extract.Line {
	l := extract.Line{Text: text}
	for _, w := range strings.Fields(text) {
		wd := size * 0.5 * float64(len([]rune(w)))
		l.Words = append(l.Words, extract.Word{Text: w, Box: extract.Box{XMin: x, YMin: y, XMax: x + wd, YMax: y + size}})
		x += wd + size*0.25
	}
	l.Box = extract.Box{XMin: l.Words[0].Box.XMin, YMin: y, XMax: l.Words[len(l.Words)-1].Box.XMax, YMax: y + size}
	return l
}

// justified sets text across width, as a justified column does.
func justified(text string, x, y, size, width float64) extract.Line {
	l := line(text, x, y, size)
	n := len(l.Words)
	if n < 2 {
		return l
	}
	extra := (x + width - l.Box.XMax) / float64(n-1)
	for i := range l.Words {
		l.Words[i].Box.XMin += extra * float64(i)
		l.Words[i].Box.XMax += extra * float64(i)
	}
	l.Box.XMax = x + width
	return l
}

// withMarker adds a footnote marker, small and raised, after a line.
func withMarker(l extract.Line, marker string) extract.Line {
	x := l.Box.XMax + 0.5
	size := l.Box.YMax - l.Box.YMin
	l.Words = append(l.Words, extract.Word{Text: marker, Box: extract.Box{XMin: x, YMin: l.Box.YMin - 2, XMax: x + 4, YMax: l.Box.YMin + size*0.6 - 2}})
	l.Text += " " + marker
	l.Box.XMax = x + 4
	return l
}

func texts(ps []Paragraph) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

// TestFromExtractDropsFootnotes: a footnote marker after a word and the
// footnote at the foot of the page are left out; a clause running on to
// the next page is read whole.
func TestFromExtractDropsFootnotes(t *testing.T) {
	p1 := extract.Page{Number: 1, Width: 612, Height: 792, Method: extract.MethodText, Lines: []extract.Line{
		line("7. Notices", 72, 100, 12),
		withMarker(line("All notices under this Agreement must be in writing and are", 72, 130, 12), "1"),
		line("effective when delivered by hand, one (1) business day after dispatch", 72, 146, 12),
		line("1", 72, 700, 6),
		line("Agreed in the negotiation meeting of 14 March.", 80, 700, 8.5),
	}}
	p2 := extract.Page{Number: 2, Width: 612, Height: 792, Method: extract.MethodText, Lines: []extract.Line{
		line("by courier. Notices sent by email are effective only when acknowledged.", 72, 100, 12),
		line("8. Waiver", 72, 130, 12),
	}}
	got := strings.Join(texts(FromExtract(&extract.Document{Pages: []extract.Page{p1, p2}})), " | ")
	for _, bad := range []string{"negotiation", " 1 effective", "are 1"} {
		if strings.Contains(got, bad) {
			t.Errorf("paragraphs %q carry the footnote (%q)", got, bad)
		}
	}
	if !strings.Contains(got, "must be in writing and are effective") {
		t.Errorf("paragraphs %q: the marker still splits the sentence", got)
	}
}

// TestFromExtractReadsColumns: two columns set side by side are read
// column by column, and a paragraph that runs from the foot of the left
// column to the head of the right one is one paragraph.
func TestFromExtractReadsColumns(t *testing.T) {
	var lines []extract.Line
	lines = append(lines, line("GENERAL TERMS AND CONDITIONS OF SERVICE FOR CUSTOMERS", 120, 60, 14))
	left := []string{"1. Payment. Customer shall pay each", "undisputed invoice within thirty (30)", "days after receipt of the invoice.",
		"2. Notices. All notices must be in", "writing and are effective when", "delivered by hand or one (1) business", "day after dispatch by courier, and"}
	right := []string{"three (3) business days after mailing", "by certified mail to the address on", "the signature page of this Agreement.",
		"3. Waiver. A failure to enforce a", "right is not a waiver of that right.", "4. Counterparts. This Agreement may be", "signed in counterparts by the parties."}
	for i := range left {
		y := 100 + float64(i)*13
		lines = append(lines, justified(left[i], 48, y, 9, 249), justified(right[i], 315, y, 9, 249))
	}
	lines = append(lines, line("Page 1 of 1", 280, 760, 8))
	doc := &extract.Document{Pages: []extract.Page{{Number: 1, Width: 612, Height: 792, Method: extract.MethodText, Lines: lines}}}
	got := strings.Join(texts(FromExtract(doc)), " | ")
	for _, want := range []string{"day after dispatch by courier, and three (3) business days after mailing",
		"1. Payment. Customer shall pay each undisputed invoice"} {
		if !strings.Contains(got, want) {
			t.Errorf("paragraphs %q, want one with %q", got, want)
		}
	}
	if strings.Index(got, "2. Notices") > strings.Index(got, "3. Waiver") {
		t.Errorf("paragraphs %q: the right column read before the left", got)
	}
}

// TestFromExtractReadsScannedColumns: on a scan the columns' lines start
// a point or two apart and one line (a speck OCR read as a word) starts
// well left of the rest; the columns are still read one after the other,
// never line by line across the page.
func TestFromExtractReadsScannedColumns(t *testing.T) {
	var lines []extract.Line
	left := []string{"8. Risk Allocation. Provider shall defend", "Customer against any claim by a third", "party and shall give notice of the",
		"claim within ten (10) business days after", "receiving it, sole control of its defense and"}
	right := []string{"settlement, and reasonable cooperation.", "Provider's total liability under this", "section shall not exceed $2,000,000.",
		"9. Insurance. Provider shall keep", "general liability insurance in force."}
	for i := range left {
		y := 100 + float64(i)*13
		lines = append(lines, justified(left[i], 50+float64(i%3), y, 9, 245), justified(right[i], 316+float64(i%2), y, 9, 245))
	}
	lines = append(lines, line("' Customer shall pay each undisputed invoice.", 41, 170, 9)) // a speck before the line
	for i, s := range []string{"10. Notices. All notices must be in", "writing and are effective when", "delivered by hand or by courier."} {
		y := 183 + float64(i)*13
		lines = append(lines, justified(s, 49, y, 9, 245), justified("11. Waiver. A failure to enforce is not", 309+float64(i)*4, y, 9, 245))
	}
	doc := &extract.Document{Pages: []extract.Page{{Number: 1, Width: 612, Height: 792, Method: extract.MethodOCR, Lines: lines}}}
	got := strings.Join(texts(FromExtract(doc)), " | ")
	if !strings.Contains(got, "Provider's total liability under this section shall not exceed $2,000,000.") {
		t.Errorf("paragraphs %q: the liability sentence is broken up", got)
	}
	if strings.Index(got, "receiving it, sole control") > strings.Index(got, "settlement, and reasonable") {
		t.Errorf("paragraphs %q: the right column read before the left", got)
	}
}
