package template

import "testing"

// FuzzParseSpec: a template spec of any content parses or fails with an
// error, never a panic.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("name: t\nfrom: base\npackages: [curl]\n"))
	f.Add([]byte("name: x\nmemory_mib: -1\nfiles:\n  - {src: a, dst: /etc/a}\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Parse(b, t.TempDir())
	})
}
