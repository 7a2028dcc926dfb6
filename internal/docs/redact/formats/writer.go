package formats

import (
	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/analyzer"
	"github.com/airlock-dev/airlock/internal/docs/redact/operator"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Finding is one redacted span (see result.Finding).
type Finding = result.Finding

// span is a candidate span in byte offsets (see recognizer.Span).
type span = analyzer.Span

// Limits bound what one job reads. Going over one is a too_large error;
// the redacted output itself is never truncated.
type Limits struct {
	MaxTextBytes  int // text and CSV input
	MaxJSONBytes  int
	MaxJSONDepth  int
	MaxJSONValues int // strings, numbers, literals, objects and arrays
	MaxCSVFields  int // fields in one record
	MaxFindings   int // findings listed in the result (redaction is never capped)
}

// DefaultLimits fit the redaction template's 512 MiB guest and its time
// limit: text is analysed in bounded 64 KiB windows (memory stays near
// twice the input), at roughly 0.1 to 1.5 s per MiB depending on how
// dense the numbers and addresses are, so 32 MiB is the most a job takes
// on; JSON is parsed whole, so it gets less.
func DefaultLimits() Limits {
	return Limits{
		MaxTextBytes:  32 << 20,
		MaxJSONBytes:  16 << 20,
		MaxJSONDepth:  64,
		MaxJSONValues: 1_000_000,
		MaxCSVFields:  10_000,
		MaxFindings:   100_000,
	}
}

// Writer redacts text, JSON and CSV documents: the analyzer finds, the
// operator replaces, the writer keeps everything else as it was.
type Writer struct {
	an  *analyzer.Analyzer
	op  *operator.Operator
	lim Limits
}

// New returns a writer (lim zero = DefaultLimits).
func New(an *analyzer.Analyzer, op *operator.Operator, lim Limits) *Writer {
	if lim == (Limits{}) {
		lim = DefaultLimits()
	}
	return &Writer{an: an, op: op, lim: lim}
}

// Output is a redacted document.
type Output struct {
	Data      []byte
	Findings  []Finding // capped at Limits.MaxFindings; see Truncated
	Truncated bool
}

// Text redacts a plain-text document.
func (r *Writer) Text(in []byte) (*Output, error) {
	if len(in) > r.lim.MaxTextBytes {
		return nil, docs.Errorf(docs.CodeTooLarge, "text input is %d bytes, over the %d limit", len(in), r.lim.MaxTextBytes)
	}
	text, enc, err := decodeText(in)
	if err != nil {
		return nil, err
	}
	ed := newEditor(text, r.op)
	for _, s := range r.an.Spans(text) {
		ed.redact(s, s.Start, s.End)
	}
	out, findings := ed.finish()
	return r.output(encodeText(out, enc), findings), nil
}

func (r *Writer) output(data []byte, f []Finding) *Output {
	o := &Output{Data: data, Findings: f}
	if r.lim.MaxFindings > 0 && len(f) > r.lim.MaxFindings {
		o.Findings, o.Truncated = f[:r.lim.MaxFindings], true
	}
	return o
}
