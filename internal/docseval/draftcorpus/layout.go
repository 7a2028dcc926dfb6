package draftcorpus

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Layouts of this drafter's contracts.
const (
	LayoutNumbered  = "numbered_clauses"      // one column: "7. LIABILITY", paragraphs numbered 7.1, 7.2
	LayoutTwoColumn = "two_column_terms"      // terms and conditions: two justified columns of small type, run-in headings
	LayoutSide      = "side_headings"         // each section a table row: its heading in a cell beside its text
	LayoutFootnoted = "clause_word_footnotes" // "Clause 7 - Liability", a key terms table up front, footnotes
)

type layout struct {
	name string
	set  func(g *contractGen) (testdocs.Fixed, error)
}

var layouts = []layout{
	{LayoutNumbered, setNumbered},
	{LayoutTwoColumn, setTwoColumn},
	{LayoutSide, setSide},
	{LayoutFootnoted, setFootnoted},
}

// render typesets blocks on pages with running lines.
func render(g *contractGen, st pageStyle, blocks []block) (testdocs.Fixed, error) {
	ts, err := newTypesetter(st)
	if err != nil {
		return testdocs.Fixed{}, err
	}
	pages, err := ts.set(blocks)
	if err != nil {
		return testdocs.Fixed{}, err
	}
	if err := ts.running(pages); err != nil {
		return testdocs.Fixed{}, err
	}
	return testdocs.Fixed{Pages: pages, Width: pageW, Height: pageH,
		Meta: testdocs.Meta{Title: "Services Agreement", Creator: "airlock draft corpus"}}, nil
}

func (g *contractGen) style(size, margin float64, justify bool) pageStyle {
	parties := g.mat.Parties.of(g.split)
	headers := []string{"Services Agreement", "CONFIDENTIAL", shortName(parties[0][0]) + " / Services Agreement", ""}
	footers := []string{"Page {page} of {pages}", "{page}", "Services Agreement (version 3.2) | {page}", "- {page} -"}
	return pageStyle{size: size, margin: margin, justify: justify,
		header: headers[g.rng.IntN(len(headers))], footer: footers[g.rng.IntN(len(footers))]}
}

func shortName(s string) string {
	f := strings.Fields(s)
	return f[0]
}

func text(s string) []run { return []run{{text: s}} }

// front is the title, the parties and the recitals.
func (g *contractGen) front(title string) []block {
	ps := g.mat.Parties.of(g.split)
	i := g.rng.IntN(len(ps))
	j := (i + 1 + g.rng.IntN(len(ps)-1)) % len(ps)
	g.partyNames = [2]string{ps[i][0], ps[j][0]}
	date := fmt.Sprintf("%d %s 2025", 1+g.rng.IntN(28), []string{"January", "April", "July", "October"}[g.rng.IntN(4)])
	return []block{
		{kind: kTitle, runs: []run{{text: title, bold: true}}},
		{kind: kPara, runs: text("THIS AGREEMENT is dated " + date + " and made between:")},
		{kind: kPara, indent: 18, runs: text(fmt.Sprintf(`(1) %s, %s ("Customer"); and`, ps[i][0], ps[i][1]))},
		{kind: kPara, indent: 18, runs: text(fmt.Sprintf(`(2) %s, %s ("Provider").`, ps[j][0], ps[j][1]))},
		{kind: kHeading, runs: []run{{text: "BACKGROUND", bold: true}}},
		{kind: kPara, runs: text("(A) Customer wishes to obtain consulting and technology services, and Provider is willing to provide them, on the terms of this Agreement.")},
		{kind: kHeading, runs: []run{{text: "AGREED TERMS", bold: true}}},
	}
}

// back is the signature block and, now and then, a schedule of charges.
func (g *contractGen) back() []block {
	sigs := g.mat.Signatories.of(g.split)
	k := g.rng.IntN(len(sigs))
	out := []block{{kind: kPara, runs: text("Signed by the authorised representatives of the parties on the date at the top of this Agreement.")}}
	for n, name := range g.partyNames {
		out = append(out,
			block{kind: kPara, runs: []run{{text: "Signed for and on behalf of " + name, bold: true}}},
			block{kind: kPara, runs: text("Name: " + sigs[(k+n)%len(sigs)])},
			block{kind: kPara, runs: text("Title: " + []string{"Managing Director", "General Counsel"}[n])},
		)
	}
	if g.rng.Float64() < 0.5 {
		out = append(out, block{kind: kHeading, runs: []run{{text: "SCHEDULE 1 - CHARGES", bold: true}}},
			block{kind: kRow, ratio: 0.4, runs: []run{{text: "Senior consultant, per day", bold: true}}, cells: [][]run{text("EUR 1,450")}},
			block{kind: kRow, ratio: 0.4, runs: []run{{text: "Consultant, per day", bold: true}}, cells: [][]run{text("EUR 980")}})
	}
	return out
}

// paraRuns is a paragraph's runs: its number, its run-in title in bold,
// its text.
func paraRuns(number string, p para) []run {
	var rs []run
	if number != "" {
		rs = append(rs, run{text: number})
	}
	if p.title != "" {
		rs = append(rs, run{text: strings.TrimSuffix(p.title, ".") + ".", bold: true})
	}
	return append(rs, run{text: p.text})
}

// subNumbers says whether a section's paragraphs are numbered 7.1, 7.2.
func (g *contractGen) subNumbers(s *sect) bool { return len(s.paras) > 1 || g.rng.Float64() < 0.3 }

func setNumbered(g *contractGen) (testdocs.Fixed, error) {
	st := g.style(10.5+g.rng.Float64()*0.5, 66, false)
	caps := g.rng.Float64() < 0.5
	blocks := g.front([]string{"SERVICES AGREEMENT", "CONSULTING SERVICES AGREEMENT"}[g.rng.IntN(2)])
	for n, s := range g.sects {
		h := s.heading
		if caps {
			h = strings.ToUpper(h)
		}
		blocks = append(blocks, block{kind: kHeading, runs: []run{{text: fmt.Sprintf("%d. %s", n+1, h), bold: true}}})
		sub := g.subNumbers(s)
		for m, p := range s.paras {
			num := ""
			if sub {
				num = fmt.Sprintf("%d.%d", n+1, m+1)
			}
			blocks = append(blocks, block{kind: kPara, runs: paraRuns(num, p)})
		}
	}
	return render(g, st, append(blocks, g.back()...))
}

func setTwoColumn(g *contractGen) (testdocs.Fixed, error) {
	st := g.style(8.5+g.rng.Float64()*0.5, 48, true)
	blocks := g.front("GENERAL TERMS AND CONDITIONS OF SERVICE")
	blocks = append(blocks, block{kind: kColumns, cols: 2})
	for n, s := range g.sects {
		sub := len(s.paras) > 1
		for m, p := range s.paras {
			var rs []run
			if m == 0 {
				rs = append(rs, run{text: fmt.Sprintf("%d. %s.", n+1, s.heading), bold: true})
			}
			num := ""
			if sub {
				num = fmt.Sprintf("%d.%d", n+1, m+1)
			}
			blocks = append(blocks, block{kind: kPara, runs: append(rs, paraRuns(num, p)...)})
		}
	}
	return render(g, st, append(blocks, g.back()...))
}

func setSide(g *contractGen) (testdocs.Fixed, error) {
	st := g.style(10, 60, false)
	blocks := g.front("SERVICES AGREEMENT")
	for n, s := range g.sects {
		sub := g.subNumbers(s)
		var cells [][]run
		for m, p := range s.paras {
			num := ""
			if sub {
				num = fmt.Sprintf("%d.%d", n+1, m+1)
			}
			cells = append(cells, paraRuns(num, p))
		}
		blocks = append(blocks, block{kind: kRow, ratio: 0.27, runs: []run{{text: fmt.Sprintf("%d. %s", n+1, s.heading), bold: true}}, cells: cells})
	}
	return render(g, st, append(blocks, g.back()...))
}

func setFootnoted(g *contractGen) (testdocs.Fixed, error) {
	st := g.style(10.5, 68, false)
	blocks := g.front("AGREEMENT FOR THE PROVISION OF SERVICES")
	blocks = append(blocks, block{kind: kHeading, runs: []run{{text: "KEY TERMS", bold: true}}})
	for _, row := range g.mat.KeyTerms.of(g.split) {
		blocks = append(blocks, block{kind: kRow, ratio: 0.35, runs: []run{{text: row[0], bold: true}}, cells: [][]run{text(row[1])}})
	}
	notes := g.mat.Footnotes.of(g.split)
	var paras []*block
	for n, s := range g.sects {
		blocks = append(blocks, block{kind: kHeading, runs: []run{{text: fmt.Sprintf("Clause %d \u2013 %s", n+1, s.heading), bold: true}}})
		sub := g.subNumbers(s)
		for m, p := range s.paras {
			num := ""
			if sub {
				num = fmt.Sprintf("%d.%d", n+1, m+1)
			}
			blocks = append(blocks, block{kind: kPara, runs: paraRuns(num, p)})
		}
	}
	for i := range blocks {
		if blocks[i].kind == kPara && i > 8 {
			paras = append(paras, &blocks[i])
		}
	}
	// A footnote marker after the last word of two or three paragraphs,
	// clauses among them: a trivial difference, never a change.
	for k := range 2 + g.rng.IntN(2) {
		if len(paras) == 0 {
			break
		}
		b := paras[g.rng.IntN(len(paras))]
		b.runs[len(b.runs)-1].note = notes[k%len(notes)]
	}
	return render(g, st, append(blocks, g.back()...))
}
