package invoice

import (
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Digit repairs that the invoice's own arithmetic confirms twice.
//
// Faxes and photos misread single digits of money that tesseract is
// sure of: a slashed or broken zero comes back as 8 or 9 ("40.04" read
// "40.84"), a 0 as 6 or 5. The word confidence does not show it; only
// the arithmetic does. A reading is changed only when one look-alike
// digit, and no other choice, satisfies two independent equations at
// once. Nothing else is ever repaired:
//
//   - a line's amount or unit price, when quantity x unit price gives it
//     AND the lines then sum to a subtotal that subtotal + tax + shipping
//     = total confirms (a planted wrong line amount with a matching
//     subtotal fails the first, a wrong line with the old subtotal the
//     second);
//   - the tax, when the printed rate x subtotal gives it AND subtotal +
//     tax + shipping = total then holds;
//   - the subtotal, when the lines sum to it AND subtotal + tax +
//     shipping = total then holds.
//
// The total and the shipping never are: a total the other amounts
// contradict by one look-alike digit is exactly what a changed digit
// looks like, and shipping has no second equation, so "repairing" it
// would balance an inflated total. Both stay as read and the host flags
// total_mismatch.
//
// Every repair is marked ocr_corrected.

// lookAlikes maps a digit OCR read to the digits it may have been
// printed as (measured on the corpus's faxes, photos and scans).
var lookAlikes = map[byte]string{'8': "063", '9': "0", '6': "08", '5': "06", '3': "8", '0': "8"}

// maxMisreadLines bounds the lines one repair may change: more misreads
// than that is a document too damaged to reconstruct by arithmetic.
const maxMisreadLines = 4

// misreadsOf returns the values v may have been printed as, one digit
// read as a look-alike, at frac fraction digits; or a leading 5 or 8
// that was a currency sign ("$80.86" read "580.86").
func misreadsOf(v decimal.Decimal, frac int) []decimal.Decimal {
	s := v.StringFixed(int32(frac))
	var out []decimal.Decimal
	if len(s) > 1 && (s[0] == '5' || s[0] == '8') && s[1] != '.' && s[1] != '0' {
		if alt, err := decimal.NewFromString(s[1:]); err == nil {
			out = append(out, alt)
		}
	}
	for i := 0; i < len(s); i++ {
		for _, p := range []byte(lookAlikes[s[i]]) {
			if p == '0' && (i == 0 || i == 1 && s[0] == '-') && len(s) > 1 && s[i+1] != '.' {
				continue // no leading zero
			}
			alt, err := decimal.NewFromString(s[:i] + string(p) + s[i+1:])
			if err == nil {
				out = append(out, alt)
			}
		}
	}
	return out
}

// trustedAmount is a picked amount that is read cleanly (nil if absent).
func trustedAmount(c *candidate) (decimal.Decimal, bool) {
	if c == nil || c.amt == nil || suspect(c.amt) || hasAny(c.issues, result.IssueImplausibleSeparators, result.IssueLowOCRConfidence) {
		return decimal.Zero, false
	}
	return c.amt.value, true
}

// totalsRow is the invoice's totals as read: ok when subtotal and total
// are read cleanly, and tax and shipping either are or are not printed.
type totalsRow struct {
	sub, tax, ship, total decimal.Decimal
	ok                    bool
}

func readTotals(picked map[string]*candidate) totalsRow {
	var t totalsRow
	var okSub, okTotal bool
	t.sub, okSub = trustedAmount(picked[result.FieldSubtotal])
	t.total, okTotal = trustedAmount(picked[result.FieldTotal])
	t.ok = okSub && okTotal
	for _, f := range []string{result.FieldTax, result.FieldShipping} {
		v, ok := trustedAmount(picked[f])
		if !ok && picked[f] != nil {
			t.ok = false
		}
		if f == result.FieldTax {
			t.tax = v
		} else {
			t.ship = v
		}
	}
	return t
}

func (t totalsRow) balanced() bool { return t.ok && t.sub.Add(t.tax).Add(t.ship).Equal(t.total) }

// lineFix is one way to read a misread line: the look-alike values of
// its quantity, amount or unit price (nil: as read).
type lineFix struct {
	line            int
	qty, amt, price *decimal.Decimal
}

// repairLineDigits repairs the money of OCR lines whose quantity x unit
// price is not their amount, when exactly one choice of look-alike
// digits makes every such line multiply out and the lines sum to a
// subtotal the totals row balances. It runs before the quantity repairs,
// which would otherwise fit a quantity to a misread amount.
func repairLineDigits(picked map[string]*candidate, lines []line, frac int) {
	t := readTotals(picked)
	if !t.balanced() {
		return
	}
	cent := decimal.New(1, int32(-frac))
	var opts [][]lineFix
	base := decimal.Zero
	for i := range lines {
		ln := &lines[i]
		if ln.amt == nil || suspect(ln.amt) {
			return
		}
		base = base.Add(ln.amt.value)
		if fs := lineFixes(i, ln, cent); len(fs) > 0 {
			opts = append(opts, fs) // lines without one are left to the quantity repairs
		}
	}
	if len(opts) == 0 || len(opts) > maxMisreadLines {
		return
	}
	if found, ok := onlyChoice(opts, lines, base, t.sub); ok {
		for _, f := range found {
			f.apply(&lines[f.line])
		}
	}
}

// lineFixes lists the look-alike readings that make an OCR line whose
// quantity x unit price is not its amount multiply out.
func lineFixes(i int, ln *line, cent decimal.Decimal) []lineFix {
	if ln.qty == "" || ln.price == nil || suspect(ln.price) || !ocrLine(ln) {
		return nil
	}
	q, err := decimal.NewFromString(ln.qty)
	if err != nil || q.Mul(ln.price.value).Sub(ln.amt.value).Abs().LessThanOrEqual(cent) {
		return nil
	}
	fits := func(q, p, a decimal.Decimal) bool { return q.Mul(p).Sub(a).Abs().LessThanOrEqual(cent) }
	var fs []lineFix
	for _, a := range misreadsOf(ln.amt.value, ln.amt.frac) {
		if fits(q, ln.price.value, a) {
			fs = append(fs, lineFix{line: i, amt: &a})
		}
	}
	for _, p := range misreadsOf(ln.price.value, ln.price.frac) {
		if fits(q, p, ln.amt.value) {
			fs = append(fs, lineFix{line: i, price: &p})
		}
	}
	// The quantity misread, alone or with the amount ("10" read "19"
	// and "211.40" read "211.49").
	for _, qq := range misreadsOf(q, max(0, -int(q.Exponent()))) {
		if !qq.IsPositive() {
			continue
		}
		if fits(qq, ln.price.value, ln.amt.value) {
			fs = append(fs, lineFix{line: i, qty: &qq})
		}
		for _, a := range misreadsOf(ln.amt.value, ln.amt.frac) {
			if fits(qq, ln.price.value, a) {
				fs = append(fs, lineFix{line: i, qty: &qq, amt: &a})
			}
		}
	}
	return fs
}

// onlyChoice enumerates one fix per misread line (at most a handful
// each) and returns the choice whose lines sum to sub exactly, when
// there is exactly one.
func onlyChoice(opts [][]lineFix, lines []line, base, sub decimal.Decimal) ([]lineFix, bool) {
	var found []lineFix
	matches := 0
	var walk func(k int, sum decimal.Decimal, chosen []lineFix)
	walk = func(k int, sum decimal.Decimal, chosen []lineFix) {
		if matches > 1 {
			return
		}
		if k == len(opts) {
			if sum.Equal(sub) {
				matches++
				found = append([]lineFix(nil), chosen...)
			}
			return
		}
		for _, f := range opts[k] {
			s := sum
			if f.amt != nil {
				s = s.Sub(lines[f.line].amt.value).Add(*f.amt)
			}
			walk(k+1, s, append(chosen, f))
		}
	}
	walk(0, base, nil)
	return found, matches == 1
}

func (f lineFix) apply(ln *line) {
	if f.qty != nil {
		ln.qty = f.qty.String()
	}
	if f.amt != nil {
		ln.amt = withValue(ln.amt, *f.amt)
	}
	if f.price != nil {
		ln.price = withValue(ln.price, *f.price)
	}
	ln.issues = appendOnce(ln.issues, result.IssueOCRCorrected)
}

// withValue is a copy of a read as v (same printed precision).
func withValue(a *amount, v decimal.Decimal) *amount {
	b := *a
	b.value = v
	return &b
}

// repairTotalsDigits repairs one amount of a totals row that does not
// balance by one look-alike digit (see the rules above). sum is the
// lines' sum when every line multiplies out.
func repairTotalsDigits(picked map[string]*candidate, lines []line) {
	t := readTotals(picked)
	if !t.ok || t.balanced() {
		return
	}
	sum, linesOK := cleanSum(lines)
	taxC := picked[result.FieldTax]
	rateSays := func(t totalsRow) bool { return taxC != nil && taxC.rate != nil && rateTaxWith(taxC, t) }
	type option struct {
		field string
		v     decimal.Decimal
	}
	var opts []option
	if taxC != nil && ocrRead(taxC.words) {
		for _, v := range misreadsOf(t.tax, taxC.amt.frac) {
			alt := t
			alt.tax = v
			if alt.balanced() && rateSays(alt) {
				opts = append(opts, option{result.FieldTax, v})
			}
		}
	}
	if c := picked[result.FieldSubtotal]; linesOK && ocrRead(c.words) {
		for _, v := range misreadsOf(t.sub, c.amt.frac) {
			alt := t
			alt.sub = v
			if alt.balanced() && v.Equal(sum) {
				opts = append(opts, option{result.FieldSubtotal, v})
			}
		}
	}
	if len(opts) != 1 {
		return // nothing, or more than one amount could be the misread one
	}
	o := opts[0]
	p := picked[o.field]
	fixed := *p
	fixed.amt = withValue(p.amt, o.v)
	fixed.value = formatAmount(*fixed.amt)
	fixed.issues = appendOnce(fixed.issues, result.IssueOCRCorrected)
	picked[o.field] = &fixed
}

// rateTaxWith: the tax candidate's printed rate times the subtotal (or
// subtotal + shipping) is t's tax.
func rateTaxWith(c *candidate, t totalsRow) bool {
	for _, base := range []decimal.Decimal{t.sub, t.sub.Add(t.ship)} {
		if base.Mul(*c.rate).Div(decimal.NewFromInt(100)).Round(int32(c.amt.frac)).Equal(t.tax) {
			return true
		}
	}
	return false
}

// cleanSum is the lines' sum when every line is read cleanly and
// multiplies out.
func cleanSum(lines []line) (decimal.Decimal, bool) {
	if len(lines) == 0 {
		return decimal.Zero, false
	}
	sum := decimal.Zero
	for i := range lines {
		ln := &lines[i]
		if ln.amt == nil || suspect(ln.amt) || hasAny(ln.issues, result.IssueImplausibleSeparators, result.IssueLineMismatch) || !multipliesOut(ln) {
			return decimal.Zero, false
		}
		sum = sum.Add(ln.amt.value)
	}
	return sum, true
}

// ocrRead: some of the words were read by OCR (a text layer's amounts
// are as printed: a mismatch there is the invoice's own).
func ocrRead(ws []word) bool {
	for _, w := range ws {
		if w.conf < 1 {
			return true
		}
	}
	return false
}

// ratePattern finds a printed tax rate: "VAT 20%", "Sales Tax (8.25%)",
// "MwSt. 19 %", "TVA 20,0 %".
var ratePattern = regexp.MustCompile(`(\d{1,2}(?:[.,]\d{1,3})?)\s*%`)

// taxRate reads the rate printed on a tax label's row, nil if none (or
// more than one: "0% / 20%" says nothing).
func taxRate(text string) *decimal.Decimal {
	ms := ratePattern.FindAllStringSubmatch(text, -1)
	if len(ms) != 1 {
		return nil
	}
	r, err := decimal.NewFromString(strings.ReplaceAll(ms[0][1], ",", "."))
	if err != nil || !r.IsPositive() {
		return nil
	}
	return &r
}
