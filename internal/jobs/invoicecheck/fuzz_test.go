package invoicecheck

import (
	"bytes"
	"testing"
)

// FuzzParseMaster: vendor master data of any content parses or is refused.
func FuzzParseMaster(f *testing.F) {
	f.Add([]byte(`{"tenant_id":"t","vendors":[{"vendor_id":"v1","name":"Acme GmbH","bank":{"iban":"DE89370400440532013000"}}]}`))
	f.Add([]byte(`{"tenant_id":"t","vendors":[{"vendor_id":"v1"},{"vendor_id":"v1"}]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseMaster(bytes.NewReader(b))
	})
}

// FuzzDecodeResult: whatever a guest writes as its invoice result is
// decoded strictly or refused, never a panic.
func FuzzDecodeResult(f *testing.F) {
	f.Add([]byte(`{"version":1,"job":"invoice","ok":true,"result":{}}`))
	f.Add([]byte(`{"version":1,"job":"invoice","ok":false,"error":{"code":"unreadable","message":"x"}}`))
	f.Add([]byte(`{"approved":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _, _ = DecodeEnvelope(b)
		DecodeResult(b)
	})
}
