package formats

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
)

// JSON redacts a JSON document: every string (object keys included) is
// analysed with the nearest key as context, and integer numbers that are
// identifiers under their key (an SSN or card stored as a number) are
// replaced by a JSON string. The output is the input with only those
// tokens rewritten, so whitespace, key order, number formatting and
// escapes elsewhere are kept. Redacted keys that would collide in their
// object get unique placeholders ("<EMAIL>", "<EMAIL_2>").
func (r *Writer) JSON(in []byte) (*Output, error) {
	if len(in) > r.lim.MaxJSONBytes {
		return nil, docs.Errorf(docs.CodeTooLarge, "JSON input is %d bytes, over the %d limit", len(in), r.lim.MaxJSONBytes)
	}
	text, enc, err := decodeText(in)
	if err != nil {
		return nil, err
	}
	p := &jsonParser{s: text, lim: r.lim}
	if strings.HasPrefix(text, "\uFEFF") {
		p.i = len("\uFEFF")
	}
	root, err := p.document()
	if err != nil {
		return nil, err
	}
	jr := &jsonRedactor{r: r, ed: newEditor(text, r.op)}
	jr.walk(root, "")
	out, findings := jr.ed.finish()
	return r.output(encodeText(out, enc), findings), nil
}

type jsonRedactor struct {
	r  *Writer
	ed *editor
}

// walk redacts n, whose nearest key is key.
func (jr *jsonRedactor) walk(n *jnode, key string) {
	switch n.kind {
	case 'o':
		jr.keys(n)
		keys := make([]string, len(n.keys))
		for i, k := range n.keys {
			keys[i] = k.str
		}
		types := jr.r.an.RecordTypes(key, keys)
		for i, v := range n.vals {
			if types[i] != "" && jr.wholeValue(v, types[i], keys[i]) {
				continue
			}
			jr.walk(v, keys[i])
		}
	case 'a':
		for _, v := range n.vals {
			jr.walk(v, key)
		}
	case 's':
		if out, ok := jr.redactString(n, key); ok {
			jr.ed.rewrite(n.start, n.end, quoteJSON(out))
		}
	case 'n':
		jr.number(n, key)
	}
}

// redactString records findings for n's value under key and returns the
// redacted value, or false when nothing was found.
func (jr *jsonRedactor) redactString(n *jnode, key string) (string, bool) {
	spans := jr.r.an.FieldSpans(key, n.str)
	if len(spans) == 0 {
		return n.str, false
	}
	var b strings.Builder
	done := 0
	for _, s := range spans {
		repl, hash := jr.r.op.Apply(s.Type, n.str[s.Start:s.End])
		b.WriteString(n.str[done:s.Start])
		b.WriteString(repl)
		done = s.End
		jr.ed.find(s, n.src(s.Start), n.src(s.End), hash)
	}
	b.WriteString(n.str[done:])
	return b.String(), true
}

// keys redacts an object's keys (analysed on their own) and makes the
// redacted ones unique among all the object's keys.
func (jr *jsonRedactor) keys(n *jnode) {
	used := map[string]bool{}
	out := make([]string, len(n.keys))
	changed := make([]bool, len(n.keys))
	for i, k := range n.keys {
		out[i], changed[i] = jr.redactString(k, "")
		if !changed[i] {
			used[k.str] = true
		}
	}
	for i, k := range n.keys {
		if !changed[i] {
			continue
		}
		v := out[i]
		for c := 2; used[v]; c++ {
			v = numbered(out[i], c)
		}
		used[v] = true
		jr.ed.rewrite(k.start, k.end, quoteJSON(v))
	}
}

// numbered makes the c-th variant of a redacted key: the last
// placeholder gets "_c" ("<EMAIL>" -> "<EMAIL_2>"), otherwise "_c" is
// appended.
func numbered(s string, c int) string {
	if strings.HasSuffix(s, ">") {
		return s[:len(s)-1] + "_" + strconv.Itoa(c) + ">"
	}
	return s + "_" + strconv.Itoa(c)
}

// wholeValue redacts a string or number that is, whole, part of an
// entity of type t by its place in a record (see analyzer.RecordTypes);
// it reports false for other values (objects, arrays, literals) and for
// values with no letter or digit, which are then walked as usual.
func (jr *jsonRedactor) wholeValue(n *jnode, t policy.Type, key string) bool {
	switch n.kind {
	case 's':
		if !hasAlnum(n.str) {
			return false
		}
		s := span{Start: 0, End: len(n.str), Type: t, Score: recordScore, Detector: "record/" + recognizer.NormalizeKey(key)}
		repl, hash := jr.r.op.Apply(t, n.str)
		jr.ed.rewrite(n.start, n.end, quoteJSON(repl))
		jr.ed.find(s, n.src(0), n.src(len(n.str)), hash)
		return true
	case 'n':
		raw := jr.ed.src[n.start:n.end]
		s := span{Start: 0, End: len(raw), Type: t, Score: recordScore, Detector: "record/" + recognizer.NormalizeKey(key)}
		repl, hash := jr.r.op.Apply(t, raw)
		jr.ed.rewrite(n.start, n.end, quoteJSON(repl))
		jr.ed.find(s, n.start, n.end, hash)
		return true
	}
	return false
}

// recordScore is the score of a value redacted for its place in a
// record.
const recordScore = 0.8

func hasAlnum(s string) bool {
	for _, r := range s {
		if nlp.IsWordRune(r) {
			return true
		}
	}
	return false
}

// number redacts an integer that is an identifier under its key (a card,
// SSN, phone or account stored as a number). The whole number becomes a
// JSON string, since a placeholder or mask is not a number.
func (jr *jsonRedactor) number(n *jnode, key string) {
	raw := jr.ed.src[n.start:n.end]
	if !nlp.IsDigits(raw) || len(raw) < 6 {
		return
	}
	spans := jr.r.an.FieldSpans(key, raw)
	if len(spans) == 0 {
		return
	}
	best := spans[0]
	for _, s := range spans[1:] {
		if s.End-s.Start > best.End-best.Start {
			best = s
		}
	}
	best.Start, best.End = 0, len(raw)
	repl, hash := jr.r.op.Apply(best.Type, raw)
	jr.ed.rewrite(n.start, n.end, quoteJSON(repl))
	jr.ed.find(best, n.start, n.end, hash)
}

// quoteJSON writes a JSON string literal escaping only what JSON
// requires, so placeholders stay readable ("<EMAIL>", not "\u003cEMAIL").
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
