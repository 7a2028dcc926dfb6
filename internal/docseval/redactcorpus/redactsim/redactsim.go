// Package redactsim turns the redaction corpus's page documents into the
// extract.Document the real extractor would give for them, for tests of
// the guest-side redaction code that do not want poppler in the loop. It
// imports the guest's extract types, so only tests link it.
package redactsim

import (
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// Document returns pd as extraction would: one line per
// placed item, its words with their boxes (text-layer method). Tests use
// it where the real extractor is not wanted.
func Document(pd *redactcorpus.PageDoc) *extract.Document {
	doc := &extract.Document{}
	for i := range pd.Fixed.Pages {
		doc.Pages = append(doc.Pages, extract.Page{Number: i + 1, Width: redactcorpus.PageWidth, Height: redactcorpus.PageHeight,
			Method: extract.MethodText, OCRConfidence: -1})
	}
	for _, w := range pd.Words {
		p := &doc.Pages[w.Page-1]
		for len(p.Lines) <= w.Line {
			p.Lines = append(p.Lines, extract.Line{})
		}
		l := &p.Lines[w.Line]
		box := extract.Box{XMin: w.XMin, YMin: w.YMin, XMax: w.XMax, YMax: w.YMax}
		if len(l.Words) == 0 {
			l.Box = box
		} else {
			l.Box.XMin, l.Box.YMin = min(l.Box.XMin, box.XMin), min(l.Box.YMin, box.YMin)
			l.Box.XMax, l.Box.YMax = max(l.Box.XMax, box.XMax), max(l.Box.YMax, box.YMax)
			l.Text += " "
		}
		l.Text += w.Text
		l.Words = append(l.Words, extract.Word{Text: w.Text, Box: box, Conf: -1})
	}
	return doc
}
