package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/testdocs"
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
	yes := []string{"3", "12", "- 3 -", "— 12 —", "Page 3", "page 3 of 10", "PAGE 3 OF 10", "3 / 10", "3/10", "iii", "XIV", "p. 4", "Page iv"}
	no := []string{"3 Parties", "Section 3", "Total", "2024-01-01", "iiii", "Page three", "12345", "", "Article IV applies"}
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
