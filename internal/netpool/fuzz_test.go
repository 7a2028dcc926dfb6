package netpool

import (
	"encoding/json"
	"testing"
)

// FuzzPolicy: any JSON policy either fails validation or compiles into
// rules whose every CIDR and domain rule is well-formed.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte(`{"default":"deny","allow":[{"name":"dms","cidr":"10.20.0.7/32","ports":[443],"protocol":"tcp"},{"name":"c","domain":"*.courts.example"}]}`))
	f.Add([]byte(`{"default":"allow"}`))
	f.Add([]byte(`{"default":"deny","allow":[{"name":"x","cidr":"0.0.0.0/0","domain":"a.b"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Policy
		if json.Unmarshal(b, &p) != nil {
			return
		}
		rules, err := p.compile()
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.domain == "" && !r.dst.IsValid() {
				t.Fatalf("compiled rule %q has neither a domain nor a destination", r.name)
			}
		}
	})
}
