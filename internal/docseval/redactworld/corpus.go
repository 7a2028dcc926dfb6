package redactworld

import (
	"fmt"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// Generate returns n documents of each text format (text, json, csv)
// and n page documents of split, deterministically for seed. Page
// documents take the layouts in turn; every other one is a scan. The
// canaries (see Canaries) are planted as people in the first document of
// each format.
func Generate(seed int64, n int, split Split) []redactcorpus.Doc {
	g := newGen(seed, split)
	canaries := canaryPeople(seed, split)
	var docs []redactcorpus.Doc
	name := func(f string, i int) string { return fmt.Sprintf("%s-%s-%03d", split, f, i) }
	plant := func(i, k int) {
		g.plant = nil
		if i == 0 {
			g.plant = []person{canaries[k%len(canaries)]}
		}
	}
	for k, set := range []struct {
		format string
		kinds  []func(*gen, *doc)
	}{{"text", textKinds}, {"json", jsonKinds}, {"csv", csvKinds}} {
		for i := 0; i < n; i++ {
			plant(i, k)
			d := newDoc()
			set.kinds[(i+int(seed))%len(set.kinds)](g, d)
			d.canaries = g.planted
			g.planted = nil
			docs = append(docs, d.build(name(set.format, i), set.format))
		}
	}
	for i := 0; i < n; i++ {
		plant(i, 3)
		w := redactcorpus.NewPageWriter()
		pageKinds[(i/2+int(seed))%len(pageKinds)](g, w)
		if i%2 == 1 {
			w.Scanned(seed*1000 + int64(i))
		}
		docs = append(docs, w.Doc(name("page", i), g.planted))
		g.planted = nil
	}
	return docs
}

// Canaries returns the canary strings Generate plants for seed and
// split: invented full names, placed as people, so a correct redaction
// removes each and the verifier, told to look for them, finds none.
func Canaries(seed int64, split Split) []string {
	var out []string
	for _, p := range canaryPeople(seed, split) {
		out = append(out, p.full())
	}
	return out
}

func canaryPeople(seed int64, split Split) []person {
	g := newGen(seed^0x6a09e667, split)
	return []person{g.invented(), g.invented(), g.invented(), g.invented()}
}

// nextPerson is the document's next person: a canary waiting to be
// planted, else a drawn one.
func (g *gen) nextPerson() person {
	if len(g.plant) > 0 {
		p := g.plant[0]
		g.plant = g.plant[1:]
		g.planted = append(g.planted, p.full())
		return p
	}
	return g.person()
}
