package redact

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// TestResultRoundTrip: a real redaction's result encodes, decodes
// strictly, and carries no original value.
func TestResultRoundTrip(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := "Grace Kim, SSN 219-45-6789, grace@example.com"
	out, err := r.Text([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.Encode(NewResult("text", "redacted.txt", "text", out.Data, out.Findings, out.Truncated, map[string]int{"analyse": 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"Grace", "219-45", "example.com"} {
		if strings.Contains(string(b), v) {
			t.Fatalf("result carries %q: %s", v, b)
		}
	}
	res, err := result.DecodeBytes(b)
	if err != nil || res.Counts["PERSON"] != 1 || res.Counts["US_SSN"] != 1 || res.Counts["EMAIL"] != 1 {
		t.Fatalf("%v %+v", err, res)
	}
}
