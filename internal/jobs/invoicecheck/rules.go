package invoicecheck

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// minorUnit is one cent (or the currency's smallest unit).
func (c *Checker) minorUnit(f *result.Fields) decimal.Decimal {
	digits := 2
	if f.Currency != nil {
		if d, ok := c.ref.minorUnits[*f.Currency]; ok {
			digits = d
		}
	}
	return decimal.New(1, int32(-digits))
}

// checkArithmetic: subtotal + shipping + tax == total exactly; the line
// items sum to the subtotal within one minor unit per line; each line's
// quantity x unit price is its amount within one minor unit.
func (c *Checker) checkArithmetic(f *result.Fields, fl *flagger) {
	unit := c.minorUnit(f)
	total, okTotal := dec(f.Total)
	sub, okSub := dec(f.Subtotal)
	tax, _ := dec(f.Tax)
	ship, _ := dec(f.Shipping)
	if okTotal && okSub {
		if got := sub.Add(tax).Add(ship); !got.Equal(total) {
			fl.add(FlagTotalMismatch, result.FieldTotal, "subtotal + tax + shipping = %s, total says %s", got, total)
		}
	}
	if len(f.LineItems) == 0 {
		return
	}
	sum := decimal.Zero
	for i, it := range f.LineItems {
		a, _ := dec(it.Amount)
		sum = sum.Add(a)
		q, okQ := dec(it.Quantity)
		p, okP := dec(it.UnitPrice)
		switch {
		case okQ && okP && q.Mul(p).Sub(a).Abs().GreaterThan(unit):
			fl.add(FlagTotalMismatch, result.FieldLineItems, "line %d: %s x %s is not %s", i+1, q, p, a)
		case !okQ && okP && !p.IsZero() && !plausibleQuantity(a, p, unit):
			fl.add(FlagTotalMismatch, result.FieldLineItems, "line %d: %s is no quantity of %s", i+1, a, p)
		}
	}
	tol := unit.Mul(decimal.NewFromInt(int64(len(f.LineItems))))
	want, okWant := sub, okSub
	if !okSub && okTotal {
		want, okWant = total.Sub(tax).Sub(ship), true
	}
	if okWant && sum.Sub(want).Abs().GreaterThan(tol) {
		fl.add(FlagTotalMismatch, result.FieldLineItems, "line items sum to %s, not %s", sum, want)
	}
}

// plausibleQuantity: with no quantity read, the amount must still be the
// unit price times some quantity of at most two decimals.
func plausibleQuantity(amount, price, unit decimal.Decimal) bool {
	q := amount.Div(price).Round(2)
	return q.IsPositive() && q.Mul(price).Sub(amount).Abs().LessThanOrEqual(unit)
}

func (c *Checker) checkLimit(f *result.Fields, fl *flagger) {
	total, ok := dec(f.Total)
	if !ok || f.Currency == nil {
		return
	}
	limit, has := c.policy.AutoApproveLimit[*f.Currency]
	if !has && c.policy.DefaultLimit != nil {
		limit, has = *c.policy.DefaultLimit, true
	}
	switch {
	case !has:
		fl.add(FlagHighValue, result.FieldTotal, "no auto-approve limit for %s", *f.Currency)
	case total.GreaterThan(limit):
		fl.add(FlagHighValue, result.FieldTotal, "total %s %s is above the %s limit", total, *f.Currency, limit)
	}
}

// checkDates: due before the as-of day, or before the invoice date. With
// no due date printed, the vendor's payment terms give one.
func (c *Checker) checkDates(m vendorMatch, f *result.Fields, fl *flagger) {
	inv, okInv := date(f.InvoiceDate)
	due, okDue := date(f.DueDate)
	if !okDue && okInv && m.vendor != nil && m.vendor.PaymentTermsDays > 0 {
		due, okDue = inv.AddDate(0, 0, m.vendor.PaymentTermsDays), true
	}
	asOf := time.Date(c.policy.AsOf.Year(), c.policy.AsOf.Month(), c.policy.AsOf.Day(), 0, 0, 0, 0, time.UTC)
	if okDue && due.Before(asOf) {
		fl.add(FlagPastDue, result.FieldDueDate, "due %s, before %s", due.Format(time.DateOnly), asOf.Format(time.DateOnly))
	}
	if okDue && okInv && due.Before(inv) {
		fl.add(FlagPastDue, result.FieldDueDate, "due %s is before the invoice date %s", due.Format(time.DateOnly), inv.Format(time.DateOnly))
	}
}

func date(p *string) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, *p)
	return t, err == nil
}

// critical are the fields whose misreading moves money.
func critical() []string {
	return []string{result.FieldTotal, result.FieldSubtotal, result.FieldTax, result.FieldShipping,
		result.FieldInvoiceNumber, result.FieldCurrency, result.FieldIBAN, result.FieldBIC,
		result.FieldAccountNumber, result.FieldRoutingNumber, result.FieldSortCode}
}

// checkConfidence: a critical field (or the line items) below the minimum
// confidence, without a source, or marked with implausible separators or a
// failed checksum is never approved. A bank detail read exactly as on file
// (onFile) is exempt from the confidence minimum, never from a failed
// checksum or separators in doubt.
func (c *Checker) checkConfidence(res *result.Result, f *result.Fields, onFile map[string]bool, fl *flagger) {
	names := critical()
	if len(f.LineItems) > 0 {
		names = append(names, result.FieldLineItems)
	}
	for _, name := range names {
		if name != result.FieldLineItems && *f.Ptr(name) == nil {
			if src, ok := res.FieldSources[name]; ok && hasIssue(src, result.IssueValueUnreadable) {
				fl.add(FlagLowConfidence, name, "%s is printed (page %d) but could not be read", name, src.Page)
			}
			continue
		}
		src, ok := res.FieldSources[name]
		switch {
		case !ok:
			fl.add(FlagLowConfidence, name, "%s has no source", name)
		case hasIssue(src, result.IssueImplausibleSeparators):
			fl.add(FlagLowConfidence, name, "%s: implausible separators (confidence %.2f)", name, src.Confidence)
		case hasIssue(src, result.IssueChecksumFailed):
			fl.add(FlagLowConfidence, name, "%s: checksum failed as read", name)
		case onFile[name]:
		case hasIssue(src, result.IssueLowOCRConfidence):
			fl.add(FlagLowConfidence, name, "%s: printed too faintly or damaged to read with confidence", name)
		case hasIssue(src, result.IssueModelDisagrees):
			fl.add(FlagLowConfidence, name, "%s: the rules and the model read it differently", name)
		case src.Confidence < c.policy.MinConfidence:
			fl.add(FlagLowConfidence, name, "%s: confidence %.2f below %.2f (%s)", name, src.Confidence, c.policy.MinConfidence, src.Method)
		}
	}
}

func hasIssue(s result.FieldSource, issue string) bool {
	for _, is := range s.Issues {
		if is == issue {
			return true
		}
	}
	return false
}

// markJudged records that this checker judged docID and reports whether
// it had already.
func (c *Checker) markJudged(docID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.judged[docID] {
		return true
	}
	c.judged[docID] = true
	return false
}

// checkDuplicate asks the history about (tenant, vendor, number) and then
// records it, so a later copy in the same batch is caught. With the
// document's content id it also records (tenant, vendor, number, id): the
// same document seen again is resubmitted, not a duplicate of itself.
func (c *Checker) checkDuplicate(ctx context.Context, m vendorMatch, f *result.Fields, docID string, fl *flagger, notes *[]Note) error {
	if f.InvoiceNumber == nil {
		return nil
	}
	k := DupKey{TenantID: c.master.TenantID, Number: NormalizeInvoiceNumber(*f.InvoiceNumber)}
	switch {
	case m.vendor != nil:
		k.Vendor = m.vendor.VendorID
	case f.VendorTaxID != nil:
		k.Vendor = "tax:" + normTaxID(*f.VendorTaxID)
	case f.VendorName != nil:
		k.Vendor = "name:" + c.ref.normName(*f.VendorName)
	default:
		k.Vendor = "unknown"
	}
	seen, err := c.history.Seen(ctx, k)
	if err != nil {
		return fmt.Errorf("duplicate check: %w", err)
	}
	var kd DupKey
	sameDoc := false
	if docID != "" {
		kd = k
		kd.Vendor += "\x00document:" + docID
		if sameDoc, err = c.history.Seen(ctx, kd); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
	}
	twiceInBatch := docID != "" && c.markJudged(docID)
	switch {
	case seen && sameDoc && twiceInBatch:
		fl.add(FlagDuplicate, result.FieldInvoiceNumber, "invoice %s: the same file (%s) twice in this batch", *f.InvoiceNumber, docID)
	case seen && sameDoc:
		*notes = append(*notes, Note{Code: NoteResubmitted,
			Detail: fmt.Sprintf("this document (%s) with invoice %s was judged before; it is the same file, not a second invoice", docID, *f.InvoiceNumber)})
	case seen:
		fl.add(FlagDuplicate, result.FieldInvoiceNumber, "invoice %s from this vendor was seen before", *f.InvoiceNumber)
	}
	if err := c.history.Record(ctx, k); err != nil {
		return fmt.Errorf("record invoice: %w", err)
	}
	if docID != "" {
		if err := c.history.Record(ctx, kd); err != nil {
			return fmt.Errorf("record invoice: %w", err)
		}
	}
	return nil
}
