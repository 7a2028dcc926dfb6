package invoice

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
)

// VisibleText is the document as the field extractors see it: visible
// words only, rows carrying instruction-like text left out, one row per
// line and pages separated by a blank line. It is what a second reader (a
// model) may be shown: hidden text and injected instructions never reach
// it, just as they never reach a field.
func (e *Extractor) VisibleText(doc *extract.Document, opts Options) string {
	s := e.screen(doc, opts)
	var b strings.Builder
	for i, p := range s.pages {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, r := range p.rows {
			b.WriteString(r.text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
