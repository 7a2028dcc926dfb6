package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func valid() *Result {
	r := &Result{Version: Version, InputFormat: "pdf",
		Output: Output{Path: "redacted.pdf", Format: "pdf", Bytes: 1234, SHA256: strings.Repeat("ab", 32)},
		Findings: []Finding{{Type: "US_SSN", Start: 3, End: 14, Page: 1, Detector: "ssn/dashed", Score: 0.85,
			Boxes: []Box{{XMin: 1, YMin: 2, XMax: 3, YMax: 4}}}},
		TimingsMS: map[string]int{"analyse": 12}}
	r.Count()
	return r
}

func TestRoundTrip(t *testing.T) {
	b, err := Encode(valid())
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeBytes(b)
	if err != nil || r.Counts["US_SSN"] != 1 || r.Findings[0].Boxes[0].YMax != 4 {
		t.Fatalf("%v %+v", err, r)
	}
}

func TestDecodeRejects(t *testing.T) {
	enc := func(mut func(*Result)) string {
		r := valid()
		mut(r)
		b, err := jsonMarshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := map[string]string{
		"unknown field":    strings.Replace(enc(func(*Result) {}), `"version":1`, `"version":1,"value":"123-45-6789"`, 1),
		"trailing data":    enc(func(*Result) {}) + "{}",
		"version":          enc(func(r *Result) { r.Version = 2 }),
		"unknown type":     enc(func(r *Result) { r.Findings[0].Type = "SECRET"; r.Count() }),
		"bad span":         enc(func(r *Result) { r.Findings[0].End = 1 }),
		"score range":      enc(func(r *Result) { r.Findings[0].Score = 1.5 }),
		"counts mismatch":  enc(func(r *Result) { r.Counts["US_SSN"] = 2 }),
		"absolute path":    enc(func(r *Result) { r.Output.Path = "/etc/passwd" }),
		"escaping path":    enc(func(r *Result) { r.Output.Path = "../x" }),
		"bad digest":       enc(func(r *Result) { r.Output.SHA256 = "xyz" }),
		"hash not hex":     enc(func(r *Result) { r.Findings[0].Hash = "Grace Kim" }),
		"unknown format":   enc(func(r *Result) { r.InputFormat = "docx" }),
		"inverted box":     enc(func(r *Result) { r.Findings[0].Boxes[0].XMin = 10 }),
		"not json":         "{",
		"oversize string":  `{"version":1,"input_format":"` + strings.Repeat("x", MaxResultBytes) + `"}`,
		"negative size":    enc(func(r *Result) { r.Output.Bytes = -1 }),
		"empty detector":   enc(func(r *Result) { r.Findings[0].Detector = "" }),
		"negative timing":  enc(func(r *Result) { r.TimingsMS["x"] = -1 }),
		"bad policy sha":   enc(func(r *Result) { r.PolicySHA = "abc" }),
		"too many boxes":   enc(func(r *Result) { r.Findings[0].Boxes = make([]Box, MaxBoxes+1) }),
		"negative page":    enc(func(r *Result) { r.Findings[0].Page = -1 }),
		"missing counts":   enc(func(r *Result) { r.Counts = nil }),
		"backslash path":   enc(func(r *Result) { r.Output.Path = `a\\b` }),
		"unclean path":     enc(func(r *Result) { r.Output.Path = "a//b" }),
		"empty path":       enc(func(r *Result) { r.Output.Path = "" }),
		"negative start":   enc(func(r *Result) { r.Findings[0].Start = -1 }),
		"long hash":        enc(func(r *Result) { r.Findings[0].Hash = strings.Repeat("a", 65) }),
		"output format":    enc(func(r *Result) { r.Output.Format = "exe" }),
		"huge box coords":  enc(func(r *Result) { r.Findings[0].Boxes[0].XMax = 1e9 }),
		"long timing name": enc(func(r *Result) { r.TimingsMS[strings.Repeat("k", 40)] = 1 }),
	}
	for name, s := range cases {
		if _, err := Decode(strings.NewReader(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// jsonMarshal encodes without Validate, to build invalid results.
func jsonMarshal(r *Result) ([]byte, error) { return json.Marshal(r) }
