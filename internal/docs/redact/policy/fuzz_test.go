package policy

import "testing"

// FuzzParse: a redaction policy of any content parses or is refused.
func FuzzParse(f *testing.F) {
	f.Add([]byte("version: 1\ntypes:\n  PERSON: {enabled: true, operator: hash, threshold: 0.6}\n  IP_ADDRESS: {enabled: false}\n"))
	f.Add([]byte("types: {NOPE: {operator: explode}}"))
	f.Fuzz(func(t *testing.T, b []byte) { Parse("fuzz.yaml", b) })
}
