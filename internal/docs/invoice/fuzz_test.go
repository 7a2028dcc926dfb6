package invoice

import "testing"

// FuzzParseTemplate: a vendor template of any content parses or is
// refused with an error naming the place, never a panic.
func FuzzParseTemplate(f *testing.F) {
	f.Add([]byte("issuer: Acme\nkeywords: [Acme GmbH]\nfields:\n  invoice_number: 'Invoice No\\.?\\s*(\\S+)'\noptions:\n  date_order: dmy\n"))
	f.Add([]byte("fields: {total: '('}"))
	f.Fuzz(func(t *testing.T, b []byte) { ParseTemplate("fuzz.yaml", b) })
}
