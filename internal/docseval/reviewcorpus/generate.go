package reviewcorpus

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Placements of a clause in a contract.
const (
	PlacedSection    = "section"          // its own section, heading from the playbook (title or synonym)
	PlacedSubsection = "subsection"       // a subsection of another article
	PlacedUnlisted   = "unlisted_heading" // its own section, under a heading the playbook does not list
	PlacedUnheaded   = "unheaded"         // paragraphs inside another (filler) section, no heading
)

// Options controls Generate.
type Options struct {
	Seed      int64
	Contracts int
	// Playbook is the playbook the contracts are built from; nil means the
	// default playbook. Clauses without corpus material (rewrites, places)
	// are only ever verbatim, trivially changed, numerically changed or
	// missing.
	Playbook *playbook.Playbook
}

// Paragraph is one paragraph as extraction produces it: the wire shape of
// the review job's input (review.Paragraph in the guest), kept here so the
// corpus never links the analyser.
type Paragraph struct {
	Text  string `json:"text"`
	Pages []int  `json:"pages"`
}

// Contract is one generated contract.
type Contract struct {
	Name string `json:"name"`
	// Flow is the document for the renderer (text PDF or scan).
	Flow testdocs.Flow `json:"flow"`
	// Paragraphs are what extraction should produce from Flow: headers,
	// footers and page numbers stripped, one paragraph per block, run-in
	// headings joined to their paragraph, pages estimated.
	Paragraphs []Paragraph `json:"paragraphs"`
	Truth      Truth       `json:"truth"`
}

// Truth is the known review result of a contract.
type Truth struct {
	Contract string        `json:"contract"`
	Layout   string        `json:"layout"`
	Clauses  []ClauseTruth `json:"clauses"` // playbook order
	// The contract's facts (issue 34) as the front and back matter set them.
	Parties       []PartyTruth `json:"parties,omitempty"`
	EffectiveDate string       `json:"effective_date,omitempty"` // YYYY-MM-DD
}

// PartyTruth is one party as the preamble and signature block name it.
type PartyTruth struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	Signatory string `json:"signatory"`
}

// ClauseTruth is the known result for one playbook clause.
type ClauseTruth struct {
	Clause        string   `json:"clause"`
	Status        string   `json:"status"`
	NumericChange bool     `json:"numeric_change"`
	Variant       string   `json:"variant"`
	Placement     string   `json:"placement"` // "" when missing
	Heading       string   `json:"heading"`   // as set; "" when missing or unheaded
	Expected      []string `json:"expected_terms"`
	Found         []string `json:"found_terms"`
}

// item is a section to lay out: a playbook clause or a filler.
type item struct {
	title  string
	paras  []string
	clause int // index into the truth's clauses, -1 for a filler
	nested []int
}

// Generate builds opts.Contracts contracts, deterministically for
// opts.Seed.
func Generate(opts Options) ([]Contract, error) {
	if opts.Contracts <= 0 {
		return nil, errors.New("corpus: Contracts must be positive")
	}
	pb := opts.Playbook
	if pb == nil {
		var err error
		if pb, err = playbook.DefaultPlaybook(); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
	}
	mat, err := loadMaterial()
	if err != nil {
		return nil, err
	}
	out := make([]Contract, 0, opts.Contracts)
	for i := range opts.Contracts {
		rng := rand.New(rand.NewPCG(uint64(opts.Seed), uint64(i)))
		g := &contractGen{rng: rng, pb: pb, mat: mat, name: fmt.Sprintf("contract-%03d", i+1)}
		out = append(out, g.build())
	}
	return out, nil
}

type contractGen struct {
	rng    *rand.Rand
	pb     *playbook.Playbook
	mat    *material
	name   string
	truth  Truth
	blocks []testdocs.Block
	// partyNames are Customer's and Provider's, for the signature block.
	partyNames [2]string
}

func (g *contractGen) build() Contract {
	lay := layouts[g.rng.IntN(len(layouts))]
	g.truth = Truth{Contract: g.name, Layout: lay.name}
	items := g.clauseItems()
	items = append(items, g.fillerItems()...)
	g.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	g.placeUnheaded(items)
	items = slices.DeleteFunc(items, func(it item) bool { return it.title == "" })
	g.frontMatter()
	if lay.articles {
		g.layoutArticles(lay, items)
	} else {
		g.layoutFlat(lay, items)
	}
	g.backMatter()
	flow := testdocs.Flow{
		Blocks:    g.blocks,
		Header:    []string{"Master Services Agreement", "Confidential", ""}[g.rng.IntN(3)],
		Footer:    []string{"Page {page} of {pages}", "{page}", "- {page} -"}[g.rng.IntN(3)],
		Hyphenate: g.rng.Float64() < 0.5,
		Meta:      testdocs.Meta{Title: "Master Services Agreement", Creator: "airlock corpus"},
	}
	return Contract{Name: g.name, Flow: flow, Paragraphs: paragraphs(flow), Truth: g.truth}
}

// clauseItems draws every playbook clause's variant and heading.
func (g *contractGen) clauseItems() []item {
	var items []item
	for ci := range g.pb.Clauses {
		c := &g.pb.Clauses[ci]
		cm := g.mat.Clauses[c.Key]
		v := makeVariant(g.rng, c, cm)
		ct := ClauseTruth{Clause: c.Key, Status: v.status, NumericChange: v.numeric, Variant: v.name,
			Expected: nonNil(v.expected), Found: nonNil(v.found)}
		if v.status == reviewresult.StatusMissing {
			ct.Found = []string{}
			g.truth.Clauses = append(g.truth.Clauses, ct)
			continue
		}
		title, placement := g.clauseHeading(c, cm)
		ct.Placement = placement
		g.truth.Clauses = append(g.truth.Clauses, ct)
		items = append(items, item{title: title, paras: v.paras, clause: len(g.truth.Clauses) - 1})
	}
	return items
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// clauseHeading picks the heading: the title or a listed synonym, now and
// then a heading the playbook does not list, or none at all.
func (g *contractGen) clauseHeading(c *playbook.Clause, cm clauseMaterial) (string, string) {
	r := g.rng.Float64()
	switch {
	case r < 0.06:
		return "", PlacedUnheaded
	case r < 0.16 && len(cm.Unlisted) > 0:
		return cm.Unlisted[g.rng.IntN(len(cm.Unlisted))], PlacedUnlisted
	case r < 0.55 || len(c.Headings) == 0:
		return c.Title, PlacedSection
	}
	return c.Headings[g.rng.IntN(len(c.Headings))], PlacedSection
}

func (g *contractGen) fillerItems() []item {
	idx := g.rng.Perm(len(g.mat.Fillers))[:5+g.rng.IntN(4)]
	var items []item
	for _, i := range idx {
		f := g.mat.Fillers[i]
		items = append(items, item{title: f.Title, paras: slices.Clone(f.Paragraphs), clause: -1})
	}
	return items
}

// placeUnheaded moves unheaded clauses into a filler section (after its
// own paragraphs) and marks them for removal from the list.
func (g *contractGen) placeUnheaded(items []item) {
	var hosts []int
	for i, it := range items {
		if it.clause < 0 {
			hosts = append(hosts, i)
		}
	}
	for i := range items {
		if items[i].clause >= 0 && items[i].title == "" {
			h := hosts[g.rng.IntN(len(hosts))]
			items[h].nested = append(items[h].nested, i)
		}
	}
	for _, h := range hosts {
		for _, n := range items[h].nested {
			items[h].paras = append(items[h].paras, items[n].paras...)
			items[n].paras = nil
		}
	}
}
