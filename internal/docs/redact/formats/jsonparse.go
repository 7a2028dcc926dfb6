package formats

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs"
)

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
