package result

import "testing"

// FuzzDecode: a review result of any content is decoded strictly or
// refused, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"findings":[]}`))
	f.Add([]byte(`{"findings":[{"clause":"x","status":"MATCH","similarity":2}]}`))
	f.Fuzz(func(t *testing.T, b []byte) { Decode(b) })
}
