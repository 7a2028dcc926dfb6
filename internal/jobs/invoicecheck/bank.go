package invoicecheck

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/checksum"
)

// normIBAN removes spaces and upper-cases.
func normIBAN(s string) string { return strings.ToUpper(strings.Join(strings.Fields(s), "")) }

// digitsOnly keeps the digits of an account number, routing number or sort
// code as printed with spaces or dashes.
func digitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ibanProblem checks an IBAN's country length and ISO 13616 mod-97.
func (r *refData) ibanProblem(iban string) string {
	if !ibanRe.MatchString(iban) {
		return "not shaped like an IBAN"
	}
	want, ok := r.ibanLengths[iban[:2]]
	if !ok {
		return "country " + iban[:2] + " does not use IBANs"
	}
	if len(iban) != want {
		return "wrong length for " + iban[:2]
	}
	if !mod97(iban) {
		return "fails the mod-97 check"
	}
	return ""
}

func mod97(iban string) bool { return checksum.IBANMod97(iban) }

// abaValid is the ABA routing number checksum:
// 3(d1+d4+d7) + 7(d2+d5+d8) + (d3+d6+d9) = 0 mod 10.
func abaValid(s string) bool { return checksum.ABA(s) }

// bicProblem checks a BIC's shape; its country letters must be a country
// that has one (any two letters; the registry is not shipped).
func bicProblem(bic string) string {
	if !bicRe.MatchString(bic) {
		return "not shaped like a BIC"
	}
	return ""
}

// sameBIC compares BICs ignoring the "XXX" primary-office branch.
func sameBIC(a, b string) bool {
	trim := func(s string) string { return strings.TrimSuffix(strings.ToUpper(s), "XXX") }
	return trim(a) == trim(b)
}
