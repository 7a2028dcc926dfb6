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
	MaxSentences       = 1000000 // a sentence number in a location
	MaxTermChanges     = MaxValues
)

// Changes of a key term, from the standard's value to the document's.
const (
	ChangeHigher    = "higher"    // the same kind of value, larger
	ChangeLower     = "lower"     // the same kind of value, smaller
	ChangeDifferent = "different" // another value that does not compare (a place, a currency, a unit)
	ChangeGone      = "gone"      // in the standard, not in the clause
	ChangeAdded     = "added"     // in the clause, not in the standard
)

// Verdicts on a change, from the playbook's worse_if for the key term.
const (
	VerdictWorse  = "worse"
	VerdictBetter = "better"
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
	// TermChanges lists, for a numeric_change, each key term that differs
	// (empty otherwise).
	TermChanges []TermChange `json:"term_changes"`
	// Truncated says Text or Redline was cut to the size limits.
	Truncated bool  `json:"truncated"`
	Pages     []int `json:"pages"`
	// Location says where the located text is, so a person can check a
	// finding fast; nil when MISSING.
	Location *Location `json:"location"`
	Severity string    `json:"severity"`
	Guidance string    `json:"guidance"`
}

// Location is where a clause was found: the section it is in (its
// heading as written: "" when it is under none), the page it starts on,
// and which of the section's sentences it is (1-based; counted over the
// whole document when it is under no heading).
type Location struct {
	Section          string `json:"section"`
	Page             int    `json:"page"`
	FirstSentence    int    `json:"first_sentence"`
	LastSentence     int    `json:"last_sentence"`
	SectionSentences int    `json:"section_sentences"`
}

// TermChange is one key term that differs between the standard text and
// the clause. Name is a playbook key_terms name or kind_n; Expected and
// Found are as written ("" for a term gone or added). Verdict is "worse"
// or "better" when the playbook says which way the term is worse
// (worse_if) and the change is higher or lower, else "".
type TermChange struct {
	Name     string `json:"name"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
	Change   string `json:"change"`
	Verdict  string `json:"verdict"`
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
	if err := checkTermChanges(f.TermChanges); err != nil {
		return err
	}
	if f.Location != nil {
		if err := f.Location.validate(); err != nil {
			return err
		}
	}
	return f.checkStatus()
}

func (l *Location) validate() error {
	if err := checkString("location.section", l.Section, MaxHeadingBytes); err != nil {
		return err
	}
	if l.Page < 0 || l.Page > MaxPageNumber {
		return fmt.Errorf("location.page: %d is not a page number", l.Page)
	}
	if l.FirstSentence < 1 || l.LastSentence < l.FirstSentence || l.SectionSentences < l.LastSentence ||
		l.SectionSentences > MaxSentences {
		return fmt.Errorf("location: sentences %d-%d of %d are not a range in the section",
			l.FirstSentence, l.LastSentence, l.SectionSentences)
	}
	return nil
}

func checkTermChanges(cs []TermChange) error {
	if len(cs) > MaxTermChanges {
		return fmt.Errorf("term_changes: %d entries, limit %d", len(cs), MaxTermChanges)
	}
	for i, c := range cs {
		if c.Name == "" || len(c.Name) > MaxValueNameBytes || !clauseKeyRE.MatchString(c.Name) {
			return fmt.Errorf("term_changes[%d]: %q is not a term name", i, truncate(c.Name, 40))
		}
		for _, v := range []struct{ field, s string }{{"expected", c.Expected}, {"found", c.Found}} {
			if err := checkString(fmt.Sprintf("term_changes[%d].%s", i, v.field), v.s, MaxValueBytes); err != nil {
				return err
			}
		}
		if !oneOf(c.Change, ChangeHigher, ChangeLower, ChangeDifferent, ChangeGone, ChangeAdded) {
			return fmt.Errorf("term_changes[%d]: change %q is not higher, lower, different, gone or added", i, truncate(c.Change, 20))
		}
		if c.Verdict != "" && (!oneOf(c.Verdict, VerdictWorse, VerdictBetter) || !oneOf(c.Change, ChangeHigher, ChangeLower)) {
			return fmt.Errorf("term_changes[%d]: verdict %q needs a higher or lower change", i, truncate(c.Verdict, 20))
		}
		if (c.Change == ChangeGone) != (c.Found == "") || (c.Change == ChangeAdded) != (c.Expected == "") {
			return fmt.Errorf("term_changes[%d]: a %s change with expected %q and found %q", i, c.Change,
				truncate(c.Expected, 40), truncate(c.Found, 40))
		}
	}
	return nil
}

// checkStatus enforces what each status implies for the other fields.
func (f *Finding) checkStatus() error {
	switch f.Status {
	case StatusMissing:
		if f.NumericChange || f.Similarity != 0 || f.LocatedBy != "" || f.Heading != "" || f.Text != "" ||
			len(f.FoundValues) > 0 || len(f.Redline) > 0 || len(f.Pages) > 0 || f.Truncated || f.Location != nil {
			return errors.New("status MISSING with located fields set")
		}
		if len(f.TermChanges) > 0 {
			return errors.New("term_changes are only allowed with numeric_change")
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
	if f.Location == nil {
		return fmt.Errorf("status %s without a location", f.Status)
	}
	if len(f.TermChanges) > 0 && !f.NumericChange {
		return errors.New("term_changes are only allowed with numeric_change")
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
