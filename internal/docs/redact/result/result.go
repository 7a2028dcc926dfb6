package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Version is the result format's version; Decode refuses others.
const Version = 1

// Limits a decoded result must respect. The guest caps findings at
// MaxFindings (and sets Truncated), so a result over these limits means a
// broken or hostile guest.
const (
	MaxResultBytes = 16 << 20
	MaxFindings    = 100000
	MaxBoxes       = 64
	MaxHashLen     = 64
)

// Types are the entity types a finding may name.
var Types = []string{
	"PERSON", "EMAIL", "PHONE", "US_SSN", "CREDIT_CARD", "IBAN", "IP_ADDRESS",
	"DATE_OF_BIRTH", "STREET_ADDRESS", "US_BANK_ACCOUNT", "US_BANK_ROUTING",
	"US_PASSPORT", "US_DRIVER_LICENSE",
}

// Formats an input or output may have.
var Formats = []string{"text", "json", "csv", "pdf", "png", "jpeg", "tiff"}

// Box is a rectangle in PDF points, origin top left (as extract.Box).
type Box struct {
	XMin float64 `json:"x_min"`
	YMin float64 `json:"y_min"`
	XMax float64 `json:"x_max"`
	YMax float64 `json:"y_max"`
}

// Finding is one redacted span. Start and End are Unicode code-point
// offsets into the decoded input text (a BOM counts as one code point) for
// text, JSON and CSV; for PDFs and images they index the page's extracted
// text (lines joined by "\n") and Boxes are what was painted over. It
// never holds the original value; Hash is a truncated HMAC-SHA256 with the
// job's salt, present only when the policy's operator for the type is
// "hash".
type Finding struct {
	Type     string  `json:"type"`
	Start    int     `json:"start"`
	End      int     `json:"end"`
	Page     int     `json:"page,omitempty"`
	Boxes    []Box   `json:"boxes,omitempty"`
	Detector string  `json:"detector"`
	Score    float64 `json:"score"`
	Hash     string  `json:"hash,omitempty"`
}

// Output describes the redacted file the job wrote.
type Output struct {
	Path   string `json:"path"` // relative to the job's output directory
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Result is the redaction job's own part of the envelope.
type Result struct {
	Version     int            `json:"version"`
	InputFormat string         `json:"input_format"`
	Output      Output         `json:"output"`
	Findings    []Finding      `json:"findings"`
	Counts      map[string]int `json:"counts"`
	Truncated   bool           `json:"truncated"` // findings were capped at MaxFindings
	TimingsMS   map[string]int `json:"timings_ms"`
	PolicySHA   string         `json:"policy_sha256,omitempty"`
}

// Count fills r.Counts from r.Findings.
func (r *Result) Count() {
	r.Counts = map[string]int{}
	for _, f := range r.Findings {
		r.Counts[f.Type]++
	}
}

// Encode marshals r after validating it, so the guest cannot write what
// the host would refuse.
func Encode(r *Result) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// Decode reads a result strictly: at most MaxResultBytes, no unknown
// fields, no trailing data, and every value in range.
func Decode(rd io.Reader) (*Result, error) {
	b, err := io.ReadAll(io.LimitReader(rd, MaxResultBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("result over %d bytes", MaxResultBytes)
	}
	return DecodeBytes(b)
}

// DecodeBytes is Decode on a byte slice.
func DecodeBytes(b []byte) (*Result, error) {
	if len(b) > MaxResultBytes {
		return nil, fmt.Errorf("result over %d bytes", MaxResultBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode result: trailing data after the object")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks every field's range and the counts' consistency.
func (r *Result) Validate() error {
	if r.Version != Version {
		return fmt.Errorf("result version %d, want %d", r.Version, Version)
	}
	if !contains(Formats, r.InputFormat) {
		return fmt.Errorf("unknown input format %q", r.InputFormat)
	}
	if err := r.Output.validate(); err != nil {
		return err
	}
	if len(r.Findings) > MaxFindings {
		return fmt.Errorf("%d findings, over %d", len(r.Findings), MaxFindings)
	}
	want := map[string]int{}
	for i, f := range r.Findings {
		if err := f.validate(); err != nil {
			return fmt.Errorf("finding %d: %w", i, err)
		}
		want[f.Type]++
	}
	if len(want) != len(r.Counts) {
		return errors.New("counts do not match findings")
	}
	for t, n := range r.Counts {
		if want[t] != n {
			return fmt.Errorf("count for %s is %d, findings have %d", t, n, want[t])
		}
	}
	for k, v := range r.TimingsMS {
		if k == "" || len(k) > 32 || v < 0 {
			return errors.New("bad timing entry")
		}
	}
	if r.PolicySHA != "" && !isHex(r.PolicySHA, 64) {
		return errors.New("policy_sha256 is not a sha256 hex digest")
	}
	return nil
}

func (o *Output) validate() error {
	if !contains(Formats, o.Format) {
		return fmt.Errorf("unknown output format %q", o.Format)
	}
	p := o.Path
	if p == "" || path.IsAbs(p) || strings.Contains(p, "\\") || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") || len(p) > 255 {
		return fmt.Errorf("output path %q must be a clean relative path", p)
	}
	if o.Bytes < 0 {
		return errors.New("negative output size")
	}
	if !isHex(o.SHA256, 64) {
		return errors.New("output sha256 is not a hex digest")
	}
	return nil
}

func (f *Finding) validate() error {
	if !contains(Types, f.Type) {
		return fmt.Errorf("unknown type %q", f.Type)
	}
	if f.Start < 0 || f.End < f.Start {
		return fmt.Errorf("bad span [%d,%d)", f.Start, f.End)
	}
	if f.Page < 0 || len(f.Boxes) > MaxBoxes {
		return errors.New("bad page or too many boxes")
	}
	for _, b := range f.Boxes {
		if !(b.XMin <= b.XMax && b.YMin <= b.YMax) || b.XMin < -1e5 || b.XMax > 1e5 || b.YMin < -1e5 || b.YMax > 1e5 {
			return errors.New("bad box")
		}
	}
	if f.Detector == "" || len(f.Detector) > 64 {
		return errors.New("bad detector name")
	}
	if f.Score < 0 || f.Score > 1 {
		return fmt.Errorf("score %v out of [0,1]", f.Score)
	}
	if f.Hash != "" && (len(f.Hash) > MaxHashLen || !isHex(f.Hash, len(f.Hash))) {
		return errors.New("hash must be lower-case hex")
	}
	return nil
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func isHex(s string, n int) bool {
	if len(s) != n || n == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
