package reviewcorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// headingForm is how one heading is set: blocks of its own before the
// body, or a run-in at the start of the first body paragraph.
type headingForm struct {
	blocks []testdocs.Block
	runIn  string
}

// text is the heading as a reader (and the extraction) sees it.
func (h headingForm) text() string {
	if h.runIn != "" {
		return h.runIn
	}
	var parts []string
	for _, b := range h.blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, " ")
}

// layout is a contract's heading scheme. top sets a top-level section
// (or, when articles is set, an article heading with no body of its own);
// sub sets a section nested in it.
type layout struct {
	name     string
	articles bool
	top      func(rng *rand.Rand, n int, title string) headingForm
	sub      func(rng *rand.Rand, n, m int, title string) headingForm
}

func heading(text string) headingForm {
	return headingForm{blocks: []testdocs.Block{{Kind: testdocs.Heading, Text: text}}}
}

func runIn(text string) headingForm { return headingForm{runIn: text} }

// sentenceCase is "Limitation of liability": only the first letter
// capital, as many drafters number and title subsections.
func sentenceCase(rng *rand.Rand, title string) string {
	if rng.Float64() < 0.6 {
		return title
	}
	s := strings.ToLower(title)
	return strings.ToUpper(s[:1]) + s[1:]
}

func roman(n int) string {
	vals := []int{10, 9, 5, 4, 1}
	syms := []string{"X", "IX", "V", "IV", "I"}
	var b strings.Builder
	for i, v := range vals {
		for n >= v {
			b.WriteString(syms[i])
			n -= v
		}
	}
	return b.String()
}

var layouts = []layout{
	{
		name: "numbered_caps",
		top: func(_ *rand.Rand, n int, t string) headingForm {
			return heading(fmt.Sprintf("%d. %s", n, strings.ToUpper(t)))
		},
		sub: func(rng *rand.Rand, n, m int, t string) headingForm {
			return heading(fmt.Sprintf("%d.%d %s", n, m, sentenceCase(rng, t)))
		},
	},
	{
		name: "numbered_runin",
		top:  func(_ *rand.Rand, n int, t string) headingForm { return runIn(fmt.Sprintf("%d. %s.", n, t)) },
		sub: func(_ *rand.Rand, _, m int, t string) headingForm {
			return runIn(fmt.Sprintf("(%c) %s.", 'a'+rune(m-1), t))
		},
	},
	{
		name: "section_dash",
		top:  func(_ *rand.Rand, n int, t string) headingForm { return heading(fmt.Sprintf("Section %d - %s.", n, t)) },
		sub:  func(_ *rand.Rand, n, m int, t string) headingForm { return runIn(fmt.Sprintf("%d.%d %s.", n, m, t)) },
	},
	{
		name: "section_caps",
		top: func(_ *rand.Rand, n int, t string) headingForm {
			return heading(fmt.Sprintf("SECTION %d. %s", n, strings.ToUpper(t)))
		},
		sub: func(rng *rand.Rand, n, m int, t string) headingForm {
			return heading(fmt.Sprintf("%d.%d %s", n, m, sentenceCase(rng, t)))
		},
	},
	{
		name:     "article_roman",
		articles: true,
		top: func(_ *rand.Rand, n int, t string) headingForm {
			return headingForm{blocks: []testdocs.Block{
				{Kind: testdocs.Heading, Text: "ARTICLE " + roman(n)},
				{Kind: testdocs.Heading, Text: strings.ToUpper(t)},
			}}
		},
		sub: func(_ *rand.Rand, n, m int, t string) headingForm {
			return runIn(fmt.Sprintf("Section %d.%02d %s.", n, m, t))
		},
	},
	{
		name:     "article_dash",
		articles: true,
		top:      func(_ *rand.Rand, n int, t string) headingForm { return heading(fmt.Sprintf("Article %d - %s", n, t)) },
		sub:      func(_ *rand.Rand, n, m int, t string) headingForm { return heading(fmt.Sprintf("%d.%d %s", n, m, t)) },
	},
	{
		name: "caps_plain",
		top:  func(_ *rand.Rand, _ int, t string) headingForm { return heading(strings.ToUpper(t)) },
		sub:  func(_ *rand.Rand, _, _ int, t string) headingForm { return runIn(t + ".") },
	},
	{
		name: "title_runin",
		top:  func(_ *rand.Rand, _ int, t string) headingForm { return runIn(t + ".") },
		sub:  func(_ *rand.Rand, _, _ int, t string) headingForm { return runIn(t + ".") },
	},
	{
		name: "numbered_title",
		top:  func(_ *rand.Rand, n int, t string) headingForm { return heading(fmt.Sprintf("%d. %s", n, t)) },
		sub:  func(_ *rand.Rand, n, m int, t string) headingForm { return runIn(fmt.Sprintf("%d.%d %s.", n, m, t)) },
	},
}
