package redact

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
)

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

// Options configure a Redactor.
type Options struct {
	Policy *policy.Policy // nil = policy.Default()
	// Salt keys the hash operator (HMAC-SHA256). It must be random per
	// job and at least 16 bytes when the policy hashes any type.
	Salt   []byte
	Limits Limits // zero = DefaultLimits
}

// Redactor detects and redacts one job's inputs.
type Redactor struct {
	an  *Analyzer
	op  *operator
	lim Limits
}

// New checks the options and builds a Redactor.
func New(o Options) (*Redactor, error) {
	if o.Policy == nil {
		o.Policy = policy.Default()
	}
	if o.Policy.UsesHash() && len(o.Salt) < 16 {
		return nil, docs.Errorf(docs.CodeInvalidArg, "the policy hashes values but no salt of 16+ bytes was given")
	}
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits()
	}
	an, err := NewAnalyzer(o.Policy)
	if err != nil {
		return nil, fmt.Errorf("load detectors: %w", err)
	}
	return &Redactor{an: an, op: &operator{pol: o.Policy, salt: o.Salt}, lim: o.Limits}, nil
}

// Analyzer returns the redactor's analyzer.
func (r *Redactor) Analyzer() *Analyzer { return r.an }

// Output is a redacted document.
type Output struct {
	Data      []byte
	Findings  []Finding // capped at Limits.MaxFindings; see Truncated
	Truncated bool
}

// encoding is how a text input was encoded, so the output is written the
// same way.
type encoding int

const (
	encUTF8 encoding = iota
	encUTF16LE
	encUTF16BE
)

// decodeText accepts UTF-8 (with or without BOM) and UTF-16 with a BOM.
// The BOM stays in the text as U+FEFF (one code point, so offsets count
// it) and is written back. Invalid UTF-8, unpaired surrogates and NUL
// bytes in UTF-8 are unreadable: nothing is passed through undecoded.
func decodeText(in []byte) (string, encoding, error) {
	switch {
	case len(in) >= 2 && in[0] == 0xFF && in[1] == 0xFE:
		s, err := decodeUTF16(in, false)
		return s, encUTF16LE, err
	case len(in) >= 2 && in[0] == 0xFE && in[1] == 0xFF:
		s, err := decodeUTF16(in, true)
		return s, encUTF16BE, err
	}
	if !utf8.Valid(in) {
		return "", 0, docs.Errorf(docs.CodeUnreadable, "input is not valid UTF-8 (first bad byte at offset %d)", firstInvalid(in))
	}
	if i := strings.IndexByte(string(in[:min(len(in), 1<<20)]), 0); i >= 0 {
		return "", 0, docs.Errorf(docs.CodeUnreadable, "input has a NUL byte at offset %d: binary, not text", i)
	}
	return string(in), encUTF8, nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func decodeUTF16(in []byte, be bool) (string, error) {
	if len(in)%2 != 0 {
		return "", docs.Errorf(docs.CodeUnreadable, "UTF-16 input has an odd number of bytes")
	}
	u := make([]uint16, len(in)/2)
	for i := range u {
		a, b := uint16(in[2*i]), uint16(in[2*i+1])
		if be {
			u[i] = a<<8 | b
		} else {
			u[i] = b<<8 | a
		}
	}
	for i := 0; i < len(u); i++ {
		switch {
		case utf16.IsSurrogate(rune(u[i])) && u[i] < 0xDC00 && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] <= 0xDFFF:
			i++
		case utf16.IsSurrogate(rune(u[i])):
			return "", docs.Errorf(docs.CodeUnreadable, "UTF-16 input has an unpaired surrogate at offset %d", 2*i)
		case u[i] == 0:
			return "", docs.Errorf(docs.CodeUnreadable, "UTF-16 input has a NUL at offset %d", 2*i)
		}
	}
	return string(utf16.Decode(u)), nil
}

func encodeText(s string, enc encoding) []byte {
	if enc == encUTF8 {
		return []byte(s)
	}
	u := utf16.Encode([]rune(s))
	out := make([]byte, 2*len(u))
	for i, c := range u {
		if enc == encUTF16BE {
			out[2*i], out[2*i+1] = byte(c>>8), byte(c)
		} else {
			out[2*i], out[2*i+1] = byte(c), byte(c>>8)
		}
	}
	return out
}

// Text redacts a plain-text document.
func (r *Redactor) Text(in []byte) (*Output, error) {
	if len(in) > r.lim.MaxTextBytes {
		return nil, docs.Errorf(docs.CodeTooLarge, "text input is %d bytes, over the %d limit", len(in), r.lim.MaxTextBytes)
	}
	text, enc, err := decodeText(in)
	if err != nil {
		return nil, err
	}
	ed := newEditor(text, r.op)
	for _, s := range r.an.spans(text) {
		ed.redact(s, s.start, s.end)
	}
	out, findings := ed.finish()
	return r.output(encodeText(out, enc), findings), nil
}

func (r *Redactor) output(data []byte, f []Finding) *Output {
	o := &Output{Data: data, Findings: f}
	if r.lim.MaxFindings > 0 && len(f) > r.lim.MaxFindings {
		o.Findings, o.Truncated = f[:r.lim.MaxFindings], true
	}
	return o
}

// editor builds a redacted copy of a source text from rewrites of source
// ranges, and the findings (source ranges) in code points.
type editor struct {
	src      string
	op       *operator
	rewrites []rewrite
	found    []rawFinding
}

type rewrite struct {
	start, end int
	repl       string
}

type rawFinding struct {
	s          span
	start, end int
	hash       string
}

func newEditor(src string, op *operator) *editor { return &editor{src: src, op: op} }

// redact replaces source [start, end) with the operator's output for s.
func (e *editor) redact(s span, start, end int) {
	repl, hash := e.op.apply(s.typ, e.src[start:end])
	e.rewrite(start, end, repl)
	e.find(s, start, end, hash)
}

func (e *editor) rewrite(start, end int, repl string) {
	e.rewrites = append(e.rewrites, rewrite{start, end, repl})
}

func (e *editor) find(s span, start, end int, hash string) {
	e.found = append(e.found, rawFinding{s, start, end, hash})
}

// finish applies the rewrites in source order. They never overlap by
// construction; if two ever did, the later one's source is skipped from
// where the earlier ended (widening, never leaving text unredacted).
func (e *editor) finish() (string, []Finding) {
	sort.SliceStable(e.rewrites, func(i, j int) bool { return e.rewrites[i].start < e.rewrites[j].start })
	var b strings.Builder
	b.Grow(len(e.src))
	done := 0
	for _, rw := range e.rewrites {
		b.WriteString(e.src[done:max(done, rw.start)])
		b.WriteString(rw.repl)
		done = max(done, rw.end)
	}
	b.WriteString(e.src[done:])
	sort.SliceStable(e.found, func(i, j int) bool { return e.found[i].start < e.found[j].start })
	conv := newCPConverter(e.src)
	out := make([]Finding, 0, len(e.found))
	for _, f := range e.found {
		out = append(out, Finding{Type: string(f.s.typ), Start: conv.at(f.start), End: conv.at(f.end),
			Detector: f.s.detector, Score: round2(f.s.score), Hash: f.hash})
	}
	return b.String(), out
}
