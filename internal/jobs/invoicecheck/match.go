package invoicecheck

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// normTaxID keeps upper-case letters and digits. A Swiss UID's VAT
// suffix ("CHE-114.927.538 MWST", or TVA, IVA) is part of how it is
// written, not of the number.
func normTaxID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	t := b.String()
	if len(t) > 12 && strings.HasPrefix(t, "CHE") {
		for _, suf := range []string{"MWST", "TVA", "IVA"} {
			t = strings.TrimSuffix(t, suf)
		}
	}
	return t
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

// resolveVendor matches the vendor from the fields and, where they match
// no vendor (or the name matches one whose tax id the field does not
// carry), from the guest's further readings (result.Candidates): the
// vendor's known tax id and names are evidence of which printed reading
// is the vendor's. A reading taken this way replaces the field (it is
// printed text and passes the same clamp) and leaves a note. A tax id
// that conflicts with the vendor the name found stays a conflict unless
// the invoice also prints the vendor's own.
func (c *Checker) resolveVendor(cands map[string][]result.Candidate, f *result.Fields, notes *[]Note) vendorMatch {
	m := c.matchVendor(f.VendorName, f.VendorTaxID)
	use := func(field string, cand result.Candidate) {
		v := cand.Value
		*f.Ptr(field) = &v
		*notes = append(*notes, Note{Code: NoteVendorEvidence, Detail: fmt.Sprintf(
			"%s read from another place on page %d (%s): the vendor master knows it", field, cand.Page, cand.Method)})
	}
	if m.vendor == nil {
		for _, cand := range c.usable(cands, result.FieldVendorTaxID) {
			if mm := c.matchVendor(nil, &cand.Value); mm.vendor != nil && f.VendorTaxID == nil {
				use(result.FieldVendorTaxID, cand)
				m = mm
				break
			}
		}
	}
	if m.vendor == nil || m.by == "tax_id" && !c.nameIsVendors(f.VendorName, m.vendor) {
		for _, cand := range c.usable(cands, result.FieldVendorName) {
			if m.vendor != nil {
				if c.nameIsVendors(&cand.Value, m.vendor) {
					use(result.FieldVendorName, cand)
					break
				}
				continue
			}
			if mm := c.matchVendor(&cand.Value, f.VendorTaxID); mm.vendor != nil {
				use(result.FieldVendorName, cand)
				m = mm
				break
			}
		}
	}
	if m.vendor != nil && (m.taxConflict || f.VendorTaxID == nil) {
		for _, cand := range c.usable(cands, result.FieldVendorTaxID) {
			if sameTaxID(m.vendor.TaxID, m.vendor.Country, cand.Value) {
				use(result.FieldVendorTaxID, cand)
				m.taxConflict = false
				break
			}
		}
	}
	return m
}

// usable are a field's candidates whose values pass the field's clamp.
func (c *Checker) usable(cands map[string][]result.Candidate, field string) []result.Candidate {
	var out []result.Candidate
	for _, cand := range cands[field] {
		if c.fieldProblem(field, cand.Value) == "" {
			out = append(out, cand)
		}
	}
	return out
}

// nameIsVendors: the name is one of the vendor's (name or alias).
func (c *Checker) nameIsVendors(name *string, v *Vendor) bool {
	if name == nil {
		return false
	}
	n := c.ref.normName(*name)
	for _, cand := range append([]string{v.Name}, v.Aliases...) {
		if n != "" && c.ref.normName(cand) == n {
			return true
		}
	}
	return false
}
