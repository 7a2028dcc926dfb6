package ocr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/pattern"
)

// digitLike maps letters OCR confuses with digits to the digit; every
// replacement is one ASCII byte for one, so offsets do not move.
var digitLike = map[byte]byte{'O': '0', 'o': '0', 'Q': '0', 'D': '0', '@': '0', 'l': '1', 'I': '1',
	'|': '1', 'S': '5', 'B': '8', 'Z': '2'}

// Digits returns text with look-alikes replaced by digits in
// digit-dominated whitespace-separated chunks: three or more digits, no
// other letters, at most half as many look-alikes as digits; or a short
// chunk of at least as many digits as look-alikes between numeric chunks
// ("+49 3@ 72927918"); and in an IBAN's head ("CH3@ 3037 ...").
func Digits(text string) string {
	b := []byte(text)
	var chunks [][2]int
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' {
			j++
		}
		if j > i {
			chunks = append(chunks, [2]int{i, j})
		}
		i = j + 1
	}
	numeric := func(k int) bool {
		if k < 0 || k >= len(chunks) {
			return false
		}
		d, _, o := chunkCounts(text[chunks[k][0]:chunks[k][1]])
		return d >= 2 && o == 0
	}
	for k, c := range chunks {
		from := c[0]
		if ibanHeadAt(text, c) {
			from += 2
		}
		d, like, other := chunkCounts(text[from:c[1]])
		switch {
		case like == 0 || other > 0:
			continue
		case d >= 3 && 2*like <= d, d >= 1 && like <= d && (numeric(k-1) || numeric(k+1)):
			for i := from; i < c[1]; i++ {
				if v, ok := digitLike[b[i]]; ok {
					b[i] = v
				}
			}
		}
	}
	return string(b)
}

// ibanHeadAt: the chunk starts with a country code and two digits or
// look-alikes ("CH3@").
func ibanHeadAt(text string, c [2]int) bool {
	if c[1]-c[0] < 4 {
		return false
	}
	s := text[c[0]:]
	up := func(x byte) bool { return x >= 'A' && x <= 'Z' }
	digitish := func(x byte) bool { return x >= '0' && x <= '9' || digitLike[x] != 0 }
	return up(s[0]) && up(s[1]) && digitish(s[2]) && digitish(s[3]) && !(up(s[2]) && up(s[3]))
}

// chunkCounts counts a chunk's digits, digit look-alikes and other
// letters.
func chunkCounts(s string) (digits, like, other int) {
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r < utf8.RuneSelf && digitLike[byte(r)] != 0:
			like++
		case unicode.IsLetter(r):
			other++
		}
	}
	return digits, like, other
}

// ocrAt is an e-mail address whose "@" OCR read as another symbol
// ("amara_petrov94 « uni-berlin.de", "lopez98 4 clinic.health"); a
// letter or digit standing for it needs spaces around it.
var ocrAt = regexp.MustCompile(`([\p{L}\p{N}._%+\-]{2,64})([ \t]?[«»©®&%$#*§(][ \t]?|[ \t][4Q][ \t])([\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+)`)

// emailRecognizer is the registry entry of kind "ocr_email".
type emailRecognizer struct {
	name  string
	score float64
	tb    *pattern.Tables
}

// NewEmail is the "ocr_email" kind's factory.
func NewEmail(spec *recognizer.Spec, env *recognizer.Env) (recognizer.Recognizer, error) {
	var c struct {
		recognizer.Common `yaml:",inline"`
	}
	if err := spec.Decode(&c); err != nil {
		return nil, err
	}
	if c.Type != policy.Email || len(c.Types) > 0 || c.Score <= 0 {
		return nil, fmt.Errorf("an ocr_email recognizer finds %s, with a score", policy.Email)
	}
	tb, err := pattern.LoadTables(env)
	if err != nil {
		return nil, err
	}
	return &emailRecognizer{name: c.Name, score: c.Score, tb: tb}, nil
}

func (r *emailRecognizer) Name() string         { return r.name }
func (r *emailRecognizer) Types() []policy.Type { return []policy.Type{policy.Email} }

// Find returns the addresses ocrAt finds whose top-level domain is a
// listed one, which pass as addresses with an "@" put back, and whose
// "@" stand-in is no ordinary word joiner (see below).
func (r *emailRecognizer) Find(w *nlp.Window, enabled func(policy.Type) bool) []recognizer.Span {
	if !enabled(policy.Email) {
		return nil
	}
	text := w.Text
	var out []recognizer.Span
	for _, m := range ocrAt.FindAllStringSubmatchIndex(text, -1) {
		local, sep, domain := text[m[2]:m[3]], strings.TrimSpace(text[m[4]:m[5]]), text[m[6]:m[7]]
		tld := strings.ToLower(domain[strings.LastIndexByte(domain, '.')+1:])
		if !r.tb.KnownTLD(tld) || !pattern.ValidEmail(r.tb, local+"@"+domain) {
			continue
		}
		// "Acme Ltd & example.com": an ordinary symbol between two words
		// counts only after a local part no word has (a digit, "._+-").
		if !strings.ContainsAny(sep, "«»©®") && !strings.ContainsAny(local, "0123456789._+-") {
			continue
		}
		out = append(out, recognizer.Span{Start: m[2], End: m[7], Type: policy.Email, Score: r.score, Detector: "email/ocr_at"})
	}
	return out
}
