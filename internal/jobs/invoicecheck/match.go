package invoicecheck

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normTaxID keeps upper-case letters and digits.
func normTaxID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sameTaxID compares a vendor's tax id on file with one read from an
// invoice. The invoice may leave out the country prefix of a VAT number
// ("123456789" for "DE123456789"), but only the vendor's own country's:
// an EIN 12-3456789 is not the VAT number DE123456789.
func sameTaxID(onFile, country, read string) bool {
	a, b := normTaxID(onFile), normTaxID(read)
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	cc := strings.ToUpper(country)
	return len(cc) == 2 && (a == cc+b || b == cc+a)
}

// normName folds a company name for matching: case, accents, punctuation
// and spacing go (OCR loses spaces: "Blue SkyLogistics" is Blue Sky
// Logistics), "&" reads "and", a leading "the" and trailing legal forms
// (Inc, LLC, GmbH, Ltd, ... also glued on: "GlobexGmbH") are dropped.
// "ACME Corp." and "Acme Corporation" both become "acme".
func (r *refData) normName(s string) string {
	var b strings.Builder
	for _, c := range norm.NFKD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, c):
		case c == '&':
			b.WriteString(" and ")
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			b.WriteRune(c)
		case c == '.':
			// "S.A.R.L." and "B.V." fold to one word.
		default:
			b.WriteByte(' ')
		}
	}
	fs := strings.Fields(b.String())
	if len(fs) > 1 && fs[0] == "the" {
		fs = fs[1:]
	}
	for len(fs) > 1 && (r.suffixes[fs[len(fs)-1]] || fs[len(fs)-1] == "and") {
		fs = fs[:len(fs)-1]
	}
	if n := len(fs); n > 0 {
		fs[n-1] = r.trimGluedSuffix(fs[n-1])
	}
	return strings.Join(fs, "")
}

// trimGluedSuffix drops a legal form of three or more letters glued to
// the last word, keeping at least three letters of the name.
func (r *refData) trimGluedSuffix(w string) string {
	for suf := range r.suffixes {
		if len(suf) >= 3 && len(w) >= len(suf)+3 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// vendorMatch is how an invoice was tied to a vendor.
type vendorMatch struct {
	vendor *Vendor
	by     string // "tax_id" or "name"
	// taxConflict: matched by name, but the invoice's tax id is not the
	// one on file (an impersonation, or a misread).
	taxConflict bool
}

// matchVendor finds the vendor by tax id first, then by name or alias.
func (c *Checker) matchVendor(name, taxID *string) vendorMatch {
	if taxID != nil {
		for i := range c.master.Vendors {
			v := &c.master.Vendors[i]
			if sameTaxID(v.TaxID, v.Country, *taxID) {
				return vendorMatch{vendor: v, by: "tax_id"}
			}
		}
	}
	if name == nil {
		return vendorMatch{}
	}
	n := c.ref.normName(*name)
	if n == "" {
		return vendorMatch{}
	}
	for i := range c.master.Vendors {
		v := &c.master.Vendors[i]
		for _, cand := range append([]string{v.Name}, v.Aliases...) {
			if c.ref.normName(cand) == n {
				conflict := taxID != nil && v.TaxID != "" && !sameTaxID(v.TaxID, v.Country, *taxID)
				return vendorMatch{vendor: v, by: "name", taxConflict: conflict}
			}
		}
	}
	return vendorMatch{}
}
