package invoice

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// inferTaxIDs adds, as inferred candidates below every label's, the ids
// a page prints in the shape of a VAT number (lexicon tax_id_formats,
// without the US EIN's, which is no more than digits and a dash) where no
// label of the lexicon claimed them: under a label it does not know, in a
// legal footer's column, after "MWST". The customer's own number (in its
// address block, or after a customer label) is not the vendor's.
func (x *run) inferTaxIDs() {
	seen := map[string]bool{}
	for _, c := range x.cands[result.FieldVendorTaxID] {
		seen[c.value] = true
	}
	lh := x.letterhead()
	excluded := x.customerCells(lh)
	for _, pg := range x.pages {
		for _, r := range pg.rows {
			if r.inTable || x.customerLabelled(r) {
				continue
			}
			for _, c := range cells(r.words, 1.0) {
				if pg == lh && excluded[c[0].box] {
					continue
				}
				for i := range c {
					p, ok := x.parseTaxID(c[i:])
					if !ok || seen[p.value] || !x.vatShaped(p.value) {
						continue
					}
					seen[p.value] = true
					x.add(result.FieldVendorTaxID, candidate{value: p.value, method: result.MethodInferred, words: p.words, issues: p.issues, base: 0.6, pos: 1 << 20})
				}
			}
		}
	}
}

// customerLabelled: the row has a tax id label about the customer ("Your
// VAT no.", "N° TVA client").
func (x *run) customerLabelled(r *row) bool {
	for _, h := range x.hits[r] {
		if h.customer {
			return true
		}
	}
	return false
}

// vatShaped: the id, without its punctuation, fits a VAT format of the
// lexicon other than the US EIN's.
func (x *run) vatShaped(id string) bool {
	bare := strings.NewReplacer(".", "", "-", "", " ", "").Replace(id)
	if len(bare) < 8 || bare[0] < 'A' || bare[0] > 'Z' {
		return false
	}
	return x.fitsTaxFormat(bare)
}
