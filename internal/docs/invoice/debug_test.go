package invoice

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
)

// TestDebugDocument prints how the extractor sees a dumped reading
// (INVOICE_DEBUG_DOC=file, written by hostread.Dump): every row with its
// cells and the labels found on it, what the hidden-text and injection
// screens found, and the result. A diagnostic for working on a miss the
// rendered evals report; it skips unless the variable is set.
func TestDebugDocument(t *testing.T) {
	path := os.Getenv("INVOICE_DEBUG_DOC")
	if path == "" {
		t.Skip("set INVOICE_DEBUG_DOC=FILE (from INVOICE_DEBUG_DUMP)")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Doc     *extract.Document
		Renders map[int]*hidden.Render
		OffPage map[int][]extract.Word
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Renders: in.Renders, OffPage: in.OffPage}
	s := e.screen(in.Doc, opts)
	var b strings.Builder
	for _, pg := range s.pages {
		fmt.Fprintf(&b, "page %d (%gx%g)\n", pg.number, pg.width, pg.height)
		for _, r := range pg.rows {
			var cs []string
			for _, c := range cells(r.words, 1.0) {
				cs = append(cs, fmt.Sprintf("%.0f:%q", c[0].box.XMin, joinWords(c)))
			}
			var hs []string
			for _, h := range e.lx.findHits(r) {
				hs = append(hs, fmt.Sprintf("%s(%s)", h.lab.field, r.folded[h.start:h.end]))
			}
			fmt.Fprintf(&b, "  y=%5.1f-%5.1f h=%4.1f %s  %v\n", r.box.YMin, r.box.YMax, r.height, strings.Join(cs, " | "), hs)
		}
	}
	fmt.Fprintf(&b, "hidden: %+v\ninjection: %+v\n", s.hidden, s.injections)
	res, err := e.Extract(in.Doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(res.Fields, "", "  ")
	t.Log("\n" + b.String() + string(out))
}
