package corpus

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
)

// Stats are one type's counts and scores.
type Stats struct {
	TruthSpans, Found  int // ground-truth spans, and those found
	Predicted, Correct int // predicted spans, and those that are correct
	Precision, Recall  float64
	F2                 float64
}

// Report is an evaluation over a set of documents.
type Report struct {
	Types map[string]*Stats
	// Leaked counts ground-truth code points (not whitespace) that no
	// predicted span of any type covers: what would be left readable.
	Leaked, TruthChars int
	Misses             []string // "doc: TYPE [start,end)" for each missed span (no text)
	FalsePositives     []string // "doc: TYPE [start,end)" for each wrong prediction
}

// Eval scores predicted spans against the ground truth. Overlap rules,
// counted over non-whitespace code points:
//
//   - a ground-truth span is found when predicted spans of the same type
//     cover at least 80% of it;
//   - a predicted span is correct when at least 50% of it lies inside
//     ground-truth spans of the same type;
//   - precision = correct / predicted, recall = found / truth spans,
//     F2 = 5PR / (4P + R) (recall weighted four times precision, since a
//     missed entity is a disclosure and an extra one a blacked-out word).
//
// predict returns a document's predicted spans in the same code-point
// coordinates as Doc.Text.
func Eval(docs []Doc, predict func(Doc) ([]Span, error)) (*Report, error) {
	rep := &Report{Types: map[string]*Stats{}}
	for _, t := range Types {
		rep.Types[t] = &Stats{}
	}
	for _, d := range docs {
		pred, err := predict(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		rep.add(d, pred)
	}
	for _, s := range rep.Types {
		s.Precision, s.Recall = ratio(s.Correct, s.Predicted), ratio(s.Found, s.TruthSpans)
		if p, r := s.Precision, s.Recall; p+r > 0 {
			s.F2 = 5 * p * r / (4*p + r)
		}
	}
	return rep, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (rep *Report) add(d Doc, pred []Span) {
	rs := []rune(d.Text)
	counted := func(i int) bool { return i < len(rs) && !unicode.IsSpace(rs[i]) }
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
	for _, t := range d.Spans {
		st := rep.Types[t.Type]
		st.TruthSpans++
		in, total := cover(pred, t.Type, t)
		if total == 0 || float64(in) >= 0.8*float64(total) {
			st.Found++
		} else {
			rep.Misses = append(rep.Misses, fmt.Sprintf("%s: %s [%d,%d)", d.Name, t.Type, t.Start, t.End))
		}
		anyIn, _ := cover(pred, "", t)
		rep.Leaked += total - anyIn
		rep.TruthChars += total
	}
	for _, p := range pred {
		st, ok := rep.Types[p.Type]
		if !ok {
			continue
		}
		st.Predicted++
		in, total := cover(d.Spans, p.Type, p)
		if total == 0 || float64(in) >= 0.5*float64(total) {
			st.Correct++
		} else {
			rep.FalsePositives = append(rep.FalsePositives, fmt.Sprintf("%s: %s [%d,%d)", d.Name, p.Type, p.Start, p.End))
		}
	}
}

// Print writes the per-type table and the totals.
func (rep *Report) Print(w io.Writer) {
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
	fmt.Fprintf(w, "leaked %d of %d PII characters\n", rep.Leaked, rep.TruthChars)
	if len(rep.Misses) > 0 {
		fmt.Fprintf(w, "misses (%d): %s\n", len(rep.Misses), strings.Join(first(rep.Misses, 30), "; "))
	}
	if len(rep.FalsePositives) > 0 {
		fmt.Fprintf(w, "false positives (%d): %s\n", len(rep.FalsePositives), strings.Join(first(rep.FalsePositives, 30), "; "))
	}
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
