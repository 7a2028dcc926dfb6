package formats

import (
	"strings"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// CSV redacts a delimited file. The dialect (delimiter among , ; TAB |,
// '"' quoting, CRLF or LF per record, BOM) is detected and kept: only
// redacted fields are rewritten, quoted if they were or now need to be.
// When the first record looks like a header, each header cell is context
// for its column ("SSN", "Name", "Date of Birth").
func (r *Writer) CSV(in []byte) (*Output, error) {
	if len(in) > r.lim.MaxTextBytes {
		return nil, docs.Errorf(docs.CodeTooLarge, "CSV input is %d bytes, over the %d limit", len(in), r.lim.MaxTextBytes)
	}
	text, enc, err := decodeText(in)
	if err != nil {
		return nil, err
	}
	body := 0
	if strings.HasPrefix(text, "\uFEFF") {
		body = len("\uFEFF")
	}
	delim := sniffDelimiter(text[body:])
	cr := &csvReader{text: text, i: body, delim: delim, maxFields: r.lim.MaxCSVFields}
	ed := newEditor(text, r.op)
	var header []string
	var types []policy.Type
	for ri := 0; ; ri++ {
		rec, err := cr.next()
		if err != nil {
			return nil, err
		}
		if rec == nil {
			break
		}
		if ri == 0 && looksLikeHeader(rec) && !cr.done() {
			for _, f := range rec {
				header = append(header, f.val)
			}
			types = r.an.RecordTypes("", header)
		}
		for ci, f := range rec {
			hint, t := "", policy.Type("")
			if ri > 0 && ci < len(header) {
				hint, t = header[ci], types[ci]
			}
			if t != "" && r.csvRecordField(ed, f, t, hint, delim) {
				continue
			}
			r.csvField(ed, f, hint, delim)
		}
	}
	out, findings := ed.finish()
	return r.output(encodeText(out, enc), findings), nil
}

// csvField is one field: source range (quotes included), decoded value,
// and, for quoted fields, the value offsets of quotes that were doubled
// in the source (all that is needed to map value offsets back).
type csvField struct {
	start, end int
	quoted     bool
	val        string
	doubled    []int
}

// src maps a value offset (0..len(val)) to its source offset.
func (f *csvField) src(k int) int {
	if !f.quoted {
		return f.start + k
	}
	extra := 0
	for _, d := range f.doubled {
		if d < k {
			extra++
		}
	}
	return f.start + 1 + k + extra
}

func (r *Writer) csvField(ed *editor, f csvField, hint string, delim byte) {
	if strings.TrimSpace(f.val) == "" {
		return
	}
	spans := r.an.FieldSpans(hint, f.val)
	if len(spans) == 0 {
		return
	}
	var b strings.Builder
	done := 0
	for _, s := range spans {
		repl, hash := r.op.Apply(s.Type, f.val[s.Start:s.End])
		b.WriteString(f.val[done:s.Start])
		b.WriteString(repl)
		done = s.End
		ed.find(s, f.src(s.Start), f.src(s.End), hash)
	}
	b.WriteString(f.val[done:])
	ed.rewrite(f.start, f.end, quoteCSV(b.String(), f.quoted, delim))
}

// csvRecordField redacts a whole field that is part of an entity of
// type t by its column (see analyzer.RecordTypes); it reports false for
// a field with no letter or digit.
func (r *Writer) csvRecordField(ed *editor, f csvField, t policy.Type, hint string, delim byte) bool {
	v := strings.TrimSpace(f.val)
	if !hasAlnum(v) {
		return false
	}
	lo := strings.Index(f.val, v)
	s := span{Start: lo, End: lo + len(v), Type: t, Score: recordScore, Detector: "record/" + recognizer.NormalizeKey(hint)}
	repl, hash := r.op.Apply(t, v)
	ed.find(s, f.src(s.Start), f.src(s.End), hash)
	ed.rewrite(f.start, f.end, quoteCSV(f.val[:lo]+repl+f.val[lo+len(v):], f.quoted, delim))
	return true
}

func quoteCSV(v string, wasQuoted bool, delim byte) string {
	if !wasQuoted && !strings.ContainsAny(v, "\"\r\n"+string(delim)) {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}

// sniffDelimiter picks the candidate that splits the first lines into
// the most fields consistently (quotes respected).
func sniffDelimiter(s string) byte {
	sample := s[:min(len(s), 64<<10)]
	best, bestScore := byte(','), 0
	for _, d := range []byte{',', ';', '\t', '|'} {
		cr := &csvReader{text: sample, delim: d, maxFields: 1 << 16}
		var widths []int
		for len(widths) < 50 {
			rec, err := cr.next()
			if err != nil || rec == nil {
				break
			}
			widths = append(widths, len(rec))
		}
		if len(widths) > 1 && len(sample) < len(s) {
			widths = widths[:len(widths)-1] // the last record may be cut
		}
		if len(widths) == 0 {
			continue
		}
		same := 0
		for _, w := range widths {
			if w == widths[0] {
				same++
			}
		}
		if widths[0] > 1 && same*10 >= len(widths)*8 && widths[0]*same > bestScore {
			best, bestScore = d, widths[0]*same
		}
	}
	return best
}

// csvReader splits text into records of fields (RFC 4180: quoted fields
// may hold delimiters, doubled quotes and line breaks), one record at a
// time so memory does not grow with the file. An unterminated quote is
// unreadable.
type csvReader struct {
	text      string
	i         int
	delim     byte
	maxFields int
	eof       bool
}

func (c *csvReader) done() bool { return c.eof || c.i >= len(c.text) }

// next returns the next record, or nil at the end.
func (c *csvReader) next() ([]csvField, error) {
	if c.done() {
		return nil, nil
	}
	var rec []csvField
	for {
		f, next, err := csvNext(c.text, c.i, c.delim)
		if err != nil {
			return nil, err
		}
		if rec = append(rec, f); len(rec) > c.maxFields {
			return nil, docs.Errorf(docs.CodeTooLarge, "a CSV record has more than %d fields", c.maxFields)
		}
		c.i = next
		if c.i < len(c.text) && c.text[c.i] == c.delim {
			c.i++
			continue
		}
		switch {
		case strings.HasPrefix(c.text[c.i:], "\r\n"):
			c.i += 2
		case c.i < len(c.text):
			c.i++
		default:
			c.eof = true
		}
		return rec, nil
	}
}

// csvNext reads one field starting at i; next is where the delimiter or
// record end is.
func csvNext(text string, i int, delim byte) (csvField, int, error) {
	if i < len(text) && text[i] == '"' {
		f := csvField{start: i, quoted: true}
		var b strings.Builder
		j := i + 1
		for {
			if j >= len(text) {
				return f, 0, docs.Errorf(docs.CodeUnreadable, "CSV quoted field starting at byte %d is not closed", i)
			}
			if text[j] == '"' {
				if j+1 < len(text) && text[j+1] == '"' {
					f.doubled = append(f.doubled, b.Len())
					b.WriteByte('"')
					j += 2
					continue
				}
				j++
				break
			}
			k := j
			for k < len(text) && text[k] != '"' {
				k++
			}
			b.WriteString(text[j:k])
			j = k
		}
		// Text after the closing quote up to the delimiter stays part of
		// the field's source (lenient; well-formed writers produce none).
		for j < len(text) && text[j] != delim && text[j] != '\n' && text[j] != '\r' {
			j++
		}
		f.val, f.end = b.String(), j
		return f, j, nil
	}
	j := i
	for j < len(text) && text[j] != delim && text[j] != '\n' && text[j] != '\r' {
		j++
	}
	return csvField{start: i, end: j, val: text[i:j]}, j, nil
}

// looksLikeHeader: no cell has a digit and at least one is non-empty.
func looksLikeHeader(rec []csvField) bool {
	nonEmpty := false
	for _, f := range rec {
		if strings.ContainsAny(f.val, "0123456789@") || len(f.val) > 64 {
			return false
		}
		if strings.TrimSpace(f.val) != "" {
			nonEmpty = true
		}
	}
	return nonEmpty
}
