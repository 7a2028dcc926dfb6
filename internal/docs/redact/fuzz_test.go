package redact

import "testing"

// FuzzParsePolicy: a redaction policy of any content parses or is refused.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte("types:\n  PERSON: {enabled: true, operator: hash, threshold: 0.6}\n  IP_ADDRESS: {enabled: false}\n"))
	f.Add([]byte("types: {NOPE: {operator: explode}}"))
	f.Fuzz(func(t *testing.T, b []byte) { ParsePolicy("fuzz.yaml", b) })
}
