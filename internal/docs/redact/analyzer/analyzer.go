package analyzer

import (
	"strings"
	"sync"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/address"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/ocr"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/pattern"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/person"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Span is a candidate span (byte offsets).
type Span = recognizer.Span

// Finding is a detected span in code points (see result.Finding).
type Finding = result.Finding

// kinds are the recognizer kinds the registry may name.
var kinds = map[string]recognizer.Factory{
	"pattern":   pattern.New,
	"address":   address.New,
	"person":    person.New,
	"ocr_label": ocr.NewLabel,
	"ocr_email": ocr.NewEmail,
}

// loadRegistry loads the registry once: it is immutable afterwards and
// shared by every analyzer (and job) in the process.
var loadRegistry = sync.OnceValues(func() (*recognizer.Registry, error) { return recognizer.Load(kinds) })

// Analyzer finds entities in text under a policy's enabled types and
// thresholds. It is immutable and safe for concurrent use.
type Analyzer struct {
	reg *recognizer.Registry
	pol *policy.Policy
}

// New returns an analyzer for the policy (nil = policy.Default()).
func New(pol *policy.Policy) (*Analyzer, error) {
	reg, err := loadRegistry()
	if err != nil {
		return nil, err
	}
	if pol == nil {
		pol = policy.Default()
	}
	return &Analyzer{reg: reg, pol: pol}, nil
}

// Policy returns the analyzer's policy.
func (a *Analyzer) Policy() *policy.Policy { return a.pol }

// Analyze returns the findings in text, with code-point offsets, in text
// order, without overlaps. Scores are after context; only findings at or
// above their type's threshold, of enabled types, are returned.
func (a *Analyzer) Analyze(text string) []Finding {
	return ToFindings(text, a.Spans(text))
}

// AnalyzeField analyses a value that sits under a field name (a JSON key,
// a CSV header cell): the name is context, as if "name: value" were
// written, and offsets are into value.
func (a *Analyzer) AnalyzeField(field, value string) []Finding {
	return ToFindings(value, a.FieldSpans(field, value))
}

// AnalyzeOCR analyses an OCR page's text (see OCRSpans).
func (a *Analyzer) AnalyzeOCR(text string) []Finding {
	return ToFindings(text, a.OCRSpans(text))
}

// FieldSpans analyses "field: value" and keeps what lies in value.
func (a *Analyzer) FieldSpans(field, value string) []Span {
	return a.FieldSpansWith(field, value, a.Spans)
}

// FieldSpansWith is FieldSpans with another analysis of the joined text
// (an OCR page's).
func (a *Analyzer) FieldSpansWith(field, value string, spans func(string) []Span) []Span {
	field = humanizeKey(field)
	if field == "" {
		return spans(value)
	}
	prefix := field + ": "
	var out []Span
	for _, s := range spans(prefix + value) {
		if s.Start < len(prefix) {
			if s.End <= len(prefix) {
				continue
			}
			s.Start = len(prefix)
		}
		s.Start -= len(prefix)
		s.End -= len(prefix)
		out = append(out, s)
	}
	return out
}

// humanizeKey turns "date_of_birth", "dateOfBirth" and "Date-Of-Birth"
// into "date of birth" so context phrases match field names.
func humanizeKey(k string) string {
	var b strings.Builder
	prevLower := false
	for _, r := range k {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/':
			b.WriteByte(' ')
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			b.WriteByte(' ')
		}
		prevLower = r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		b.WriteRune(r)
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 64 {
		return ""
	}
	return s
}

// RecordTypes returns, for each field of a structured record (the keys
// of a JSON object under parent, or a CSV header with parent ""), the
// entity type its whole value is part of, or "" (see
// recognizer.Records). Types the policy disables are "".
func (a *Analyzer) RecordTypes(parent string, keys []string) []policy.Type {
	out := a.reg.Records.Types(parent, keys)
	for i, t := range out {
		if t != "" && !a.pol.Enabled(t) {
			out[i] = ""
		}
	}
	return out
}

// OCRSpans analyses an OCR page's text as it reads and with look-alikes
// taken as digits, and runs the OCR-only recognizers (labels vouching
// for misread values, e-mail addresses whose "@" OCR misread).
func (a *Analyzer) OCRSpans(text string) []Span {
	all := a.Spans(text)
	if fixed := ocr.Digits(text); fixed != text {
		all = append(all, a.Spans(fixed)...)
	}
	all = append(all, a.run(a.reg.OCR, nlp.NewWindow(text, a.reg.Labels))...)
	return a.Resolve(all)
}

// LabelLine reports whether a line (or cell) is short and context or
// name labels cover most of it, and whether such a label names an entity
// type ("SSN", "Phone", not "Name" or "Employee").
func (a *Analyzer) LabelLine(s string) (is, typed bool) {
	if len(s) > 40 || strings.ContainsAny(s, "0123456789@") {
		return false, false
	}
	toks := nlp.Tokenize(s)
	labels := nlp.FindLabels(s, toks, a.reg.Labels)
	n := 0
	for _, l := range labels {
		// Cues and openers ("transfer from", "dear") head no column.
		if l.HasContextType() || l.Has(nlp.PersonLabel) || l.Has(nlp.PersonRole) || l.Has(nlp.NonPerson) {
			n += l.EndTok - l.FirstTok
			typed = typed || l.HasContextType()
		}
	}
	is = len(toks) > 0 && n*2 >= len(toks)
	return is, is && typed
}

// ToFindings converts byte spans of text to code-point findings.
func ToFindings(text string, spans []Span) []Finding {
	out := make([]Finding, 0, len(spans))
	conv := nlp.NewCPConverter(text)
	for _, s := range spans {
		out = append(out, Finding{Type: string(s.Type), Start: conv.At(s.Start), End: conv.At(s.End),
			Detector: s.Detector, Score: Round2(s.Score)})
	}
	return out
}

// Round2 rounds a score to two decimals, as findings carry it.
func Round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }
