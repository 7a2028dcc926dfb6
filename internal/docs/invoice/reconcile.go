package invoice

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// reconcile judges amounts printed without a decimal separator in a
// document whose other amounts have one ("900000" among "1,250.00"s): the
// separator was lost. If the arithmetic of the other amounts says the
// value is the number divided by 10^frac, that reading is used; either way
// the amount is marked implausible_separators, so it can never be
// approved on its own say-so.
func (x *run) reconcile(picked map[string]*candidate, lines []line) {
	frac := docFrac(picked, lines)
	if frac == 0 {
		// Nothing printed with decimals: a number without separators is
		// just a whole amount, but broken separators are still read at
		// the usual two fraction digits (never left unrepresentable).
		x.reportImplausible(picked, lines)
		return
	}
	repairLineDigits(picked, lines, frac)
	for i := range lines {
		repairLine(&lines[i], frac)
		repairQty(&lines[i], decimal.New(1, int32(-frac)))
		inferQty(&lines[i], decimal.New(1, int32(-frac)))
	}
	repairTotalsDigits(picked, lines)
	sum, haveSum := sumLines(lines)
	get := func(f string) (decimal.Decimal, bool) {
		c := picked[f]
		if c == nil || c.amt == nil || suspect(c.amt) {
			return decimal.Zero, false
		}
		return c.amt.value, true
	}
	for _, f := range result.AmountFields() {
		c := picked[f]
		if c == nil || c.amt == nil || !suspect(c.amt) {
			continue
		}
		exp, ok := expected(f, get, sum, haveSum)
		alt := digitsReading(c.amt, frac)
		switch {
		case ok && !c.amt.implausible && exp.Equal(c.amt.value):
			// Printed without decimals, but every other amount agrees.
		case ok && exp.Equal(alt):
			a := *c.amt
			a.value, a.hasSep, a.frac = alt, true, frac
			c.amt, c.value, c.method = &a, formatAmount(a), result.MethodInferred
			c.issues = appendOnce(c.issues, result.IssueImplausibleSeparators)
		default:
			// Nothing confirms a reading. Broken separators ("1.06316")
			// are reported as their digits at the document's precision,
			// the likeliest reading; a number without separators as
			// printed. Either way it is marked and never approved.
			if c.amt.implausible {
				a := *c.amt
				a.value, a.hasSep, a.frac = alt, true, frac
				c.amt, c.value = &a, formatAmount(a)
			}
			c.issues = appendOnce(c.issues, result.IssueImplausibleSeparators)
		}
	}
}

// reportImplausible handles broken separators when the document gives no
// precision: the digits are read with two fraction digits, and marked.
func (x *run) reportImplausible(picked map[string]*candidate, lines []line) {
	for _, f := range result.AmountFields() {
		c := picked[f]
		if c == nil || c.amt == nil || !c.amt.implausible {
			continue
		}
		a := *c.amt
		a.value, a.hasSep, a.frac = digitsReading(c.amt, 2), true, 2
		c.amt, c.value = &a, formatAmount(a)
		c.issues = appendOnce(c.issues, result.IssueImplausibleSeparators)
	}
	for i := range lines {
		for _, a := range []*amount{lines[i].amt, lines[i].price} {
			if a != nil && a.implausible {
				*a = *repaired(a, digitsReading(a, 2), 2)
				lines[i].issues = appendOnce(lines[i].issues, result.IssueImplausibleSeparators)
			}
		}
	}
}

// digitsReading reads an amount's digits with every separator dropped and
// the document's fraction digits restored: "900000" and "9.000.00" both
// read 9000.00, "1.06316" reads 1063.16.
func digitsReading(a *amount, frac int) decimal.Decimal {
	n := decimal.NewFromBigInt(a.value.Coefficient(), 0)
	return n.Shift(int32(-frac))
}

// suspect: an amount that cannot anchor another's repair.
func suspect(a *amount) bool {
	return a.implausible || !a.hasSep && a.value.Abs().GreaterThanOrEqual(decimal.NewFromInt(100))
}

// docFrac is the fraction digits most amounts are printed with.
func docFrac(picked map[string]*candidate, lines []line) int {
	count := map[int]int{}
	for _, c := range picked {
		if c != nil && c.amt != nil && c.amt.hasSep && !c.amt.implausible {
			count[c.amt.frac]++
		}
	}
	for _, ln := range lines {
		if ln.amt != nil && ln.amt.hasSep && !ln.amt.implausible {
			count[ln.amt.frac]++
		}
	}
	best, n := 0, 0
	for f, k := range count {
		if k > n || k == n && f < best {
			best, n = f, k
		}
	}
	return best
}

// repairLine applies the same rule to one line, anchored on quantity x
// unit price.
func repairLine(ln *line, frac int) {
	for _, a := range []*amount{ln.amt, ln.price} {
		if a != nil && suspect(a) {
			ln.issues = appendOnce(ln.issues, result.IssueImplausibleSeparators)
		}
	}
	if ln.amt == nil || ln.price == nil || ln.qty == "" {
		return
	}
	q, err := decimal.NewFromString(ln.qty)
	if err != nil {
		return
	}
	cent := decimal.New(1, int32(-frac))
	switch {
	case suspect(ln.amt) && !suspect(ln.price):
		if alt := digitsReading(ln.amt, frac); q.Mul(ln.price.value).Sub(alt).Abs().LessThanOrEqual(cent) {
			ln.amt = repaired(ln.amt, alt, frac)
		}
	case suspect(ln.price) && !suspect(ln.amt):
		alt := digitsReading(ln.price, frac)
		// The quantity may have lost its point too ("12.5 x 129.40" read
		// "125 x 12940").
		for shift := int32(0); shift <= 2; shift++ {
			if shift > 0 && strings.Contains(ln.qty, ".") {
				break
			}
			if qq := q.Shift(-shift); qq.Mul(alt).Sub(ln.amt.value).Abs().LessThanOrEqual(cent) {
				ln.price = repaired(ln.price, alt, frac)
				if shift > 0 {
					ln.qty = qq.String()
				}
				break
			}
		}
	}
}

// repairQty repairs a quantity OCR misread, from the line's money: a
// decimal point it dropped ("6.5" read "65", often: the point is a
// speck), when a tenth or a hundredth of the quantity makes quantity x
// unit price the amount; and on OCR lines one digit misread, gained or
// lost ("10" read "19", "7" read "74"), when amount / unit price is a
// quantity as invoices print them that multiplies back to the amount
// exactly. Both money values confirm it; the money itself is never
// changed. Recorded as an OCR repair.
func repairQty(ln *line, cent decimal.Decimal) {
	if ln.qty == "" || ln.price == nil || ln.amt == nil || suspect(ln.price) || suspect(ln.amt) {
		return
	}
	q, err := decimal.NewFromString(ln.qty)
	if err != nil || q.Mul(ln.price.value).Sub(ln.amt.value).Abs().LessThanOrEqual(cent) {
		return
	}
	if !strings.Contains(ln.qty, ".") {
		for _, shift := range []int32{-1, -2} {
			if alt := q.Shift(shift); alt.Mul(ln.price.value).Sub(ln.amt.value).Abs().LessThanOrEqual(cent) {
				ln.qty = alt.String()
				ln.issues = appendOnce(ln.issues, result.IssueOCRCorrected)
				return
			}
		}
	}
	if !ocrLine(ln) || ln.price.value.LessThan(decimal.NewFromInt(1)) {
		return // a text layer's quantity is as printed: a mismatch is the invoice's
	}
	for places := int32(0); places <= 2; places++ {
		alt := ln.amt.value.DivRound(ln.price.value, places+2).Round(places)
		if alt.IsPositive() && alt.Mul(ln.price.value).Round(int32(-cent.Exponent())).Equal(ln.amt.value) &&
			oneDigitEdit(ln.qty, alt.String()) {
			ln.qty = alt.String()
			ln.issues = appendOnce(ln.issues, result.IssueOCRCorrected)
			return
		}
	}
}

// ocrLine: the line was read by OCR.
func ocrLine(ln *line) bool {
	for _, w := range ln.numWords {
		if w.conf < 1 {
			return true
		}
	}
	return false
}

// oneDigitEdit reports whether quantity want (as decimal.String prints
// it) is what OCR could have read as got: one digit misread, gained or
// lost, its decimal point kept or dropped ("10" read "19", "7" read "2",
// "3.5" read "35", "12" read "2", "7" read "74"). The quotient it is
// compared with comes from the money alone, so this does not search for
// a quantity that fits; it only accepts the one the amounts give when it
// is that close to what was read.
func oneDigitEdit(got, want string) bool {
	g, w := strings.ReplaceAll(got, ",", "."), want
	if g == w {
		return false
	}
	gd, wd := strings.ReplaceAll(g, ".", ""), strings.ReplaceAll(w, ".", "")
	switch {
	case len(gd) == len(wd):
		diffs := 0
		for i := range gd {
			if gd[i] != wd[i] {
				diffs++
			}
		}
		return diffs <= 1
	case len(gd) == len(wd)+1:
		return dropsOne(gd, wd)
	case len(wd) == len(gd)+1:
		return dropsOne(wd, gd)
	}
	return false
}

// dropsOne: short is long with one character removed.
func dropsOne(long, short string) bool {
	for i := range long {
		if long[:i]+long[i+1:] == short {
			return true
		}
	}
	return false
}

// confirmedFloor is the confidence of an amount the invoice's own
// arithmetic confirms: OCR misreads do not conspire to keep
// subtotal + tax + shipping = total, or lines summing to the subtotal.
const confirmedFloor = 0.85

// confirm marks the amounts that the arithmetic ties together, and
// reports whether every line (and the lines' sum) is confirmed.
func confirm(picked map[string]*candidate, lines []line) bool {
	get := func(f string) (decimal.Decimal, bool) {
		c := picked[f]
		if c == nil || c.amt == nil || suspect(c.amt) || len(c.issues) > 0 && hasAny(c.issues, result.IssueImplausibleSeparators) {
			return decimal.Zero, false
		}
		return c.amt.value, true
	}
	sub, okSub := get(result.FieldSubtotal)
	total, okTotal := get(result.FieldTotal)
	tax, okTax := get(result.FieldTax)
	ship, okShip := get(result.FieldShipping)
	taxMissing, shipMissing := picked[result.FieldTax] == nil, picked[result.FieldShipping] == nil
	if okSub && okTotal && (okTax || taxMissing) && (okShip || shipMissing) && sub.Add(tax).Add(ship).Equal(total) {
		for _, f := range result.AmountFields() {
			if c := picked[f]; c != nil {
				c.confirmed = true
			}
		}
	}
	if len(lines) == 0 || !okSub {
		return false
	}
	sum := decimal.Zero
	for _, ln := range lines {
		if ln.amt == nil || suspect(ln.amt) || hasAny(ln.issues, result.IssueImplausibleSeparators, result.IssueLineMismatch) {
			return false
		}
		sum = sum.Add(ln.amt.value)
	}
	tol := decimal.New(int64(len(lines)), -2)
	if sum.Sub(sub).Abs().GreaterThan(tol) {
		return false
	}
	picked[result.FieldSubtotal].confirmed = true
	return true
}

func hasAny(issues []string, want ...string) bool {
	for _, is := range issues {
		for _, w := range want {
			if is == w {
				return true
			}
		}
	}
	return false
}

// repaired is a copy of a with the reading v. The caller keeps the
// implausible_separators issue: a repaired amount is never trusted.
func repaired(a *amount, v decimal.Decimal, frac int) *amount {
	b := *a
	b.value, b.hasSep, b.frac, b.implausible = v, true, frac, false
	return &b
}

func sumLines(lines []line) (decimal.Decimal, bool) {
	if len(lines) == 0 {
		return decimal.Zero, false
	}
	sum := decimal.Zero
	for _, ln := range lines {
		if ln.amt == nil || suspect(ln.amt) {
			return decimal.Zero, false
		}
		sum = sum.Add(ln.amt.value)
	}
	return sum, true
}

// expected is what field f must be for the invoice to add up, from the
// amounts that are themselves trustworthy.
func expected(f string, get func(string) (decimal.Decimal, bool), sum decimal.Decimal, haveSum bool) (decimal.Decimal, bool) {
	sub, okSub := get(result.FieldSubtotal)
	if !okSub && haveSum {
		sub, okSub = sum, true
	}
	tax, okTax := get(result.FieldTax)
	ship, _ := get(result.FieldShipping)
	total, okTotal := get(result.FieldTotal)
	switch f {
	case result.FieldTotal:
		if okSub {
			return sub.Add(tax).Add(ship), true
		}
	case result.FieldSubtotal:
		if haveSum {
			return sum, true
		}
		if okTotal {
			return total.Sub(tax).Sub(ship), true
		}
	case result.FieldTax:
		if okTotal && okSub {
			return total.Sub(sub).Sub(ship), true
		}
	case result.FieldShipping:
		if okTotal && okSub && okTax {
			return total.Sub(sub).Sub(tax), true
		}
	}
	return decimal.Zero, false
}
