package extract

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// expectedParagraphs is what Reflow should recover from a Flow: one
// paragraph per block, run-in heading included, headings flagged.
func expectedParagraphs(f testdocs.Flow) []Paragraph {
	var out []Paragraph
	for _, b := range f.Blocks {
		if b.Kind == testdocs.PageBreak {
			continue
		}
		text := strings.Join(strings.Fields(b.RunIn+" "+b.Text), " ")
		out = append(out, Paragraph{Text: text, Heading: b.Kind == testdocs.Heading || b.Kind == testdocs.Title})
	}
	return out
}

func TestReflowRecoversTheFlow(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	for _, footer := range []string{"Page {page} of {pages}", "- {page} -", "{page}"} {
		t.Run(footer, func(t *testing.T) {
			f := contractFlow(footer)
			doc, err := extract(t, writeFile(t, "c.pdf", flowPDF(t, f, testdocs.PDFOptions{})), Options{})
			if err != nil {
				t.Fatal(err)
			}
			body := Reflow(doc, ReflowOptions{})
			checkFurniture(t, doc, body)
			want := expectedParagraphs(f)
			if len(body.Paragraphs) != len(want) {
				t.Fatalf("%d paragraphs, want %d:\n%s", len(body.Paragraphs), len(want), body.Text())
			}
			for i, p := range body.Paragraphs {
				if p.Text != want[i].Text || p.Heading != want[i].Heading {
					t.Errorf("paragraph %d:\n got %v %q\nwant %v %q", i, p.Heading, p.Text, want[i].Heading, want[i].Text)
				}
			}
			checkProvenance(t, doc, body)
		})
	}
}

// checkFurniture: a header and a page number removed from every page, and
// nothing else.
func checkFurniture(t *testing.T, doc *Document, body *Body) {
	t.Helper()
	count := map[string]int{}
	for _, fu := range body.Furniture {
		count[fu.Kind]++
		if got := doc.Pages[fu.Page-1].Lines[fu.Line].Text; got != fu.Text {
			t.Errorf("furniture %+v points at %q", fu, got)
		}
	}
	n := len(doc.Pages)
	if count[FurnitureHeader] != n || count[FurniturePageNumber] != n || len(body.Furniture) != 2*n {
		t.Errorf("furniture %v on %d pages, want a header and a page number per page", count, n)
	}
}

// checkProvenance: every body line is in exactly one paragraph, in order,
// and a paragraph's pages are those of its lines; the fixture has a
// paragraph running over a page break and a word hyphenated at a line end.
func checkProvenance(t *testing.T, doc *Document, body *Body) {
	t.Helper()
	spans, hyphens := 0, 0
	var last LineRef
	for _, p := range body.Paragraphs {
		var pages []int
		for _, r := range p.Lines {
			if r.Page < last.Page || r.Page == last.Page && r.Line <= last.Line && last.Page != 0 {
				t.Fatalf("line %+v out of order after %+v", r, last)
			}
			last = r
			if len(pages) == 0 || pages[len(pages)-1] != r.Page {
				pages = append(pages, r.Page)
			}
			if hyphenated(doc.Pages[r.Page-1].Lines[r.Line].Text) {
				hyphens++
			}
		}
		if fmt.Sprint(pages) != fmt.Sprint(p.Pages) {
			t.Errorf("paragraph pages %v, its lines are on %v", p.Pages, pages)
		}
		if len(p.Pages) > 1 {
			spans++
		}
	}
	if spans == 0 || hyphens == 0 {
		t.Errorf("fixture too easy: %d paragraphs over a page break, %d hyphenated line ends", spans, hyphens)
	}
}

func TestIsPageNumber(t *testing.T) {
	yes := []string{"3", "12", "- 3 -", "— 12 —", "Page 3", "page 3 of 10", "PAGE 3 OF 10", "3 / 10", "3/10", "iii", "XIV", "p. 4", "Page iv",
		// As OCR reads them: a speck beside it, 1 as l, 5 as S, a space lost.
		"Page 1 of 6.", "Page lof S", "Page 4 ofS", "Page 2 of S", "~ 7", "l2 of 3O", "Page l"}
	no := []string{"3 Parties", "Section 3", "Total", "2024-01-01", "iiii", "Page three", "12345", "", "Article IV applies",
		// Letters that could be digits, with nothing to say they are.
		"Is", "So", "lo", "Solo", "Page of", "Section 5.", "Page is of", "ISO 9001 applies"}
	for _, s := range yes {
		if !isPageNumber(s) {
			t.Errorf("isPageNumber(%q) = false", s)
		}
	}
	for _, s := range no {
		if isPageNumber(s) {
			t.Errorf("isPageNumber(%q) = true", s)
		}
	}
}

func TestSimilarKeys(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"confidential", "confidentiat", true},
		{"master services agreement", "master servces agreernent", true},
		{"page # of #", "page # of s", true},
		{"confidential", "confidential draft", false}, // another line
		{"draft", "drafts", false},                    // short: must be equal
		{"#", "s", false},
		{"master services agreement", "statement of work", false},
	}
	for _, tc := range tests {
		if got := similarKeys(tc.a, tc.b); got != tc.want {
			t.Errorf("similarKeys(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFurnitureToleratesOCRNoise(t *testing.T) {
	mk := func(head, foot string) Page {
		return synthetic(
			[4]any{72.0, 30.0, 100.0, head},
			[4]any{72.0, 100.0, 468.0, "Body text that runs the full width of the page and continues"},
			[4]any{72.0, 115.0, 200.0, "on the next line."},
			[4]any{280.0, 750.0, 50.0, foot},
		)
	}
	doc := &Document{Pages: []Page{
		mk("Confidential", "Page lof S"), mk("Confidentiat", "Page 2 of S"),
		mk("~ Confidential", "Page 3 of 5."), mk("Confidential", "Page 4 ofS"), mk("Draft", "Page 5 of 5"),
	}}
	body := Reflow(doc, ReflowOptions{})
	kinds := map[string]int{}
	for _, f := range body.Furniture {
		kinds[f.Kind]++
	}
	if kinds[FurnitureHeader] != 4 || kinds[FurniturePageNumber] != 5 || len(body.Furniture) != 9 {
		t.Errorf("furniture %+v", body.Furniture)
	}
	if !strings.Contains(body.Text(), "Draft") {
		t.Error("a one-off head unlike the others was removed")
	}
}

func TestJoinLines(t *testing.T) {
	vocab := map[string]bool{"self-insured": true, "limitation": true, "co-operation": true, "cooperation": true}
	tests := []struct{ text, next, want string }{
		{"the limi-", "tation of liability", "the limitation of liability"},
		{"is self-", "insured by", "is self-insured by"},
		{"full co-", "operation", "full cooperation"}, // both forms occur: the closed one wins
		{"state-of-the-", "art systems", "state-of-the-art systems"},
		{"the Anglo-", "Saxon law", "the Anglo-Saxon law"},
		{"pre-", "2020 rules", "pre-2020 rules"},
		{"soft\u00AD", "Ware", "softWare"},
		{"a dash -", "then", "a dash - then"},
		{"ends.", "Next", "ends. Next"},
		{"tran‐", "sition", "transition"}, // U+2010 HYPHEN
	}
	for _, tc := range tests {
		if got := joinLines(tc.text, tc.next, vocab); got != tc.want {
			t.Errorf("joinLines(%q, %q) = %q, want %q", tc.text, tc.next, got, tc.want)
		}
	}
}

// synthetic builds a page from (x, y, width, text) rows, 12 pt lines.
func synthetic(rows ...[4]any) Page {
	p := Page{Number: 1, Width: 612, Height: 792, Method: MethodText, OCRConfidence: -1}
	for _, r := range rows {
		x, y, w, text := r[0].(float64), r[1].(float64), r[2].(float64), r[3].(string)
		l := Line{Text: text, Box: Box{XMin: x, YMin: y, XMax: x + w, YMax: y + 12}}
		for _, word := range strings.Fields(text) {
			l.Words = append(l.Words, Word{Text: word, Conf: -1})
		}
		p.Lines = append(p.Lines, l)
	}
	return p
}

func TestReflowParagraphRules(t *testing.T) {
	page := synthetic(
		[4]any{72.0, 100.0, 140.0, "SCHEDULE 2"},                                            // all caps heading
		[4]any{72.0, 115.0, 468.0, "The Supplier shall deliver the following items to the"}, // full line
		[4]any{72.0, 130.0, 200.0, "Customer on the Delivery Date:"},                        // ends a sentence
		[4]any{90.0, 145.0, 300.0, "(a) the hardware listed in Annex A;"},                   // list item
		[4]any{90.0, 160.0, 300.0, "(b) the licences listed in Annex B."},
		[4]any{72.0, 190.0, 468.0, "Delivery is complete when the Customer signs the delivery note and the"}, // after a gap
		[4]any{72.0, 205.0, 300.0, "acceptance tests have passed."},
		[4]any{100.0, 220.0, 440.0, "Risk passes on delivery, and title passes on payment in full of the"}, // indented first line
		[4]any{72.0, 235.0, 200.0, "charges for the items."},
	)
	body := Reflow(&Document{Pages: []Page{page}}, ReflowOptions{})
	want := []string{
		"H SCHEDULE 2",
		"The Supplier shall deliver the following items to the Customer on the Delivery Date:",
		"(a) the hardware listed in Annex A;",
		"(b) the licences listed in Annex B.",
		"Delivery is complete when the Customer signs the delivery note and the acceptance tests have passed.",
		"Risk passes on delivery, and title passes on payment in full of the charges for the items.",
	}
	var got []string
	for _, p := range body.Paragraphs {
		s := p.Text
		if p.Heading {
			s = "H " + s
		}
		got = append(got, s)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReflowNeedsRepetitionForRunningHeads(t *testing.T) {
	mk := func(head string) Page {
		return synthetic(
			[4]any{200.0, 30.0, 200.0, head},
			[4]any{72.0, 100.0, 468.0, "Body text that runs the full width of the page and continues"},
			[4]any{72.0, 115.0, 200.0, "on the next line."},
			[4]any{300.0, 760.0, 10.0, "7"},
		)
	}
	doc := &Document{Pages: []Page{mk("Draft 3 — privileged"), mk("Draft 4 — privileged"), mk("Annex heading"), mk("Different")}}
	body := Reflow(doc, ReflowOptions{})
	kinds := map[string]int{}
	for _, f := range body.Furniture {
		kinds[f.Kind]++
	}
	// "Draft # — privileged" repeats on 2 of 4 pages (50%): a header; the
	// others occur once and stay; the bare numbers are page numbers.
	if kinds[FurnitureHeader] != 2 || kinds[FurniturePageNumber] != 4 || len(body.Furniture) != 6 {
		t.Errorf("furniture %+v", body.Furniture)
	}
	if !strings.Contains(body.Text(), "Annex heading") {
		t.Error("a one-off top line was removed")
	}
}

func TestPagePitch(t *testing.T) {
	para := []float64{14.8, 14.9, 21.5, 14.8, 14.8, 21.4, 14.9} // lines run on in paragraphs
	sig := []float64{21.5, 21.4, 21.5, 21.5}                    // one-line paragraphs only
	mixed := []float64{21.5, 14.8, 21.5, 21.4, 21.5, 14.9}      // mostly one-liners, some wrap
	tests := []struct {
		name             string
		pitches          []float64
		docPitch, height float64
		docHeight, want  float64
	}{
		{"paragraph page keeps its own", para, 14.8, 12, 12, 14.9},
		{"one-line paragraphs take the document's", sig, 14.8, 12, 12, 14.8},
		{"short OCR lines are no larger type", sig, 14.8, 9, 12, 14.8},
		{"some lines close up to the document's", mixed, 14.8, 20, 12, 14.8},
		{"a cover page in a larger type keeps its own", []float64{30, 31, 30}, 14.8, 20, 12, 30},
		{"no document pitch", sig, 0, 12, 12, 21.5},
	}
	for _, tc := range tests {
		if got := pagePitch(tc.pitches, tc.docPitch, tc.height, tc.docHeight); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReflowOneLineParagraphs: a page of one-line paragraphs (the
// signature page) is split at its blank lines like any other, and a
// paragraph that wraps on such a page still runs on.
func TestReflowOneLineParagraphs(t *testing.T) {
	body := synthetic(
		[4]any{72.0, 100.0, 468.0, "Body text that runs the full width of the page and continues"},
		[4]any{72.0, 115.0, 200.0, "on the next line."},
		[4]any{72.0, 136.0, 468.0, "Another paragraph that runs the full width of the page and then"},
		[4]any{72.0, 151.0, 200.0, "ends here."},
	)
	sig := synthetic(
		[4]any{72.0, 100.0, 468.0, "IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective"},
		[4]any{72.0, 115.0, 40.0, "Date."},
		[4]any{72.0, 136.0, 120.0, "ACME CORPORATION"},
		[4]any{72.0, 157.0, 100.0, "Name: Sam Patel"},
		[4]any{72.0, 178.0, 120.0, "Title: General Counsel"},
	)
	sig.Number = 2
	got := Reflow(&Document{Pages: []Page{body, body, sig}}, ReflowOptions{}).Text()
	for _, want := range []string{
		"IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date.\n\nACME CORPORATION",
		"ACME CORPORATION\n\nName: Sam Patel\n\nTitle: General Counsel",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in\n%s", want, got)
		}
	}
}

func TestStraightenUndoesTurnBox(t *testing.T) {
	boxes := []Box{
		{XMin: 72, YMin: 100, XMax: 540, YMax: 112}, // a full line
		{XMin: 72, YMin: 400, XMax: 110, YMax: 409}, // a short line far from the centre
		{XMin: 250, YMin: 36, XMax: 360, YMax: 50},  // a title at the top
	}
	for _, skew := range []float64{0.8, -1.5, 3.5} {
		for _, b := range boxes {
			got := straighten(turnBox(b, skew, 306, 396), skew, 306, 396)
			for i, d := range []float64{got.XMin - b.XMin, got.YMin - b.YMin, got.XMax - b.XMax, got.YMax - b.YMax} {
				if d > 0.05 || d < -0.05 {
					t.Errorf("skew %v: %+v came back as %+v (side %d off by %.3f)", skew, b, got, i, d)
				}
			}
		}
	}
	// A box that no turn made (a speck smaller than the turn adds) keeps
	// its size rather than going negative.
	speck := Box{XMin: 100, YMin: 100, XMax: 101, YMax: 140}
	if got := straighten(speck, 3, 306, 396); got.XMax-got.XMin <= 0 || got.YMax-got.YMin <= 0 {
		t.Errorf("speck straightened to %+v", got)
	}
}

// TestReflowReadsSkewedScansLikeStraightPages: the paragraph rules give the
// same paragraphs when an OCR page's boxes were mapped back onto a page
// turned by a few degrees.
func TestReflowReadsSkewedScansLikeStraightPages(t *testing.T) {
	straight := synthetic(
		[4]any{72.0, 100.0, 468.0, "Customer shall give Provider written notice of the claim within"},
		[4]any{72.0, 115.0, 468.0, "ten (10) business days after receiving it, sole control of its"},
		[4]any{72.0, 130.0, 468.0, "defense and settlement, and reasonable cooperation at Provider's"},
		[4]any{72.0, 145.0, 44.0, "expense."},
		[4]any{72.0, 166.0, 468.0, "Data Protection. Provider shall process personal data only on"},
		[4]any{72.0, 181.0, 200.0, "Customer's documented instructions."},
		[4]any{186.0, 202.0, 240.0, "MASTER SERVICES AGREEMENT"},
		[4]any{72.0, 223.0, 300.0, "The parties agree as follows:"},
	)
	want := Reflow(&Document{Pages: []Page{straight}}, ReflowOptions{})
	for _, skew := range []float64{0.8, -2, 3.5} {
		p := straight
		p.Method, p.SkewDegrees = MethodOCR, skew
		p.Lines = slices.Clone(straight.Lines)
		for i := range p.Lines {
			p.Lines[i].Box = turnBox(p.Lines[i].Box, skew, p.Width/2, p.Height/2)
		}
		got := Reflow(&Document{Pages: []Page{p}}, ReflowOptions{})
		if got.Text() != want.Text() || len(got.Paragraphs) != len(want.Paragraphs) {
			t.Errorf("skew %v:\n%s\nwant\n%s", skew, got.Text(), want.Text())
			continue
		}
		for i := range got.Paragraphs {
			if got.Paragraphs[i].Heading != want.Paragraphs[i].Heading {
				t.Errorf("skew %v: paragraph %d heading %v, want %v", skew, i, got.Paragraphs[i].Heading, want.Paragraphs[i].Heading)
			}
		}
	}
}

func TestIsHeadingByLayout(t *testing.T) {
	st := &layoutStats{left: 72, width: 468, height: 12, pitch: 15, larger: 1.15}
	line := func(x, w, h float64, text string) flowLine {
		return flowLine{line: Line{Text: text, Words: make([]Word, len(strings.Fields(text)))},
			box: Box{XMin: x, YMin: 100, XMax: x + w, YMax: 100 + h}, stats: st}
	}
	next := line(72, 468, 12, "Body text follows.")
	tests := []struct {
		name string
		l    flowLine
		want bool
	}{
		{"centred title wider than a short line", line(158, 306, 12, "MASTER SERVICES AGREEMENT"), true},
		{"wide caps heading", line(72, 330, 12, "SECTION 12. HANDLING DISAGREEMENTS"), true},
		{"larger type", line(72, 400, 16, "Limitation of Liability and Indemnities Generally"), true},
		{"short numbered heading", line(72, 120, 12, "7. Notices"), true},
		// Near misses.
		{"caps body paragraph fills its first line", line(72, 466, 12, "IN NO EVENT SHALL EITHER PARTY BE LIABLE TO THE OTHER FOR"), false},
		{"indented first line is not centred", line(100, 440, 12, "Risk passes on delivery, and title passes on payment in full of the"), false},
		{"wide sentence off centre", line(72, 330, 12, "The parties agree as follows, in full."), false},
		{"caps sentence", line(72, 330, 12, "THE PARTIES AGREE AS FOLLOWS, IN FULL."), false},
	}
	for _, tc := range tests {
		if got := isHeading(tc.l, true, &next); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkFurnitureLongDocument is the fuzzy repetition's worst case: as
// many pages as keeps the edge lines, all different, within maxFuzzyKeys.
func BenchmarkFurnitureLongDocument(b *testing.B) {
	var pages []Page
	for i := range maxFuzzyKeys / 3 {
		pages = append(pages, synthetic(
			[4]any{72.0, 30.0, 400.0, fmt.Sprintf("Clause %d: a body line that sits at the top edge", i)},
			[4]any{72.0, 45.0, 400.0, fmt.Sprintf("and another one numbered %d at the edge too", i*7)},
			[4]any{72.0, 400.0, 468.0, "Body text that runs the full width of the page and continues"},
			[4]any{72.0, 750.0, 400.0, fmt.Sprintf("a footer line that is different on page %d", i*13)},
		))
	}
	doc := &Document{Pages: pages}
	for b.Loop() {
		findFurniture(doc, ReflowOptions{RepeatRatio: 0.5, Band: 0.1})
	}
}
