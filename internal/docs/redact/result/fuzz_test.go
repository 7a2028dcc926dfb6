package result

import "testing"

// FuzzDecodeBytes: a redaction result of any content is decoded strictly
// or refused, never a panic.
func FuzzDecodeBytes(f *testing.F) {
	f.Add([]byte(`{"findings":[]}`))
	f.Add([]byte(`{"findings":[{"type":"US_SSN","start":-1,"end":3}]}`))
	f.Fuzz(func(t *testing.T, b []byte) { DecodeBytes(b) })
}
