package verify

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/verify/report"
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
	return []rule{numberRuns, ibans, emails, ipAddresses, birthDates, names, addresses}
}

// Check returns the verdict on a text (the redacted output).
func Check(text string) *report.Report {
	return finish(checkText(text, 0))
}

// CheckPages checks each page's re-extracted text (lines joined by "\n",
// words by " "); findings carry page numbers and index the page's text.
func CheckPages(doc *extract.Document) *report.Report {
	var all []report.Finding
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
				b.WriteString(w.Text)
			}
		}
		all = append(all, checkText(b.String(), p.Number)...)
	}
	return finish(all)
}

// checkText runs the rules over text, in pieces when it is long (pieces
// overlap so nothing that fits in the overlap is cut in two).
func checkText(text string, page int) []report.Finding {
	var hits []hit
	for start := 0; start < len(text); {
		end := min(len(text), start+pieceBytes)
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
		sub := newSubject(text[start:end])
		for _, r := range rules() {
			for _, h := range r(sub) {
				h.start += start
				h.end += start
				hits = append(hits, h)
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
func toFindings(text string, hs []hit, page int) []report.Finding {
	out := make([]report.Finding, 0, len(hs))
	at, cp := 0, 0
	for _, h := range hs {
		cp += utf8.RuneCountInString(text[at:h.start])
		at = h.start
		out = append(out, report.Finding{Type: h.typ, Rule: h.rule, Page: page,
			Start: cp, End: cp + utf8.RuneCountInString(text[h.start:h.end])})
	}
	return out
}

func finish(fs []report.Finding) *report.Report {
	rep := &report.Report{Version: report.Version, Verdict: report.Clean, Findings: fs}
	if len(fs) == 0 {
		rep.Findings = []report.Finding{}
		rep.Reasons = []string{}
		return rep
	}
	rep.Verdict = report.Suspicious
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Type+" ("+f.Rule+")"]++
	}
	for k, n := range counts {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("%dx %s", n, k))
	}
	sort.Strings(rep.Reasons)
	if len(rep.Findings) > report.MaxFindings {
		rep.Findings = rep.Findings[:report.MaxFindings]
	}
	if len(rep.Reasons) > report.MaxReasons {
		rep.Reasons = rep.Reasons[:report.MaxReasons]
	}
	return rep
}

// near reports whether one of the words occurs in the window of lower-case
// text before position i (within back bytes), as a whole word.
func (s *subject) near(i, back int, words ...string) bool {
	lo := max(0, i-back)
	win := s.lower[lo:i]
	for _, w := range words {
		for k := strings.Index(win, w); k >= 0; {
			a, b := lo+k, lo+k+len(w)
			if !isAlnumAt(s.lower, a-1) && !isAlnumAt(s.lower, b) {
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
