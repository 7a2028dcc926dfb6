package formats

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs"
)

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
