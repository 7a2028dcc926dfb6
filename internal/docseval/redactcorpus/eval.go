package redactcorpus

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Stats are one type's counts and scores.
type Stats struct {
	TruthSpans, Found  int // ground-truth spans (page formats: words), and those found
	Predicted, Correct int // predicted spans (page formats: boxes), and those that are correct
	Precision, Recall  float64
	F2                 float64
}

// Report is an evaluation over a set of documents.
type Report struct {
	Docs  int
	Types map[string]*Stats
	// Leaked counts ground-truth code points (not whitespace) that no
	// prediction of any type covers: what would be left readable.
	Leaked, TruthChars int
	// Values counts entity values (text formats: truth spans; pages:
	// runs of consecutive words of one type) and ValuesGone those no
	// part of which is left readable: every character (word) covered by
	// a prediction of any type. It is the share of values a released
	// output no longer shows.
	Values, ValuesGone int
	Misses             []string // "doc: TYPE [start,end)" or "doc: TYPE p1 word 7"; never the text
	FalsePositives     []string // "doc: TYPE [start,end)" or "doc: TYPE p1 box 3"
	// ByFormat breaks the report down by Truth.Kind (set by Score on the
	// top-level report only).
	ByFormat map[string]*Report
}

// Prediction is what the redactor reported for one document.
type Prediction struct{ Findings []result.Finding }

func newReport() *Report {
	rep := &Report{Types: map[string]*Stats{}}
	for _, t := range Types {
		rep.Types[t] = &Stats{}
	}
	return rep
}

// Score scores predictions against truths (same order, same length).
//
// Text formats, counted over non-whitespace code points of the file:
//   - a truth span is found when predicted spans of its type cover at
//     least 80% of it;
//   - a predicted span is correct when at least 50% of it lies inside
//     truth spans of its type.
//
// Page formats, by area on each page:
//   - a truth PII word is found when finding boxes of its type cover at
//     least 50% of its box (and not leaked when boxes of any type do);
//   - a finding box is correct when it covers at least 50% of some truth
//     word of its type.
//
// Precision = correct / predicted, recall = found / truth, F2 = 5PR /
// (4P + R): recall weighs four times precision, since a missed entity is
// a disclosure and an extra one a blacked-out word.
func Score(truths []Truth, preds []Prediction) *Report {
	all := newReport()
	all.ByFormat = map[string]*Report{}
	for i, t := range truths {
		var p Prediction
		if i < len(preds) {
			p = preds[i]
		}
		sub := all.ByFormat[t.Kind()]
		if sub == nil {
			sub = newReport()
			all.ByFormat[t.Kind()] = sub
		}
		for _, rep := range []*Report{all, sub} {
			rep.Docs++
			if t.pages() {
				rep.addPages(t, p.Findings)
			} else {
				rep.addSpans(t.Name, t.text, t.Spans, spansOf(p.Findings))
			}
		}
	}
	all.finish()
	for _, sub := range all.ByFormat {
		sub.finish()
	}
	return all
}

func spansOf(fs []result.Finding) []Span {
	out := make([]Span, len(fs))
	for i, f := range fs {
		out[i] = Span{Type: f.Type, Start: f.Start, End: f.End}
	}
	return out
}

func (rep *Report) finish() {
	for _, s := range rep.Types {
		s.Precision, s.Recall = ratio(s.Correct, s.Predicted), ratio(s.Found, s.TruthSpans)
		s.F2 = 0
		if p, r := s.Precision, s.Recall; p+r > 0 {
			s.F2 = 5 * p * r / (4*p + r)
		}
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// addSpans scores one text document; text "" counts every code point.
func (rep *Report) addSpans(name, text string, truth, pred []Span) {
	rs := []rune(text)
	counted := func(i int) bool { return len(rs) == 0 || i < len(rs) && !unicode.IsSpace(rs[i]) }
	cover := func(spans []Span, typ string, s Span) (in, total int) {
		for i := s.Start; i < s.End; i++ {
			if !counted(i) {
				continue
			}
			total++
			for _, p := range spans {
				if (typ == "" || p.Type == typ) && p.Start <= i && i < p.End {
					in++
					break
				}
			}
		}
		return in, total
	}
	for _, t := range truth {
		st := rep.stats(t.Type)
		st.TruthSpans++
		in, total := cover(pred, t.Type, t)
		if total == 0 || float64(in) >= 0.8*float64(total) {
			st.Found++
		} else {
			rep.Misses = append(rep.Misses, fmt.Sprintf("%s: %s [%d,%d)", name, t.Type, t.Start, t.End))
		}
		anyIn, _ := cover(pred, "", t)
		rep.Leaked += total - anyIn
		rep.TruthChars += total
		rep.Values++
		if anyIn == total {
			rep.ValuesGone++
		}
	}
	for _, p := range pred {
		st, ok := rep.Types[p.Type]
		if !ok {
			continue
		}
		st.Predicted++
		in, total := cover(truth, p.Type, p)
		if total == 0 || float64(in) >= 0.5*float64(total) {
			st.Correct++
		} else {
			rep.FalsePositives = append(rep.FalsePositives, fmt.Sprintf("%s: %s [%d,%d)", name, p.Type, p.Start, p.End))
		}
	}
}

// stats returns a type's stats, adding a row for a type outside Types.
func (rep *Report) stats(t string) *Stats {
	s := rep.Types[t]
	if s == nil {
		s = &Stats{}
		rep.Types[t] = s
	}
	return s
}

// Print writes the per-type table and the totals, then the same per
// format, then the misses and false positives (positions, no values).
func (rep *Report) Print(w io.Writer) {
	rep.printTable(w)
	kinds := make([]string, 0, len(rep.ByFormat))
	for k := range rep.ByFormat {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kindOrder(kinds[i]) < kindOrder(kinds[j]) })
	for _, k := range kinds {
		fmt.Fprintf(w, "\n%s (%d documents)\n", k, rep.ByFormat[k].Docs)
		rep.ByFormat[k].printTable(w)
	}
	if len(rep.Misses) > 0 {
		fmt.Fprintf(w, "misses (%d): %s\n", len(rep.Misses), strings.Join(first(rep.Misses, 40), "; "))
	}
	if len(rep.FalsePositives) > 0 {
		fmt.Fprintf(w, "false positives (%d): %s\n", len(rep.FalsePositives), strings.Join(first(rep.FalsePositives, 40), "; "))
	}
}

func (rep *Report) printTable(w io.Writer) {
	fmt.Fprintf(w, "%-18s %6s %6s %6s %6s %7s %7s %7s\n", "type", "truth", "found", "pred", "ok", "prec", "recall", "F2")
	names := make([]string, 0, len(rep.Types))
	for t := range rep.Types {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool { return typeOrder(names[i]) < typeOrder(names[j]) })
	for _, t := range names {
		s := rep.Types[t]
		if s.TruthSpans == 0 && s.Predicted == 0 {
			continue
		}
		fmt.Fprintf(w, "%-18s %6d %6d %6d %6d %7.3f %7.3f %7.3f\n", t, s.TruthSpans, s.Found, s.Predicted, s.Correct, s.Precision, s.Recall, s.F2)
	}
	fmt.Fprintf(w, "leaked %d of %d PII characters; %d of %d values gone (%.1f%%); precision %.3f over all types\n",
		rep.Leaked, rep.TruthChars, rep.ValuesGone, rep.Values, 100*rep.GoneShare(), rep.Precision())
}

// GoneShare is ValuesGone / Values (1 when there are none).
func (rep *Report) GoneShare() float64 { return ratio(rep.ValuesGone, rep.Values) }

// Precision is the share of predictions that are correct, over all
// types together.
func (rep *Report) Precision() float64 {
	ok, n := 0, 0
	for _, s := range rep.Types {
		ok, n = ok+s.Correct, n+s.Predicted
	}
	return ratio(ok, n)
}

func first(xs []string, n int) []string { return xs[:min(n, len(xs))] }

func typeOrder(t string) int {
	for i, x := range Types {
		if x == t {
			return i
		}
	}
	return len(Types)
}

func kindOrder(k string) int {
	for i, x := range []string{"text", "json", "csv", "pdf-text", "pdf-scan", "png-scan"} {
		if x == k {
			return i
		}
	}
	return 99
}
