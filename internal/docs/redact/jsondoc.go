package redact

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs"
)

// JSON redacts a JSON document: every string (object keys included) is
// analysed with the nearest key as context, and integer numbers that are
// identifiers under their key (an SSN or card stored as a number) are
// replaced by a JSON string. The output is the input with only those
// tokens rewritten, so whitespace, key order, number formatting and
// escapes elsewhere are kept. Redacted keys that would collide in their
// object get unique placeholders ("<EMAIL>", "<EMAIL_2>").
func (r *Redactor) JSON(in []byte) (*Output, error) {
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

// jnode is a parsed JSON value. Scalars keep their source range; strings
// also their decoded value and, per decoded byte, the source offset.
type jnode struct {
	kind       byte // 'o', 'a', 's', 'n', 'l'
	start, end int  // source bytes of the token (strings include quotes)
	str        string
	pos        []int32 // source offset of decoded byte k (only when the literal has escapes)
	keys, vals []*jnode
}

type jsonParser struct {
	s      string
	i      int
	lim    Limits
	values int
}

func (p *jsonParser) errf(format string, args ...any) error {
	return docs.Errorf(docs.CodeUnreadable, "invalid JSON at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) document() (*jnode, error) {
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("trailing data")
	}
	return n, nil
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jsonParser) value(depth int) (*jnode, error) {
	if depth > p.lim.MaxJSONDepth {
		return nil, docs.Errorf(docs.CodeTooLarge, "JSON nesting deeper than %d", p.lim.MaxJSONDepth)
	}
	if p.values++; p.values > p.lim.MaxJSONValues {
		return nil, docs.Errorf(docs.CodeTooLarge, "JSON has more than %d values", p.lim.MaxJSONValues)
	}
	p.ws()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], lit) {
				n := &jnode{kind: 'l', start: p.i, end: p.i + len(lit)}
				p.i += len(lit)
				return n, nil
			}
		}
		return nil, p.errf("unexpected character (byte 0x%02x)", c)
	}
}

func (p *jsonParser) object(depth int) (*jnode, error) {
	n := &jnode{kind: 'o', start: p.i}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return n, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.errf("want an object key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errf("want ':'")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		if done, err := p.sep('}'); done || err != nil {
			return n, err
		}
	}
}

func (p *jsonParser) array(depth int) (*jnode, error) {
	n := &jnode{kind: 'a', start: p.i}
	p.i++
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		if done, err := p.sep(']'); done || err != nil {
			return n, err
		}
	}
}

// sep consumes ',' (false) or the closing bracket (true).
func (p *jsonParser) sep(closer byte) (bool, error) {
	p.ws()
	if p.i >= len(p.s) {
		return false, p.errf("unexpected end")
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return false, nil
	case closer:
		p.i++
		return true, nil
	}
	return false, p.errf("want ',' or %q", closer)
}

// jsonNumber is RFC 8259's number grammar (no leading zeros, no "+").
var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`)

func (p *jsonParser) number() (*jnode, error) {
	m := jsonNumber.FindStringIndex(p.s[p.i:min(len(p.s), p.i+1024)])
	if m == nil {
		return nil, p.errf("bad number")
	}
	n := &jnode{kind: 'n', start: p.i, end: p.i + m[1]}
	if n.end < len(p.s) && strings.IndexByte("0123456789+-.eE", p.s[n.end]) >= 0 {
		return nil, p.errf("bad number")
	}
	p.i = n.end
	return n, nil
}

// src maps a decoded offset (0..len(str)) to its source offset.
func (n *jnode) src(k int) int {
	if n.pos == nil {
		return n.start + 1 + k
	}
	return int(n.pos[k])
}

// str parses a string literal, decoding escapes; when it has any, it
// records where each decoded byte came from.
func (p *jsonParser) str() (*jnode, error) {
	n := &jnode{kind: 's', start: p.i}
	end := strings.IndexAny(p.s[p.i+1:], "\"\\")
	if end >= 0 && p.s[p.i+1+end] == '"' {
		lit := p.s[p.i+1 : p.i+1+end]
		if !hasControl(lit) {
			n.str, n.end = lit, p.i+end+2
			p.i = n.end
			return n, nil
		}
	}
	var b strings.Builder
	var pos []int32
	p.i++
	for {
		if p.i >= len(p.s) {
			return nil, p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			pos = append(pos, int32(p.i))
			p.i++
			n.end, n.str, n.pos = p.i, b.String(), pos
			return n, nil
		case c < 0x20:
			return nil, p.errf("control character in string")
		case c == '\\':
			start := p.i
			r, err := p.escape()
			if err != nil {
				return nil, err
			}
			for k := 0; k < utf8.RuneLen(r); k++ {
				pos = append(pos, int32(start))
			}
			b.WriteRune(r)
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			for k := 0; k < size; k++ {
				pos = append(pos, int32(p.i))
			}
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// escape decodes one escape (p.i at the backslash), including a UTF-16
// surrogate pair written as two \u escapes.
func (p *jsonParser) escape() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, p.errf("bad escape")
	}
	c := p.s[p.i+1]
	if r, ok := map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[c]; ok {
		p.i += 2
		return r, nil
	}
	if c != 'u' {
		return 0, p.errf("bad escape")
	}
	r1, ok := p.hex4(p.i + 2)
	if !ok {
		return 0, p.errf("bad \\u escape")
	}
	p.i += 6
	if utf16.IsSurrogate(r1) {
		if strings.HasPrefix(p.s[p.i:], "\\u") {
			if r2, ok := p.hex4(p.i + 2); ok {
				if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
					p.i += 6
					return r, nil
				}
			}
		}
		// A lone surrogate cannot be represented in UTF-8: refuse rather
		// than guess.
		return 0, p.errf("unpaired surrogate escape")
	}
	return r1, nil
}

func (p *jsonParser) hex4(i int) (rune, bool) {
	if i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[i:i+4], 16, 32)
	return rune(v), err == nil
}

type jsonRedactor struct {
	r  *Redactor
	ed *editor
}

// walk redacts n, whose nearest key is key.
func (jr *jsonRedactor) walk(n *jnode, key string) {
	switch n.kind {
	case 'o':
		jr.keys(n)
		for i, v := range n.vals {
			jr.walk(v, n.keys[i].str)
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
	spans := jr.r.an.fieldSpans(key, n.str)
	if len(spans) == 0 {
		return n.str, false
	}
	var b strings.Builder
	done := 0
	for _, s := range spans {
		repl, hash := jr.r.op.apply(s.typ, n.str[s.start:s.end])
		b.WriteString(n.str[done:s.start])
		b.WriteString(repl)
		done = s.end
		jr.ed.find(s, n.src(s.start), n.src(s.end), hash)
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

// number redacts an integer that is an identifier under its key (a card,
// SSN, phone or account stored as a number). The whole number becomes a
// JSON string, since a placeholder or mask is not a number.
func (jr *jsonRedactor) number(n *jnode, key string) {
	raw := jr.ed.src[n.start:n.end]
	if !isDigits(raw) || len(raw) < 6 {
		return
	}
	spans := jr.r.an.fieldSpans(key, raw)
	if len(spans) == 0 {
		return
	}
	best := spans[0]
	for _, s := range spans[1:] {
		if s.end-s.start > best.end-best.start {
			best = s
		}
	}
	best.start, best.end = 0, len(raw)
	repl, hash := jr.r.op.apply(best.typ, raw)
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
