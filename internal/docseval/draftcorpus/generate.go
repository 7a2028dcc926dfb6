package draftcorpus

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"
	reviewresult "github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Placements of a clause recorded in the truth.
const (
	PlacedOwn           = "own_section"      // a section of its own under this drafter's heading
	PlacedCombined      = "combined_section" // its own paragraph(s) in a combined section ("Term and Termination")
	PlacedCombinedRunIn = "combined_run_in"  // run into one paragraph with a provision on another subject
	PlacedGeneralTitled = "general_run_in"   // a paragraph of the general section with a run-in heading
	PlacedGeneralPlain  = "general_unheaded" // a paragraph of the general section with no heading
)

// Options controls Generate.
type Options struct {
	Seed      int64
	Contracts int
	// Split is the half of the material to draw from: SplitTune or
	// SplitHeldout.
	Split string
}

// Contract is one generated contract: its pages, ready to render as a
// text PDF or a scan, and its truth.
type Contract struct {
	Name  string
	Pages testdocs.Fixed
	Truth reviewcorpus.Truth
	// text is every section's paragraphs as written, for the tests.
	text []string
}

// Generate builds opts.Contracts contracts from one half of the material,
// deterministically for opts.Seed. The truth is for the default playbook.
func Generate(opts Options) ([]Contract, error) {
	if opts.Contracts <= 0 {
		return nil, errors.New("draft corpus: Contracts must be positive")
	}
	if opts.Split != SplitTune && opts.Split != SplitHeldout {
		return nil, fmt.Errorf("draft corpus: split %q is neither %s nor %s", opts.Split, SplitTune, SplitHeldout)
	}
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		return nil, fmt.Errorf("draft corpus: %w", err)
	}
	mat, err := loadMaterial()
	if err != nil {
		return nil, err
	}
	salt := uint64(1)
	if opts.Split == SplitHeldout {
		salt = 2
	}
	out := make([]Contract, 0, opts.Contracts)
	for i := range opts.Contracts {
		g := &contractGen{
			rng:   rand.New(rand.NewPCG(uint64(opts.Seed), salt<<32|uint64(i))),
			pb:    pb,
			mat:   mat,
			split: opts.Split,
			name:  fmt.Sprintf("draft-%s-%03d", opts.Split, i+1),
		}
		c, err := g.build()
		if err != nil {
			return nil, fmt.Errorf("draft corpus: %s: %w", g.name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// para is one paragraph of a section: an optional run-in title and text,
// with the truth index of the clause it words (-1 for any other text).
type para struct {
	title  string
	text   string
	clause int
}

// sect is one section of a contract before layout.
type sect struct {
	rank    float64
	heading string
	paras   []para
}

type contractGen struct {
	rng     *rand.Rand
	pb      *playbook.Playbook
	mat     *material
	split   string
	name    string
	truth   reviewcorpus.Truth
	sects   []*sect
	groups  map[string]*sect
	general *sect
	// generalTitled says the general section gives its paragraphs run-in
	// headings.
	generalTitled bool
	partyNames    [2]string
}

// Section ranks: the order this drafter puts subjects in.
var ranks = map[string]float64{
	"payment_terms": 4, "fees_and_payment": 4, "termination_for_convenience": 5, "term_and_termination": 5,
	"confidentiality_term": 6, "confidentiality": 6, "indemnification": 7.5, "warranty": 8, "warranties": 8,
	"limitation_of_liability": 9, "liability_and_indemnities": 9, "insurance": 10, "non_solicitation": 11,
	"staff": 11, "force_majeure": 12, "assignment": 13, "assignment_and_subcontracting": 13, "notices": 14,
	"governing_law": 15, "law_and_disputes": 15, "dispute_resolution": 15.5,
}

func (g *contractGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *contractGen) build() (Contract, error) {
	lay := layouts[g.rng.IntN(len(layouts))]
	g.truth = reviewcorpus.Truth{Contract: g.name, Layout: lay.name}
	g.groups = map[string]*sect{}
	g.generalTitled = g.rng.Float64() < 0.6
	for ci := range g.pb.Clauses {
		g.clause(&g.pb.Clauses[ci])
	}
	g.companionsOnly()
	g.fillers()
	for _, s := range g.sects {
		s.rank += g.rng.Float64() * 1.2
	}
	sort.SliceStable(g.sects, func(i, j int) bool { return g.sects[i].rank < g.sects[j].rank })
	if g.general != nil {
		g.sects = append(g.sects, g.general) // always last
		g.shuffleGeneral()
	}
	pages, err := lay.set(g)
	if err != nil {
		return Contract{}, err
	}
	var text []string
	for _, s := range g.sects {
		for _, p := range s.paras {
			text = append(text, p.text)
		}
	}
	return Contract{Name: g.name, Pages: pages, Truth: g.truth, text: text}, nil
}

// clause draws one playbook clause's variant and puts it in the contract.
func (g *contractGen) clause(c *playbook.Clause) {
	cm := g.mat.Clauses[c.Key]
	std := strings.Join(strings.Fields(c.StandardText), " ")
	v := drawVariant(g.rng, g.split, std, cm)
	truth := reviewcorpus.ClauseTruth{Clause: c.Key, Status: v.status, NumericChange: v.numeric, Variant: v.name,
		Expected: nonNil(cm.Terms), Found: nonNil(v.found)}
	idx := len(g.truth.Clauses)
	if v.status == reviewresult.StatusMissing {
		truth.Found = []string{}
		g.truth.Clauses = append(g.truth.Clauses, truth)
		if v.name == VariantLookalike {
			l := cm.Lookalike.of(g.split)
			s := &sect{rank: ranks[c.Key], heading: l.Heading}
			for _, t := range l.Text {
				s.paras = append(s.paras, para{text: t, clause: -1})
			}
			g.sects = append(g.sects, s)
		}
		return
	}
	paras := make([]para, 0, len(v.paras)+1)
	for _, t := range v.paras {
		paras = append(paras, para{text: t, clause: idx})
	}
	if v.addition != "" {
		if g.rng.Float64() < 0.7 {
			paras[len(paras)-1].text += " " + v.addition
		} else {
			paras = append(paras, para{text: v.addition, clause: idx})
		}
	}
	truth.Placement, truth.Heading = g.place(c.Key, cm, paras)
	g.truth.Clauses = append(g.truth.Clauses, truth)
}

// place puts a clause's paragraphs in a section of its own, a combined
// section or the general section, and returns the placement and the
// heading it sits under.
func (g *contractGen) place(key string, cm clauseMaterial, paras []para) (string, string) {
	r := g.rng.Float64()
	grp := g.mat.groupOf(key)
	switch {
	case grp != nil && r < 0.35:
		s := g.group(grp)
		if g.rng.Float64() < 0.45 && runIn(s, paras) {
			return PlacedCombinedRunIn, s.heading
		}
		s.paras = insertBeforeAfter(s.paras, paras)
		return PlacedCombined, s.heading
	case slices.Contains(g.mat.General.Clauses, key) && r < 0.6:
		s := g.generalSect()
		title := ""
		if g.generalTitled {
			title = g.pick(cm.Headings.of(g.split))
			paras[0].title = title
		}
		s.paras = append(s.paras, paras...)
		if title == "" {
			return PlacedGeneralPlain, s.heading
		}
		return PlacedGeneralTitled, title
	}
	h := g.pick(cm.Headings.of(g.split))
	g.sects = append(g.sects, &sect{rank: ranks[key], heading: h, paras: paras})
	return PlacedOwn, h
}

// group returns the contract's combined section for grp, made on first
// use with its companions.
func (g *contractGen) group(grp *group) *sect {
	if s := g.groups[grp.Key]; s != nil {
		return s
	}
	s := &sect{rank: ranks[grp.Key], heading: g.pick(grp.Headings.of(g.split))}
	for _, t := range grp.Before.of(g.split) {
		s.paras = append(s.paras, para{text: t, clause: -1})
	}
	for _, t := range grp.After.of(g.split) {
		s.paras = append(s.paras, para{text: t, clause: -2}) // -2: after the clauses
	}
	g.groups[grp.Key] = s
	g.sects = append(g.sects, s)
	return s
}

// insertBeforeAfter puts a clause's paragraphs after the companions that
// come before clauses and any clause already there, before the ones that
// come after.
func insertBeforeAfter(ps, clause []para) []para {
	at := len(ps)
	for i, p := range ps {
		if p.clause == -2 {
			at = i
			break
		}
	}
	return slices.Concat(ps[:at], clause, ps[at:])
}

// runIn runs a clause into one paragraph with a companion: after the last
// companion that comes before it, or before the first that comes after.
// A clause of several paragraphs keeps its other paragraphs apart.
func runIn(s *sect, clause []para) bool {
	lastBefore, firstAfter := -1, -1
	for i, p := range s.paras {
		switch {
		case p.clause == -1:
			lastBefore = i
		case p.clause == -2 && firstAfter < 0:
			firstAfter = i
		}
	}
	switch {
	case lastBefore >= 0:
		s.paras[lastBefore].text += " " + clause[0].text
		s.paras[lastBefore].clause = clause[0].clause
		s.paras = slices.Insert(s.paras, lastBefore+1, clause[1:]...)
		// The merged paragraph is a companion's: later clauses come after it.
		return true
	case firstAfter >= 0:
		last := clause[len(clause)-1]
		s.paras[firstAfter].text = last.text + " " + s.paras[firstAfter].text
		// The merged paragraph ends the clause: a later clause goes after
		// it, never between the clause's paragraphs.
		s.paras[firstAfter].clause = last.clause
		s.paras = slices.Insert(s.paras, firstAfter, clause[:len(clause)-1]...)
		return true
	}
	return false
}

// companionsOnly adds, now and then, a combined section that holds no
// playbook clause (its companions alone), so a neighbouring subject
// appears where the clause is missing or elsewhere.
func (g *contractGen) companionsOnly() {
	for i := range g.mat.Groups {
		grp := &g.mat.Groups[i]
		if g.groups[grp.Key] == nil && g.rng.Float64() < 0.3 {
			g.group(grp)
		}
	}
}

func (g *contractGen) generalSect() *sect {
	if g.general == nil {
		g.general = &sect{heading: g.pick(g.mat.General.Headings.of(g.split))}
		cs := slices.Clone(g.mat.General.Companions.of(g.split))
		g.rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		for _, c := range cs[:2+g.rng.IntN(len(cs)-1)] {
			p := para{text: c.Text, clause: -1}
			if g.generalTitled {
				p.title = c.Title
			}
			g.general.paras = append(g.general.paras, p)
		}
	}
	return g.general
}

// shuffleGeneral mixes the general section's clauses among its
// companions, keeping each clause's paragraphs together.
func (g *contractGen) shuffleGeneral() {
	var units [][]para
	for _, p := range g.general.paras {
		if n := len(units); n > 0 && p.clause >= 0 && units[n-1][0].clause == p.clause {
			units[n-1] = append(units[n-1], p)
			continue
		}
		units = append(units, []para{p})
	}
	g.rng.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	g.general.paras = slices.Concat(units...)
}

func (g *contractGen) fillers() {
	fs := g.mat.Fillers.of(g.split)
	for i, f := range fs {
		if i > 0 && g.rng.Float64() < 0.35 {
			continue
		}
		s := &sect{rank: 1 + g.rng.Float64()*13, heading: f.Heading}
		if i == 0 {
			s.rank = 0 // definitions or interpretation come first
		}
		for _, t := range f.Text {
			s.paras = append(s.paras, para{text: t, clause: -1})
		}
		g.sects = append(g.sects, s)
	}
	if g.general == nil && g.rng.Float64() < 0.6 {
		g.generalSect()
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}
