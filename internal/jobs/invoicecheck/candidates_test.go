package invoicecheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func cand(v string) result.Candidate {
	return result.Candidate{Value: v, Method: result.MethodInferred, Confidence: 0.5, Page: 1}
}

// TestVendorMasterPicksAmongReadings: the vendor's known names and tax id
// are evidence of which printed reading is the vendor's.
func TestVendorMasterPicksAmongReadings(t *testing.T) {
	tests := []struct {
		name             string
		mutate           func(r *result.Result)
		vendor, by       string
		wantName, wantID string
		codes            []string
	}{
		{"letterhead misread, the footer's name is on file", func(r *result.Result) {
			r.Fields.VendorName, r.Fields.VendorTaxID = sp("FACTURA"), nil
			r.Candidates = map[string][]result.Candidate{result.FieldVendorName: {cand("12 Main Street"), cand("ACME Supplies")}}
		}, "v-acme", "name", "ACME Supplies", "<nil>", nil},
		{"tax id under an unknown label, found by its shape", func(r *result.Result) {
			r.Fields.VendorName, r.Fields.VendorTaxID = sp("Globex"), nil
			r.Fields.AccountNumber, r.Fields.RoutingNumber, r.Fields.IBAN = nil, nil, sp("DE89370400440532013000")
			r.FieldSources[result.FieldIBAN] = src(0.95)
			r.Fields.Currency = sp("EUR")
			r.Candidates = map[string][]result.Candidate{result.FieldVendorTaxID: {cand("GB318664205"), cand("DE123456789")}}
		}, "v-globex", "name", "Globex", "DE123456789", nil},
		{"the name reading is the customer's; the tax id finds the vendor, a candidate its name", func(r *result.Result) {
			r.Fields.VendorName = sp("Contoso Ltd")
			r.Candidates = map[string][]result.Candidate{result.FieldVendorName: {cand("Acme Corporation")}}
		}, "v-acme", "tax_id", "Acme Corporation", "12-3456789", nil},
		{"no reading is on file: nothing replaced", func(r *result.Result) {
			r.Fields.VendorName, r.Fields.VendorTaxID = sp("Initech LLC"), nil
			r.Candidates = map[string][]result.Candidate{result.FieldVendorName: {cand("1 Initech Way")},
				result.FieldVendorTaxID: {cand("99-9999999")}}
		}, "", "", "Initech LLC", "<nil>", []string{FlagUnknownVendor}},
		{"a tax id reading that is not the vendor's stays a conflict", func(r *result.Result) {
			r.Fields.VendorTaxID = sp("98-7654321")
			r.Candidates = map[string][]result.Candidate{result.FieldVendorTaxID: {cand("55-5555555")}}
		}, "v-acme", "name", "Acme Corp.", "98-7654321", []string{FlagUnknownVendor}},
		{"a candidate that fails the clamp is not used", func(r *result.Result) {
			r.Fields.VendorName, r.Fields.VendorTaxID = sp("FACTURA"), nil
			r.Candidates = map[string][]result.Candidate{result.FieldVendorName: {cand("Acme\u202eCorporation")}}
		}, "", "", "FACTURA", "<nil>", []string{FlagUnknownVendor}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cleanResult()
			tt.mutate(r)
			rep := checkRaw(t, testChecker(t, nil), marshal(t, r))
			if rep.VendorID != tt.vendor || rep.MatchedBy != tt.by || val(rep.Fields.VendorName) != tt.wantName ||
				val(rep.Fields.VendorTaxID) != tt.wantID || !slices.Equal(rep.Codes(), tt.codes) {
				t.Fatalf("vendor %q by %q, name %q, tax id %q, flags %+v", rep.VendorID, rep.MatchedBy,
					val(rep.Fields.VendorName), val(rep.Fields.VendorTaxID), rep.Flags)
			}
			replaced := tt.wantName != val(r.Fields.VendorName) || tt.wantID != val(r.Fields.VendorTaxID)
			if noted := slices.ContainsFunc(rep.Notes, func(n Note) bool { return n.Code == NoteVendorEvidence }); noted != replaced {
				t.Errorf("notes %+v", rep.Notes)
			}
		})
	}
}

func val(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestCandidatesDecodedStrictly: candidates are bookkeeping the guest
// must get right, like field sources.
func TestCandidatesDecodedStrictly(t *testing.T) {
	for name, c := range map[string]map[string][]result.Candidate{
		"not a candidate field": {result.FieldTotal: {cand("1.00")}},
		"too many":              {result.FieldVendorName: {cand("a1"), cand("a2"), cand("a3"), cand("a4"), cand("a5"), cand("a6")}},
		"bad method":            {result.FieldVendorName: {{Value: "A", Method: "guess", Confidence: 0.5, Page: 1}}},
		"page out of range":     {result.FieldVendorName: {{Value: "A", Method: result.MethodInferred, Confidence: 0.5, Page: 2}}},
	} {
		r := cleanResult()
		r.Candidates = c
		if _, err := DecodeResult(marshal(t, r)); err == nil || !strings.Contains(err.Error(), "candidates") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
