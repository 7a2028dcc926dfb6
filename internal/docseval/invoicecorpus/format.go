package invoicecorpus

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// amountStyle is how a locale prints money.
type amountStyle int

const (
	styleUS     amountStyle = iota // $1,234.56
	styleUSCode                    // USD 1,234.56
	styleUK                        // £1,234.56
	styleDE                        // 1.234,56 €
	styleFRNBSP                    // 1 234,56 € with no-break spaces
	styleFRThin                    // 1 234,56 € with thin spaces
	styleNL                        // € 1.234,56
)

// group prints the integer part with a grouping separator.
func group(d decimal.Decimal, sep, dec string) string {
	s := d.Abs().StringFixed(2)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	out := b.String() + dec + frac
	if d.IsNegative() {
		out = "-" + out
	}
	return out
}

// money prints d in style; symbol adds the currency marker.
func money(d decimal.Decimal, st amountStyle, symbol bool) string {
	var n string
	switch st {
	case styleUS, styleUSCode, styleUK:
		n = group(d, ",", ".")
	case styleDE, styleNL:
		n = group(d, ".", ",")
	case styleFRNBSP:
		n = group(d, "\u00a0", ",")
	case styleFRThin:
		n = group(d, "\u2009", ",")
	}
	if !symbol {
		return n
	}
	switch st {
	case styleUS:
		return "$" + n
	case styleUSCode:
		return "USD " + n
	case styleUK:
		return "£" + n
	case styleNL:
		return "€ " + n
	case styleFRNBSP:
		return n + "\u00a0€"
	default:
		return n + " €"
	}
}

// dateStyle is how a locale prints dates.
type dateStyle int

const (
	dateUSLong  dateStyle = iota // March 12, 2026
	dateUSSlash                  // 03/12/2026
	dateISO                      // 2026-03-12
	dateUKLong                   // 12 March 2026
	dateUKSlash                  // 12/03/2026
	dateDEDots                   // 12.03.2026
	dateFRSlash                  // 12/03/2026
	dateFRLong                   // 12 mars 2026
	dateNLDash                   // 12-03-2026
	dateUSDash                   // 03-12-2026 (Northwind)
)

func frMonth(m time.Month) string {
	return []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
		"septembre", "octobre", "novembre", "décembre"}[m-1]
}

func fmtDate(t time.Time, st dateStyle) string {
	switch st {
	case dateUSLong:
		return t.Format("January 2, 2006")
	case dateUSSlash:
		return t.Format("01/02/2006")
	case dateISO:
		return t.Format("2006-01-02")
	case dateUKLong:
		return t.Format("2 January 2006")
	case dateUKSlash, dateFRSlash:
		return t.Format("02/01/2006")
	case dateDEDots:
		return t.Format("02.01.2006")
	case dateFRLong:
		return fmt.Sprintf("%d %s %d", t.Day(), frMonth(t.Month()), t.Year())
	case dateNLDash:
		return t.Format("02-01-2006")
	case dateUSDash:
		return t.Format("01-02-2006")
	}
	return t.Format("2006-01-02")
}

// groupIBAN prints an IBAN in blocks of four.
func groupIBAN(s string) string {
	var parts []string
	for i := 0; i < len(s); i += 4 {
		parts = append(parts, s[i:min(i+4, len(s))])
	}
	return strings.Join(parts, " ")
}
