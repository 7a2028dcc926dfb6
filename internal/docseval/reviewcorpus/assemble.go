package reviewcorpus

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// emit appends a heading and its body, now and then with a page break
// between two paragraphs of the body.
func (g *contractGen) emit(form headingForm, it item) {
	g.blocks = append(g.blocks, form.blocks...)
	for i, p := range it.paras {
		if i > 0 && g.rng.Float64() < 0.3 {
			g.blocks = append(g.blocks, testdocs.Block{Kind: testdocs.PageBreak})
		}
		b := testdocs.Block{Kind: testdocs.Paragraph, Text: p}
		if i == 0 {
			b.RunIn = form.runIn
		}
		g.blocks = append(g.blocks, b)
	}
	if it.clause >= 0 {
		g.truth.Clauses[it.clause].Heading = form.text()
	}
}

func (g *contractGen) place(it item, placement string) {
	if it.clause >= 0 && g.truth.Clauses[it.clause].Placement == PlacedSection {
		g.truth.Clauses[it.clause].Placement = placement
	}
}

// layoutFlat numbers sections from 1 and, in most contracts, nests the
// last few in a general section as subsections.
func (g *contractGen) layoutFlat(lay layout, items []item) {
	var nested []item
	if g.rng.Float64() < 0.6 && len(items) > 6 {
		k := 2 + g.rng.IntN(3)
		nested = items[len(items)-k:]
		items = items[:len(items)-k]
	}
	n := 1
	for _, it := range items {
		g.emit(lay.top(g.rng, n, it.title), it)
		n++
	}
	if len(nested) == 0 {
		return
	}
	title := g.mat.GeneralSections[g.rng.IntN(len(g.mat.GeneralSections))]
	form := lay.top(g.rng, n, title)
	intro := item{clause: -1}
	if form.runIn != "" || g.rng.Float64() < 0.5 {
		intro.paras = []string{"The following provisions apply to this Agreement and each statement of work."}
	}
	g.emit(form, intro)
	for m, it := range nested {
		g.place(it, PlacedSubsection)
		g.emit(lay.sub(g.rng, n, m+1, it.title), it)
	}
}

// layoutArticles groups sections into articles of two to four.
func (g *contractGen) layoutArticles(lay layout, items []item) {
	titles := g.mat.Articles
	start := g.rng.IntN(len(titles))
	for a := 1; len(items) > 0; a++ {
		k := min(len(items), 2+g.rng.IntN(3))
		g.emit(lay.top(g.rng, a, titles[(start+a)%len(titles)]), item{clause: -1})
		for m, it := range items[:k] {
			g.place(it, PlacedSubsection)
			g.emit(lay.sub(g.rng, a, m+1, it.title), it)
		}
		items = items[k:]
	}
}

func (g *contractGen) frontMatter() {
	c := g.mat.Parties[g.rng.IntN(len(g.mat.Parties))]
	p := c
	for p == c {
		p = g.mat.Parties[g.rng.IntN(len(g.mat.Parties))]
	}
	month, day := g.rng.IntN(4), 1+g.rng.IntN(28)
	date := fmt.Sprintf("%s %d, 2025", []string{"January", "March", "June", "September"}[month], day)
	g.truth.EffectiveDate = fmt.Sprintf("2025-%02d-%02d", []int{1, 3, 6, 9}[month], day)
	g.truth.Parties = []PartyTruth{{Name: c[0], Role: "Customer", Signatory: "Jordan Lee"},
		{Name: p[0], Role: "Provider", Signatory: "Sam Patel"}}
	g.blocks = append(g.blocks,
		testdocs.Block{Kind: testdocs.Title, Text: "MASTER SERVICES AGREEMENT"},
		testdocs.Block{Kind: testdocs.Paragraph, Text: fmt.Sprintf(
			`This Master Services Agreement (the "Agreement") is entered into as of %s (the "Effective Date") by and between %s, a %s %s ("Customer"), and %s, a %s %s ("Provider").`,
			date, c[0], c[1], c[2], p[0], p[1], p[2])},
		testdocs.Block{Kind: testdocs.Paragraph, Text: "The parties agree as follows:"},
	)
	g.partyNames = [2]string{c[0], p[0]}
}

func (g *contractGen) backMatter() {
	g.blocks = append(g.blocks, testdocs.Block{Kind: testdocs.Paragraph,
		Text: "IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date."})
	for i, name := range g.partyNames {
		g.blocks = append(g.blocks,
			testdocs.Block{Kind: testdocs.Paragraph, Text: strings.ToUpper(name), Bold: true},
			testdocs.Block{Kind: testdocs.Paragraph, Text: "By: ____________________"},
			testdocs.Block{Kind: testdocs.Paragraph, Text: "Name: " + []string{"Jordan Lee", "Sam Patel"}[i]},
			testdocs.Block{Kind: testdocs.Paragraph, Text: "Title: " + []string{"Chief Executive Officer", "General Counsel"}[i]},
		)
	}
}

// Page model for the paragraph page numbers: US Letter, 72 pt margins,
// 11 pt text, about 90 characters a line and 44 lines a page after the
// running header and footer. The renderer's real breaks may differ by a
// line; the analysis only reports pages, it never depends on them.
const (
	charsPerLine = 90
	linesPerPage = 44
)

// paragraphs is what extraction produces from a flow: one paragraph per
// block, run-in heading and text joined, running headers and footers
// left out, with the pages each paragraph is printed on.
func paragraphs(f testdocs.Flow) []Paragraph {
	var out []Paragraph
	page, line := 1, 0
	for _, b := range f.Blocks {
		if b.Kind == testdocs.PageBreak {
			if line > 0 {
				page, line = page+1, 0
			}
			continue
		}
		text := b.Text
		if b.RunIn != "" {
			text = b.RunIn + " " + b.Text
		}
		n := (len(text)+charsPerLine-1)/charsPerLine + 1
		if b.Kind != testdocs.Paragraph && line+n+3 > linesPerPage {
			page, line = page+1, 0 // a heading is kept with what follows
		}
		first := page
		line += n
		for line > linesPerPage {
			page, line = page+1, line-linesPerPage
		}
		pages := []int{}
		for p := first; p <= page; p++ {
			pages = append(pages, p)
		}
		out = append(out, Paragraph{Text: text, Pages: pages})
	}
	return out
}
