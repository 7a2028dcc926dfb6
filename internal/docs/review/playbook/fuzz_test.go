package playbook

import "testing"

// FuzzParsePlaybook: a playbook of any content parses or is refused with
// an error, never a panic.
func FuzzParsePlaybook(f *testing.F) {
	f.Add([]byte("name: p\nversion: \"1\"\nclauses:\n  governing_law:\n    title: Governing Law\n    standard_text: This Agreement is governed by the laws of Delaware.\n"))
	f.Add([]byte(`{"name":"p","clauses":{"x":{"title":"X","standard_text":"y","threshold":2}}}`))
	f.Add([]byte("clauses: [1, 2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParsePlaybook("fuzz.yaml", b)
	})
}
