package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Statuses of a finding: the closed set the host accepts.
const (
	StatusMatch     = "MATCH"     // the clause is the standard text, up to trivial differences
	StatusDeviation = "DEVIATION" // found, but differs (NumericChange says whether a key term did)
	StatusMissing   = "MISSING"   // not found by heading nor by content
)

// Severities a playbook may give a clause.
const (
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// How a clause was located.
const (
	LocatedByHeading = "heading" // a section heading matched the clause title or a synonym
	LocatedByContent = "content" // no heading matched; the most similar text above a floor
)

// Redline ops, from the standard text to the contract's text.
const (
	OpEqual  = "equal"
	OpInsert = "insert" // in the contract, not in the standard
	OpDelete = "delete" // in the standard, not in the contract
)

// Size limits. The guest bounds what it writes to these and the host
// refuses anything larger, so a hostile document cannot make the result
// (or the reports rendered from it) arbitrarily big.
const (
	MaxResultBytes     = 4 << 20
	MaxFindings        = 100
	MaxNameBytes       = 200 // playbook name and version
	MaxClauseKeyBytes  = 64
	MaxTitleBytes      = 200
	MaxHeadingBytes    = 300
	MaxTextBytes       = 6000 // located clause text
	MaxGuidanceBytes   = 2000
	MaxValues          = 32 // entries in expected_values and in found_values
	MaxValueNameBytes  = 64
	MaxValueBytes      = 200
	MaxRedlineSegments = 1000
	MaxRedlineBytes    = 16000 // sum of segment texts
	MaxPages           = 200
	MaxPageNumber      = 100000
)

// Result is what the review job produces for one document.
type Result struct {
	Playbook PlaybookRef `json:"playbook"`
	Findings []Finding   `json:"findings"`
	Summary  Summary     `json:"summary"`

	// The contract's facts (facts.go); absent from older guests' results.
	Parties      []Party       `json:"parties,omitempty"`
	KeyDates     KeyDates      `json:"key_dates"`
	DefinedTerms []DefinedTerm `json:"defined_terms,omitempty"`
	Obligations  []Obligation  `json:"obligations,omitempty"`
}

// PlaybookRef names the playbook the document was reviewed against.
type PlaybookRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Summary counts findings by status. NumericChanges counts the
// DEVIATION findings with NumericChange set (they are also in Deviation).
type Summary struct {
	Clauses        int `json:"clauses"`
	Match          int `json:"match"`
	Deviation      int `json:"deviation"`
	NumericChanges int `json:"numeric_changes"`
	Missing        int `json:"missing"`
}

// Finding is the review of one playbook clause.
type Finding struct {
	Clause string `json:"clause"` // playbook key
	Title  string `json:"title"`  // playbook title
	Status string `json:"status"`
	// Similarity is difflib's ratio over normalised word tokens between
	// the standard text and the located text (0 when MISSING).
	Similarity    float64 `json:"similarity"`
	NumericChange bool    `json:"numeric_change"`
	LocatedBy     string  `json:"located_by"` // "" when MISSING
	Heading       string  `json:"heading"`    // as written in the document; "" if none
	Text          string  `json:"text"`       // the located text, bounded
	// ExpectedValues are the key terms of the standard text (playbook
	// key_terms names, or kind_n for terms found in the standard text),
	// as written there; FoundValues are the aligned terms in the document.
	ExpectedValues map[string]string `json:"expected_values"`
	FoundValues    map[string]string `json:"found_values"`
	Redline        []Segment         `json:"redline"`
	// Truncated says Text or Redline was cut to the size limits.
	Truncated bool   `json:"truncated"`
	Pages     []int  `json:"pages"`
	Severity  string `json:"severity"`
	Guidance  string `json:"guidance"`
}

// Segment is one run of a word-level redline.
type Segment struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Decode parses and validates a Result written by a guest: unknown
// fields, trailing data, oversize input and any inconsistency are errors.
func Decode(data []byte) (*Result, error) {
	if len(data) > MaxResultBytes {
		return nil, fmt.Errorf("review result: %d bytes, limit %d", len(data), MaxResultBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("review result: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("review result: trailing data after the JSON value")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

var clauseKeyRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate checks limits, closed sets and consistency between fields.
func (r *Result) Validate() error {
	if err := checkString("playbook.name", r.Playbook.Name, MaxNameBytes); err != nil {
		return err
	}
	if err := checkString("playbook.version", r.Playbook.Version, MaxNameBytes); err != nil {
		return err
	}
	if len(r.Findings) > MaxFindings {
		return fmt.Errorf("review result: %d findings, limit %d", len(r.Findings), MaxFindings)
	}
	seen := make(map[string]bool, len(r.Findings))
	var sum Summary
	for i := range r.Findings {
		f := &r.Findings[i]
		if err := f.Validate(); err != nil {
			return fmt.Errorf("review result: findings[%d]: %w", i, err)
		}
		if seen[f.Clause] {
			return fmt.Errorf("review result: findings[%d]: clause %q repeated", i, f.Clause)
		}
		seen[f.Clause] = true
		sum.add(f)
	}
	if sum != r.Summary {
		return fmt.Errorf("review result: summary %+v does not match the findings %+v", r.Summary, sum)
	}
	if err := r.validateFacts(); err != nil {
		return fmt.Errorf("review result: %w", err)
	}
	return nil
}

func (s *Summary) add(f *Finding) {
	s.Clauses++
	switch f.Status {
	case StatusMatch:
		s.Match++
	case StatusDeviation:
		s.Deviation++
		if f.NumericChange {
			s.NumericChanges++
		}
	case StatusMissing:
		s.Missing++
	}
}

// Summarize counts findings; the guest uses it so the summary is
// consistent by construction.
func Summarize(fs []Finding) Summary {
	var s Summary
	for i := range fs {
		s.add(&fs[i])
	}
	return s
}

// Validate checks one finding on its own.
func (f *Finding) Validate() error {
	if len(f.Clause) > MaxClauseKeyBytes || !clauseKeyRE.MatchString(f.Clause) {
		return fmt.Errorf("clause: %q is not a clause key", truncate(f.Clause, 40))
	}
	for _, c := range []struct {
		field, v string
		limit    int
	}{
		{"title", f.Title, MaxTitleBytes},
		{"heading", f.Heading, MaxHeadingBytes},
		{"text", f.Text, MaxTextBytes},
		{"guidance", f.Guidance, MaxGuidanceBytes},
	} {
		if err := checkString(c.field, c.v, c.limit); err != nil {
			return err
		}
	}
	if !oneOf(f.Severity, SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical) {
		return fmt.Errorf("severity: %q is not low, medium, high or critical", truncate(f.Severity, 20))
	}
	if math.IsNaN(f.Similarity) || f.Similarity < 0 || f.Similarity > 1 {
		return fmt.Errorf("similarity: %v is not between 0 and 1", f.Similarity)
	}
	if err := checkValues("expected_values", f.ExpectedValues); err != nil {
		return err
	}
	if err := checkValues("found_values", f.FoundValues); err != nil {
		return err
	}
	if err := checkRedline(f.Redline); err != nil {
		return err
	}
	if err := checkPages(f.Pages); err != nil {
		return err
	}
	return f.checkStatus()
}

// checkStatus enforces what each status implies for the other fields.
func (f *Finding) checkStatus() error {
	switch f.Status {
	case StatusMissing:
		if f.NumericChange || f.Similarity != 0 || f.LocatedBy != "" || f.Heading != "" || f.Text != "" ||
			len(f.FoundValues) > 0 || len(f.Redline) > 0 || len(f.Pages) > 0 || f.Truncated {
			return errors.New("status MISSING with located fields set")
		}
		return nil
	case StatusMatch:
		if f.NumericChange {
			return errors.New("numeric_change is only allowed on DEVIATION")
		}
	case StatusDeviation:
	default:
		return fmt.Errorf("status: %q is not MATCH, DEVIATION or MISSING", truncate(f.Status, 20))
	}
	if !oneOf(f.LocatedBy, LocatedByHeading, LocatedByContent) {
		return fmt.Errorf("located_by: %q is not heading or content", truncate(f.LocatedBy, 20))
	}
	if strings.TrimSpace(f.Text) == "" {
		return fmt.Errorf("status %s without located text", f.Status)
	}
	return nil
}

func checkValues(field string, m map[string]string) error {
	if len(m) > MaxValues {
		return fmt.Errorf("%s: %d entries, limit %d", field, len(m), MaxValues)
	}
	for k, v := range m {
		if k == "" || len(k) > MaxValueNameBytes || !clauseKeyRE.MatchString(k) {
			return fmt.Errorf("%s: %q is not a term name", field, truncate(k, 40))
		}
		if err := checkString(field+"."+k, v, MaxValueBytes); err != nil {
			return err
		}
	}
	return nil
}

func checkRedline(segs []Segment) error {
	if len(segs) > MaxRedlineSegments {
		return fmt.Errorf("redline: %d segments, limit %d", len(segs), MaxRedlineSegments)
	}
	total := 0
	for i, s := range segs {
		if !oneOf(s.Op, OpEqual, OpInsert, OpDelete) {
			return fmt.Errorf("redline[%d]: op %q is not equal, insert or delete", i, truncate(s.Op, 20))
		}
		if !utf8.ValidString(s.Text) {
			return fmt.Errorf("redline[%d]: invalid UTF-8", i)
		}
		total += len(s.Text)
	}
	if total > MaxRedlineBytes {
		return fmt.Errorf("redline: %d bytes of text, limit %d", total, MaxRedlineBytes)
	}
	return nil
}

func checkPages(pages []int) error {
	if len(pages) > MaxPages {
		return fmt.Errorf("pages: %d entries, limit %d", len(pages), MaxPages)
	}
	prev := 0
	for _, p := range pages {
		if p <= prev || p > MaxPageNumber {
			return fmt.Errorf("pages: %v is not ascending page numbers from 1", truncateInts(pages))
		}
		prev = p
	}
	return nil
}

func checkString(field, v string, limit int) error {
	if len(v) > limit {
		return fmt.Errorf("%s: %d bytes, limit %d", field, len(v), limit)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s: invalid UTF-8", field)
	}
	return nil
}

func oneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// truncate bounds what an error message quotes from untrusted input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func truncateInts(v []int) []int {
	if len(v) > 8 {
		return v[:8]
	}
	return v
}
