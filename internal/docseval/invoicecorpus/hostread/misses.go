//go:build unix

package hostread

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
)

// Misses describes, for one case, each field the eval scores wrong (the
// truth, the reading, its source and the lines that hold the truth), the
// flags, and the amounts when they do not balance: what a fix has to
// work from. "" when every field is right and nothing is flagged.
func Misses(cs *invoicecorpus.Case, doc *extract.Document, j Judged, ocr func(*invoicecorpus.Case) bool) string {
	rep := j.Report
	s := invoicecorpus.Eval("", []invoicecorpus.Case{*cs}, []invoicecorpus.Outcome{j.Outcome}, ocr)
	var b strings.Builder
	for _, f := range result.ScalarFields() {
		if s.FieldRight[f] == s.FieldTotal[f] {
			continue
		}
		w, g := *cs.Truth.Ptr(f), *rep.Fields.Ptr(f)
		src := j.Result.FieldSources[f]
		fmt.Fprintf(&b, "  %s: want %q got %q (guest %q, %s %.2f %v)\n", f, deref(w), deref(g), deref(*j.Result.Fields.Ptr(f)), src.Method, src.Confidence, src.Issues)
		if w != nil {
			for _, l := range linesWith(doc, *w) {
				fmt.Fprintf(&b, "      line: %s\n", l)
			}
		}
	}
	if s.FieldRight[result.FieldLineItems] != s.FieldTotal[result.FieldLineItems] {
		fmt.Fprintf(&b, "  line_items: want %d got %d\n", len(cs.Truth.LineItems), len(rep.Fields.LineItems))
		line := func(li result.LineItem) string {
			return fmt.Sprintf("%q q=%s u=%s p=%s a=%s", li.Description, deref(li.Quantity), deref(li.Unit), deref(li.UnitPrice), deref(li.Amount))
		}
		for k := range max(len(rep.Fields.LineItems), len(cs.Truth.LineItems)) {
			var g, w string
			if k < len(rep.Fields.LineItems) {
				g = line(rep.Fields.LineItems[k])
			}
			if k < len(cs.Truth.LineItems) {
				w = line(cs.Truth.LineItems[k])
			}
			if g != w {
				fmt.Fprintf(&b, "      line %d: got  %s\n               want %s\n", k, g, w)
			}
		}
	}
	if slices.Contains(rep.Codes(), "total_mismatch") {
		fmt.Fprintf(&b, "  amounts: sub=%s tax=%s ship=%s total=%s; truth sub=%s tax=%s ship=%s total=%s\n",
			deref(rep.Fields.Subtotal), deref(rep.Fields.Tax), deref(rep.Fields.Shipping), deref(rep.Fields.Total),
			deref(cs.Truth.Subtotal), deref(cs.Truth.Tax), deref(cs.Truth.Shipping), deref(cs.Truth.Total))
	}
	if b.Len() == 0 && len(rep.Flags) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s %s traps=%v decision=%s flags=%v\n%s", cs.ID, cs.Layout, cs.Render.Mode, cs.Traps, rep.Decision, rep.Flags, b.String())
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// linesWith returns the lines holding the value's last four digits or,
// for text, its first word.
func linesWith(doc *extract.Document, v string) []string {
	needle := digitsOf(v)
	if len(needle) > 4 {
		needle = needle[len(needle)-4:]
	}
	if len(needle) < 3 {
		needle = strings.ToLower(strings.Fields(v + " ?")[0])
	}
	var out []string
	for _, p := range doc.Pages {
		for _, l := range p.Lines {
			txt := strings.ToLower(l.Text)
			if strings.Contains(digitsOf(txt), needle) || strings.Contains(txt, needle) {
				out = append(out, fmt.Sprintf("p%d y=%.0f %q", p.Number, l.Box.YMin, l.Text))
			}
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = out[:4]
	}
	return out
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
