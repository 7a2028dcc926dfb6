package invoicecorpus

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/textnorm"
)

// Outcome is what the pipeline made of one case.
type Outcome struct {
	Fields   result.Fields // the guest's fields (before host clamping)
	Flags    []string      // the host's flag codes
	Decision string        // "approve" or "review"
	Degraded bool          // SimInfo.Degraded
}

// Scores are the evaluation numbers for one run.
type Scores struct {
	Name  string
	Cases int
	// Field accuracy over the fields a case prints or the guest returned.
	FieldRight, FieldTotal map[string]int
	// Trap recall: cases whose expected flag was raised, per trap.
	TrapHit, TrapTotal map[Trap]int
	// Clean cases (no trap, not degraded) and those with any flag.
	Clean, CleanFlagged int
	CleanFlags          map[string]int
	// CleanFalseAlarms: clean cases flagged although every field was
	// read right (the rest were flagged for a real misread, which must
	// go to a person).
	CleanFalseAlarms int
	// MisreadApprovals: approved with an amount that differs from the
	// printed one. Must be 0.
	MisreadApprovals int
	// TrapApprovals: approved although a trap expected a flag.
	TrapApprovals int
	Degraded      int
}

// FieldAccuracy is the share of fields read right, over all fields.
func (s *Scores) FieldAccuracy() float64 {
	r, t := 0, 0
	for f := range s.FieldTotal {
		r += s.FieldRight[f]
		t += s.FieldTotal[f]
	}
	if t == 0 {
		return 0
	}
	return float64(r) / float64(t)
}

// Eval scores outcomes (one per case, same order). ocr says whether the
// run read a case by OCR (SimOptions.ReadsOCR), which decides the flags
// its traps expect (see ExpectedFlags).
func Eval(name string, cases []Case, outs []Outcome, ocr func(*Case) bool) *Scores {
	s := &Scores{Name: name, Cases: len(cases), FieldRight: map[string]int{}, FieldTotal: map[string]int{},
		TrapHit: map[Trap]int{}, TrapTotal: map[Trap]int{}, CleanFlags: map[string]int{}}
	for i := range cases {
		c, o := &cases[i], &outs[i]
		right := s.scoreFields(c, o)
		expected := 0
		for _, t := range c.Traps {
			want := ExpectedFlags(t, ocr(c))
			if len(want) == 0 {
				continue
			}
			expected++
			s.TrapTotal[t]++
			if containsAll(o.Flags, want) {
				s.TrapHit[t]++
			}
		}
		if o.Degraded {
			s.Degraded++
		}
		if expected == 0 && !o.Degraded {
			s.Clean++
			if len(o.Flags) > 0 {
				s.CleanFlagged++
				if right {
					s.CleanFalseAlarms++
				}
				for _, f := range o.Flags {
					s.CleanFlags[f]++
				}
			}
		}
		if o.Decision == "approve" {
			if expected > 0 {
				s.TrapApprovals++
			}
			if !amountsRight(c.Truth, o.Fields) {
				s.MisreadApprovals++
			}
		}
	}
	return s
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			for _, alt := range strings.Split(w, "|") {
				found = found || h == alt
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// scoreFields counts one case's fields and reports whether all were right.
func (s *Scores) scoreFields(c *Case, o *Outcome) bool {
	all := true
	for _, f := range result.ScalarFields() {
		want, got := *c.Truth.Ptr(f), *o.Fields.Ptr(f)
		if want == nil && got == nil {
			continue
		}
		s.FieldTotal[f]++
		if want != nil && got != nil && sameValue(f, *want, *got) {
			s.FieldRight[f]++
		} else {
			all = false
		}
	}
	if len(c.Truth.LineItems) > 0 || len(o.Fields.LineItems) > 0 {
		s.FieldTotal[result.FieldLineItems]++
		if sameLines(c.Truth.LineItems, o.Fields.LineItems) {
			s.FieldRight[result.FieldLineItems]++
		} else {
			all = false
		}
	}
	return all
}

// sameValue compares money numerically and identifiers without spacing
// or case differences that carry no meaning.
func sameValue(field, want, got string) bool {
	switch field {
	case result.FieldSubtotal, result.FieldTax, result.FieldShipping, result.FieldTotal:
		return decEq(want, got)
	case result.FieldSortCode:
		return strings.ReplaceAll(want, "-", "") == strings.ReplaceAll(got, "-", "")
	case result.FieldVendorName:
		// A space OCR lost, or an accent an English OCR model cannot
		// read, does not change who the vendor is (the host matches names
		// folded the same way).
		return textnorm.Compact(want) == textnorm.Compact(got)
	}
	return strings.TrimSpace(want) == strings.TrimSpace(got)
}

func decEq(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

func optEq(a, b *string, num bool) bool {
	switch {
	case a == nil || b == nil:
		return a == nil && b == nil
	case num:
		return decEq(*a, *b)
	}
	return strings.TrimSpace(*a) == strings.TrimSpace(*b)
}

func sameLines(want, got []result.LineItem) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		w, g := want[i], got[i]
		// Descriptions compare as vendor names do (textnorm.Compact:
		// without spaces, case or accents): OCR loses some spaces and
		// accents, and the text is informational (amounts, quantities
		// and units are compared exactly).
		if textnorm.Compact(w.Description) != textnorm.Compact(g.Description) ||
			!optEq(w.Quantity, g.Quantity, true) || !optEq(w.Unit, g.Unit, false) ||
			!optEq(w.UnitPrice, g.UnitPrice, true) || !optEq(w.Amount, g.Amount, true) {
			return false
		}
	}
	return true
}

// amountsRight: every printed amount was read as printed (a missing
// amount counts as wrong).
func amountsRight(want, got result.Fields) bool {
	for _, f := range result.AmountFields() {
		if !optEq(*want.Ptr(f), *got.Ptr(f), true) {
			return false
		}
	}
	if len(want.LineItems) != len(got.LineItems) {
		return len(got.LineItems) == 0 // a minimal reading without lines is not a misread amount
	}
	for i := range want.LineItems {
		if !optEq(want.LineItems[i].Amount, got.LineItems[i].Amount, true) {
			return false
		}
	}
	return true
}

// Table prints the scores.
func (s *Scores) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s: %d invoices, %d degraded by the simulation\n", s.Name, s.Cases, s.Degraded)
	fmt.Fprintf(&b, "%-16s %8s %6s\n", "field", "accuracy", "n")
	fields := append(result.ScalarFields(), result.FieldLineItems)
	for _, f := range fields {
		if n := s.FieldTotal[f]; n > 0 {
			fmt.Fprintf(&b, "%-16s %7.1f%% %6d\n", f, 100*float64(s.FieldRight[f])/float64(n), n)
		}
	}
	fmt.Fprintf(&b, "%-16s %7.1f%%\n", "ALL FIELDS", 100*s.FieldAccuracy())
	fmt.Fprintf(&b, "%-20s %8s\n", "trap", "recall")
	for _, t := range Traps() {
		if n := s.TrapTotal[t]; n > 0 {
			fmt.Fprintf(&b, "%-20s %3d/%-3d\n", t, s.TrapHit[t], n)
		}
	}
	var cf []string
	for f, n := range s.CleanFlags {
		cf = append(cf, fmt.Sprintf("%s=%d", f, n))
	}
	sort.Strings(cf)
	fmt.Fprintf(&b, "clean invoices flagged: %d/%d %s\n", s.CleanFlagged, s.Clean, strings.Join(cf, " "))
	fmt.Fprintf(&b, "  of them with every field read right (false alarms): %d\n", s.CleanFalseAlarms)
	fmt.Fprintf(&b, "approvals of misread amounts: %d\n", s.MisreadApprovals)
	fmt.Fprintf(&b, "approvals despite a planted trap: %d\n", s.TrapApprovals)
	return b.String()
}
