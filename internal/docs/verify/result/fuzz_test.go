package result

import (
	"bytes"
	"testing"
)

// FuzzDecode: a verification report of any content is decoded strictly or
// refused, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"findings":[]}`))
	f.Add([]byte(`{"clean":true,"findings":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) { Decode(bytes.NewReader(b)) })
}
