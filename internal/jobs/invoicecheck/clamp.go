package invoicecheck

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Value shapes. A value that does not fit is dropped, never repaired.
var (
	amountRe   = regexp.MustCompile(`^-?[0-9]{1,13}(\.[0-9]{1,4})?$`)
	qtyRe      = regexp.MustCompile(`^-?[0-9]{1,9}(\.[0-9]{1,4})?$`)
	dateRe     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	idRe       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9\-/._# ]{0,63}$`)
	ibanRe     = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	bicRe      = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	accountRe  = regexp.MustCompile(`^[0-9]{4,17}$`)
	routingRe  = regexp.MustCompile(`^[0-9]{9}$`)
	sortCodeRe = regexp.MustCompile(`^[0-9]{2}-?[0-9]{2}-?[0-9]{2}$`)
	taxIDRe    = regexp.MustCompile(`^[A-Z0-9][A-Z0-9\-./]{3,19}$`)
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

// maxAmount is the largest amount believed: anything larger is a misread
// or an attack, not an invoice.
func maxAmount() decimal.Decimal { return decimal.New(1, 10) }

// clamp validates every field value in place: a value outside its schema
// becomes null and raises an unreadable flag naming the field and why.
func (c *Checker) clamp(f *result.Fields, fl *flagger) {
	for _, name := range result.ScalarFields() {
		p := f.Ptr(name)
		if *p == nil {
			continue
		}
		if why := c.fieldProblem(name, **p); why != "" {
			*p = nil
			fl.add(FlagUnreadable, name, "%s dropped: %s", name, why)
		}
	}
	var kept []result.LineItem
	for i, it := range f.LineItems {
		if why := c.lineProblem(it); why != "" {
			fl.add(FlagUnreadable, result.FieldLineItems, "line %d dropped: %s", i+1, why)
			continue
		}
		kept = append(kept, it)
	}
	f.LineItems = kept
}

func (c *Checker) fieldProblem(name, v string) string {
	if why := textProblem(v, result.MaxTextRunes); why != "" {
		return why
	}
	switch name {
	case result.FieldVendorName:
		if strings.TrimSpace(v) == "" {
			return "empty"
		}
	case result.FieldInvoiceNumber, result.FieldPONumber:
		return shape(idRe, v, "not an identifier")
	case result.FieldInvoiceDate, result.FieldDueDate:
		return dateProblem(v)
	case result.FieldCurrency:
		if _, ok := c.ref.minorUnits[v]; !currencyRe.MatchString(v) || !ok {
			return "not an ISO 4217 currency"
		}
	case result.FieldSubtotal, result.FieldTax, result.FieldShipping, result.FieldTotal:
		return amountProblem(v, false)
	case result.FieldIBAN:
		return shape(ibanRe, v, "not shaped like an IBAN")
	case result.FieldBIC:
		return shape(bicRe, v, "not shaped like a BIC")
	case result.FieldAccountNumber:
		return shape(accountRe, v, "not an account number")
	case result.FieldRoutingNumber:
		return shape(routingRe, v, "not a nine-digit routing number")
	case result.FieldSortCode:
		return shape(sortCodeRe, v, "not a sort code")
	case result.FieldVendorTaxID:
		return shape(taxIDRe, v, "not a tax id")
	}
	return ""
}

func (c *Checker) lineProblem(it result.LineItem) string {
	if why := textProblem(it.Description, result.MaxDescRunes); why != "" {
		return "description " + why
	}
	if it.Unit != nil {
		if why := textProblem(*it.Unit, 32); why != "" {
			return "unit " + why
		}
	}
	if it.Quantity != nil && !qtyRe.MatchString(*it.Quantity) {
		return "quantity is not a decimal"
	}
	if it.UnitPrice != nil {
		if why := amountProblem(*it.UnitPrice, true); why != "" {
			return "unit price " + why
		}
	}
	if it.Amount == nil {
		return "no amount"
	}
	if why := amountProblem(*it.Amount, true); why != "" {
		return "amount " + why
	}
	return ""
}

func textProblem(v string, maxRunes int) string {
	switch {
	case !utf8.ValidString(v):
		return "invalid UTF-8"
	case utf8.RuneCountInString(v) > maxRunes:
		return fmt.Sprintf("longer than %d characters", maxRunes)
	case hasControl(v):
		return "has control characters"
	}
	return ""
}

func shape(re *regexp.Regexp, v, why string) string {
	if !re.MatchString(v) {
		return why
	}
	return ""
}

func dateProblem(v string) string {
	if !dateRe.MatchString(v) {
		return "not an ISO date"
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return "not a calendar date"
	}
	if y := t.Year(); y < 1990 || y > 2100 {
		return "year out of range"
	}
	return ""
}

// amountProblem: a plain decimal string, at most four fraction digits,
// below maxAmount; negative only where a line may be a discount.
func amountProblem(v string, allowNegative bool) string {
	if !amountRe.MatchString(v) {
		return "not a decimal amount"
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		return "not a decimal amount"
	}
	if d.Abs().GreaterThanOrEqual(maxAmount()) {
		return "implausibly large"
	}
	if d.IsNegative() && !allowNegative {
		return "negative"
	}
	return ""
}

// dec parses a value Clamp has already accepted.
func dec(p *string) (decimal.Decimal, bool) {
	if p == nil {
		return decimal.Zero, false
	}
	d, err := decimal.NewFromString(*p)
	return d, err == nil
}
