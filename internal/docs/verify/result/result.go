// Package result is the verifier's result format, the part of the
// verifier the host imports: standard library only, strict decoding.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode"
)

// Verdicts.
const (
	Clean      = "clean"
	Suspicious = "suspicious"
)

// Limits on a decoded report.
const (
	MaxBytes    = 8 << 20
	MaxFindings = 50000
	MaxReasons  = 200
	MaxCanaries = 10000
)

// Finding is something that still looks like personal data: a type, a
// code-point range of the checked text (of its page's text for pages) and
// the rule that fired. Never the value.
type Finding struct {
	Type  string `json:"type"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Page  int    `json:"page,omitempty"`
	Rule  string `json:"rule"`
}

// Report is the verifier's verdict on one document.
type Report struct {
	Version  int       `json:"version"`
	Verdict  string    `json:"verdict"`
	Reasons  []string  `json:"reasons"` // "US_SSN x2 (ssn-structure)"; empty when clean
	Findings []Finding `json:"findings"`
	// Canaries are the positions, in the list the verifier was given, of
	// canary strings found in the document in any common rendering. Any
	// makes the verdict suspicious.
	Canaries []int `json:"canaries,omitempty"`
}

// Version of the format.
const Version = 1

// Decode reads a report strictly: size-limited, no unknown fields, no
// trailing data, consistent verdict.
func Decode(r io.Reader) (*Report, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("report over %d bytes", MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode report: trailing data")
	}
	return &rep, rep.Validate()
}

// Validate checks ranges and that the verdict matches the findings.
func (r *Report) Validate() error {
	if r.Version != Version {
		return fmt.Errorf("report version %d, want %d", r.Version, Version)
	}
	switch {
	case r.Verdict == Clean && (len(r.Findings) > 0 || len(r.Reasons) > 0 || len(r.Canaries) > 0):
		return errors.New("a clean report has findings")
	case r.Verdict == Suspicious && len(r.Reasons) == 0:
		return errors.New("a suspicious report gives no reason")
	case r.Verdict != Clean && r.Verdict != Suspicious:
		return fmt.Errorf("unknown verdict %q", r.Verdict)
	}
	if len(r.Findings) > MaxFindings || len(r.Reasons) > MaxReasons || len(r.Canaries) > MaxCanaries {
		return errors.New("too many findings or reasons")
	}
	for i, f := range r.Findings {
		if f.Type == "" || len(f.Type) > 32 || f.Rule == "" || len(f.Rule) > 64 || f.Start < 0 || f.End < f.Start || f.Page < 0 {
			return fmt.Errorf("finding %d is malformed", i)
		}
	}
	for _, c := range r.Canaries {
		if c < 0 || c >= MaxCanaries {
			return errors.New("canary index out of range")
		}
	}
	for _, s := range r.Reasons {
		if len(s) > 200 {
			return errors.New("reason too long")
		}
	}
	return nil
}

// MinCanaryLen is the shortest canary (letters and digits) accepted:
// shorter ones would match by chance.
const MinCanaryLen = 4

// CheckCanaries validates a canary list before any sandbox is made: at
// most MaxCanaries, each with at least MinCanaryLen letters and digits.
func CheckCanaries(canaries []string) error {
	if len(canaries) > MaxCanaries {
		return fmt.Errorf("%d canaries, at most %d", len(canaries), MaxCanaries)
	}
	for i, c := range canaries {
		n := 0
		for _, r := range c {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
		}
		if n < MinCanaryLen {
			return fmt.Errorf("canary %d has fewer than %d letters and digits", i, MinCanaryLen)
		}
	}
	return nil
}
