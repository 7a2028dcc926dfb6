package redactcorpus

import "fmt"

// Generate returns n documents of each text format (text, json, csv) and
// n page documents, deterministically for seed. Page documents take the
// templates in turn, each first as a text PDF and then as a scan. The
// corpus canaries (see Canaries) are planted in the first documents of
// each format.
func Generate(seed int64, n int) []Doc {
	g := newGen(seed)
	g.canaries = canarySet(seed)
	c := g.canaries
	var docs []Doc
	add := func(name, format string, plant map[string]string, fill func(*builder) *PageDoc) {
		g.plant = plant
		b := newBuilder()
		pd := fill(b)
		d := b.doc(name, format)
		d.Page = pd
		docs = append(docs, d)
		g.plant = nil
	}
	rolesPlanted := false
	for i := 0; i < n; i++ {
		kind := textKinds[i%len(textKinds)]
		var plant map[string]string
		if i%len(textKinds) == 1 && !rolesPlanted {
			plant, rolesPlanted = map[string]string{Person: c[1]}, true
		}
		add(fmt.Sprintf("text-%03d", i), "text", plant, func(b *builder) *PageDoc { kind(g, b); return nil })
	}
	for i := 0; i < n; i++ {
		add(fmt.Sprintf("json-%03d", i), "json", firstOnly(i, map[string]string{SSN: c[2]}),
			func(b *builder) *PageDoc { jsonDoc(g, b); return nil })
	}
	for i := 0; i < n; i++ {
		add(fmt.Sprintf("csv-%03d", i), "csv", firstOnly(i, map[string]string{Person: c[0]}),
			func(b *builder) *PageDoc { csvDoc(g, b); return nil })
	}
	for i := 0; i < n; i++ {
		var plant map[string]string
		switch i {
		case 0:
			plant = map[string]string{Person: c[0]}
		case 1:
			plant = map[string]string{Person: c[1], SSN: c[2]}
		}
		kind := pageKinds[(i/2)%len(pageKinds)]
		add(fmt.Sprintf("page-%03d", i), "page", plant, func(b *builder) *PageDoc {
			pb := newPageBuilder(b)
			kind(g, pb)
			if i%2 == 1 {
				pb.scanned(g)
			}
			return pb.pd
		})
	}
	return docs
}

func firstOnly(i int, m map[string]string) map[string]string {
	if i == 0 {
		return m
	}
	return nil
}

// Canaries returns the canary strings Generate plants for seed: PII-like
// values (invented names, an SSN) placed as entities of the truth, so a
// correct redaction removes every one and the verifier, told to look for
// them, finds none.
func Canaries(seed int64) []string { return canarySet(seed) }
