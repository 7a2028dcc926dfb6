package corpus

import "fmt"

// Generate returns n documents of each text format (text, json, csv) and
// n page documents, deterministically for seed.
func Generate(seed int64, n int) []Doc {
	g := newGen(seed)
	var docs []Doc
	for i := 0; i < n; i++ {
		kind := textKinds[i%len(textKinds)]
		b := newBuilder()
		kind(g, b)
		docs = append(docs, b.doc(fmt.Sprintf("text-%03d", i), "text"))
	}
	for i := 0; i < n; i++ {
		b := newBuilder()
		jsonDoc(g, b)
		docs = append(docs, b.doc(fmt.Sprintf("json-%03d", i), "json"))
	}
	for i := 0; i < n; i++ {
		b := newBuilder()
		csvDoc(g, b)
		docs = append(docs, b.doc(fmt.Sprintf("csv-%03d", i), "csv"))
	}
	for i := 0; i < n; i++ {
		b := newBuilder()
		pd := pageForm(g, b, i%2 == 1)
		d := b.doc(fmt.Sprintf("page-%03d", i), "page")
		d.Page = pd
		docs = append(docs, d)
	}
	return docs
}
