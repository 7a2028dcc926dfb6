package invoice

import "testing"

// BenchmarkExtract100Pages bounds the cost of a long invoice.
func BenchmarkExtract100Pages(b *testing.B) {
	var pages [][]tx
	for i := 0; i < 100; i++ {
		pages = append(pages, usInvoice())
	}
	doc := textDoc(pages...)
	e, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := e.Extract(doc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
