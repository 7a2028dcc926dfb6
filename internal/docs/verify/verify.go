package verify

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/verify/result"
)

// MaxCheckBytes bounds one text checked in memory; longer texts are
// checked in overlapping pieces.
const (
	pieceBytes   = 1 << 20
	pieceOverlap = 4 << 10
)

// subject is the text under check: the original, and a copy of the same
// length with placeholders blanked out (by 0x01 bytes: not a space, so a
// label followed by a placeholder is not followed by the next word; not a
// letter, digit or separator, so no rule reads through it), which every
// rule reads.
type subject struct {
	orig  string
	s     string // placeholders replaced by spaces (same byte length)
	lower string // s lower-cased byte for byte (ASCII only), for keyword search
}

// placeholder matches what the redactor writes in place of a value:
// "<EMAIL>", "<EMAIL_2>", "<PERSON:9f86d081884c7d65>".
var placeholder = regexp.MustCompile(`<[A-Z][A-Z0-9_]{1,40}(?::[0-9a-f]{8,64})?>`)

func newSubject(text string) *subject {
	b := []byte(text)
	for _, loc := range placeholder.FindAllStringIndex(text, -1) {
		for i := loc[0]; i < loc[1]; i++ {
			b[i] = 0x01
		}
	}
	low := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return &subject{orig: text, s: string(b), lower: string(low)}
}

// hit is a rule's finding in byte offsets.
type hit struct {
	typ, rule  string
	start, end int
}

// rule looks for one kind of leftover data.
type rule func(*subject) []hit

func rules() []rule {
	return []rule{numberRuns, ibans, emails, ipAddresses, birthDates, names, people, addresses, worldAddresses, jsonAddressParts, columns}
}

// Check returns the verdict on a text (the redacted output).
func Check(text string) *result.Report {
	return finish(checkText(jsonEscapes(asText(text)), 0, false))
}

// jsonEscapes: in a JSON document a string's line breaks, tabs and
// quotes are written as escapes ("Lindenallee 42\n14740 München"); the
// rules would read "n14740" as one word. Each two-byte escape becomes a
// space and the character (same length, offsets unchanged); an escaped
// backslash stays.
func jsonEscapes(text string) string {
	t := strings.TrimLeft(text, "\uFEFF \t\r\n")
	if t == "" || t[0] != '{' && t[0] != '[' || !strings.Contains(text, "\\") {
		return text
	}
	b := []byte(text)
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if c, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '"': '"', '/': '/'}[b[i+1]]; ok {
			b[i], b[i+1] = ' ', c
		}
		i++ // past the escaped character (and "\\" as a whole)
	}
	return string(b)
}

// asText decodes a file read as bytes: UTF-16 with a byte-order mark
// (which the redactor reads and writes back as UTF-16) becomes the text
// it encodes, so no rule reads its bytes as if they were UTF-8; anything
// else is checked as it is. Offsets are then code points of the decoded
// text, as the redactor's are.
func asText(b string) string {
	if len(b) < 2 || len(b)%2 != 0 || !(b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF) {
		return b
	}
	be := b[0] == 0xFE
	u := make([]uint16, len(b)/2)
	for i := range u {
		x, y := uint16(b[2*i]), uint16(b[2*i+1])
		if be {
			u[i] = x<<8 | y
		} else {
			u[i] = y<<8 | x
		}
	}
	return string(utf16.Decode(u))
}

// CheckPages checks each page's re-extracted text (lines joined by "\n",
// words by " "); findings carry page numbers and index the page's text.
// OCR words without digits read with low confidence, short or garbled,
// are left out: on a redacted page they are how OCR reads the edge of a
// black box ("Po", "Cad:", "Ca(]:"), and no rule needs such a guess to
// find a leak (a digit group of a card or phone number is kept, however
// faint).
func CheckPages(doc *extract.Document) *result.Report {
	var all []result.Finding
	for _, p := range doc.Pages {
		var b strings.Builder
		for i, l := range p.Lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			for j, w := range l.Words {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(ocrWord(p.Method, w))
			}
		}
		all = append(all, checkText(b.String(), p.Number, p.Method == extract.MethodOCR)...)
	}
	return finish(all)
}

// Low-confidence OCR words: at most lowConfRunes runes and confidence
// under lowConf, or any length under garbledConf (tesseract's 0-100;
// words printed in the clear read 90 and up).
const (
	lowConf      = 60
	lowConfRunes = 4
	garbledConf  = 30
)

// ocrWord returns the word as checked: itself, or for a short OCR word
// without digits read with low confidence one 0x01 per rune (blanked like a
// placeholder, keeping code-point offsets).
func ocrWord(method string, w extract.Word) string {
	n := utf8.RuneCountInString(w.Text)
	if method != extract.MethodOCR || w.Conf < 0 || w.Conf >= lowConf || n > lowConfRunes && w.Conf >= garbledConf ||
		strings.ContainsAny(w.Text, "0123456789") {
		return w.Text
	}
	return strings.Repeat("\x01", n)
}

// checkText runs the rules over text, in pieces when it is long (pieces
// overlap so nothing that fits in the overlap is cut in two). Text read
// by OCR is also checked as read with look-alike letters taken for
// digits, and by the OCR rules (see ocr.go).
func checkText(text string, page int, ocr bool) []result.Finding {
	var hits []hit
	for start := 0; start < len(text); {
		end := min(len(text), start+pieceBytes)
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		subs, rs := []*subject{newSubject(text[start:end])}, rules()
		if ocr {
			subs = append(subs, newSubject(asDigits(text[start:end])))
			rs = append(rs, ocrRules()...)
		}
		for _, sub := range subs {
			for _, r := range rs {
				for _, h := range r(sub) {
					h.start += start
					h.end += start
					hits = append(hits, h)
				}
			}
		}
		if end == len(text) {
			break
		}
		start = end - pieceOverlap
		for !utf8.RuneStart(text[start]) {
			start++
		}
	}
	return toFindings(text, dedupe(hits), page)
}

func dedupe(hs []hit) []hit {
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].start != hs[j].start {
			return hs[i].start < hs[j].start
		}
		return hs[i].typ+hs[i].rule < hs[j].typ+hs[j].rule
	})
	var out []hit
	for i, h := range hs {
		if i > 0 && h == hs[i-1] {
			continue
		}
		out = append(out, h)
	}
	return out
}

// toFindings converts byte offsets to code points, walking the text once
// (hits are sorted by start).
func toFindings(text string, hs []hit, page int) []result.Finding {
	out := make([]result.Finding, 0, len(hs))
	at, cp := 0, 0
	for _, h := range hs {
		cp += utf8.RuneCountInString(text[at:h.start])
		at = h.start
		out = append(out, result.Finding{Type: h.typ, Rule: h.rule, Page: page,
			Start: cp, End: cp + utf8.RuneCountInString(text[h.start:h.end])})
	}
	return out
}

func finish(fs []result.Finding) *result.Report {
	rep := &result.Report{Version: result.Version, Verdict: result.Clean, Findings: fs}
	if len(fs) == 0 {
		rep.Findings = []result.Finding{}
		rep.Reasons = []string{}
		return rep
	}
	rep.Verdict = result.Suspicious
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Type+" ("+f.Rule+")"]++
	}
	for k, n := range counts {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("%dx %s", n, k))
	}
	sort.Strings(rep.Reasons)
	if len(rep.Findings) > result.MaxFindings {
		rep.Findings = rep.Findings[:result.MaxFindings]
	}
	if len(rep.Reasons) > result.MaxReasons {
		rep.Reasons = rep.Reasons[:result.MaxReasons]
	}
	return rep
}

// near reports whether one of the words occurs in the window of lower-case
// text before position i (within back bytes), as a whole word, on i's
// line or in a label on the line above (see sameLine). A keyword further
// up belongs to another line's value.
func (s *subject) near(i, back int, words ...string) bool {
	lo := max(0, i-back)
	win := s.lower[lo:i]
	for _, w := range words {
		for k := strings.Index(win, w); k >= 0; {
			a, b := lo+k, lo+k+len(w)
			if !isAlnumAt(s.lower, a-1) && !isAlnumAt(s.lower, b) && sameLine(s.lower[b:i]) {
				return true
			}
			next := strings.Index(win[k+1:], w)
			if next < 0 {
				break
			}
			k += 1 + next
		}
	}
	return false
}

func isAlnumAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sameLine: between a keyword and its value there is no line break; or
// the keyword ends a label line ("Account number:") and the value opens
// the next.
func sameLine(between string) bool {
	nl := strings.IndexByte(between, '\n')
	if nl < 0 {
		return true
	}
	rest, next := between[:nl], between[nl+1:]
	return strings.TrimSpace(next) == "" && len(rest) <= 20 && !strings.ContainsAny(rest, "0123456789\x01")
}
