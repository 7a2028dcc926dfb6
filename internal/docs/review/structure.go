package review

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// unit is one paragraph of the document, with the heading it starts
// with (if any) split off.
type unit struct {
	text  string   // cleaned paragraph, heading included
	h     *heading // nil for body paragraphs and list items
	body  string   // the text after the heading (all of text when h is nil)
	pages []int
}

// section is a node of the section tree: a heading and the units up to
// the next heading of the same or a higher level.
type section struct {
	h        *heading
	first    int // index of the heading's unit (-1 for the root)
	end      int // one past the last unit of the subtree
	parent   *section
	children []*section
}

// contains reports whether unit i is in the subtree.
func (s *section) contains(i int) bool { return i >= max(s.first, 0) && i < s.end }

type document struct {
	units    []unit
	root     *section
	sections []*section // pre-order, root excluded
}

// buildDocument parses headings and builds the section tree. Levels come
// from heading styles, the way a reader infers them: a heading of a style
// already open closes that level and everything under it (a sibling); a
// new style opens a level under the current one (a child). Numbers give
// the style ("7." and "7.1" differ), so "8." after "7.1.2" closes both.
func buildDocument(paras []Paragraph) *document {
	d := &document{units: parseUnits(paras)}
	d.root = &section{first: -1}
	stack := []*section{d.root}
	closeTo := func(n, at int) {
		for _, s := range stack[n:] {
			s.end = at
		}
		stack = stack[:n]
	}
	for i := range d.units {
		u := &d.units[i]
		if closesBody(u) {
			closeTo(1, i) // the signature block or an exhibit is in no clause
		}
		if u.h == nil {
			continue
		}
		pos := -1
		for k := len(stack) - 1; k >= 1; k-- {
			if stack[k].h.style == u.h.style {
				pos = k
				break
			}
		}
		if u.h.title == "" && !plausibleNumber(u.h, stack, pos) {
			// A numbered list item, not a section; its number is layout,
			// not words of the clause.
			u.h, u.body = nil, stripMarker(u.text)
			continue
		}
		if pos >= 0 {
			closeTo(pos, i)
		}
		parent := stack[len(stack)-1]
		s := &section{h: u.h, first: i, parent: parent}
		parent.children = append(parent.children, s)
		d.sections = append(d.sections, s)
		stack = append(stack, s)
	}
	closeTo(0, len(d.units))
	return d
}

var (
	reSignature = regexp.MustCompile(`^(?i:in\s*witness\s*whereof|\[?signature page|\[?signatures? (?:page )?follows?|\[?remainder of (?:this )?page|` +
		`(?:signed|executed)(?: as a deed)? (?:by|for and on behalf of|on behalf of)\b|as witness\b|agreed and accepted\b)`)
	reAttachment = regexp.MustCompile(`^(?i:exhibit|schedule|annex|appendix|attachment)\b`)
)

// closesBody reports a paragraph that ends the body of the contract: the
// signature block, or the heading of an exhibit or schedule. Without
// this the last section would run on into them.
func closesBody(u *unit) bool {
	if first, _ := utf8.DecodeRuneInString(u.text); unicode.IsLower(first) {
		return false // a sentence going on ("signature page or such other address ...")
	}
	if reSignature.MatchString(u.text) {
		return true
	}
	return u.h != nil && u.h.number == "" && reAttachment.MatchString(u.h.title)
}

// plausibleNumber decides whether an untitled numbered paragraph is a
// section: it must continue the numbering of its style (7.2 after 7.1)
// or start a new level at 1. "1. The Customer shall ..." inside section 7
// is a list item.
func plausibleNumber(h *heading, stack []*section, pos int) bool {
	if pos >= 0 {
		prev := stack[pos].h.last
		return h.last == prev+1 || h.last == prev+2
	}
	return h.last == 1
}

// parseUnits cleans the paragraphs and splits off their headings. A
// heading with a number and no title ("ARTICLE VII") takes the next
// paragraph as its title when that is a heading line of its own.
func parseUnits(paras []Paragraph) []unit {
	paras = splitSideHeadings(paras)
	units := make([]unit, 0, len(paras))
	for i := 0; i < len(paras); i++ {
		text := cleanText(paras[i].Text)
		if text == "" {
			continue
		}
		if n := len(units); n > 0 && continues(&units[n-1], text) {
			// The rest of a sentence an extraction cut into pieces: a
			// column's justified line of capitals read as short lines.
			prev := &units[n-1]
			prev.text += " " + text
			prev.body = strings.TrimSpace(prev.body + " " + text)
			prev.pages = unionPages(prev.pages, paras[i].Pages)
			continue
		}
		u := unit{text: text, pages: unionPages(nil, paras[i].Pages)}
		u.h, u.body = parseHeading(text)
		if u.h != nil && u.body != "" {
			u.body = stripNumberMarker(u.body) // "7. Liability. 7.1 In no event ..."
		}
		if wrappedHeading(u.h, u.body) && i+1 < len(paras) {
			// "1. Definitions and" / "Interpretation": a heading wrapped in a
			// narrow column or table cell.
			next := cleanText(paras[i+1].Text)
			if nh, nb := unnumbered(next); nh != nil && nb == "" && len(strings.Fields(next)) <= 4 {
				u.h.title += " " + nh.title
				u.h.text += " " + next
				u.text += " " + next
				u.pages = unionPages(u.pages, paras[i+1].Pages)
				i++
			}
		}
		if u.h != nil && u.h.title == "" && u.body == "" && i+1 < len(paras) {
			next := cleanText(paras[i+1].Text)
			if nh, nb := unnumbered(next); nh != nil && nb == "" {
				u.h.title = nh.title
				u.h.text += " " + next
				u.text += "\n" + next
				u.pages = unionPages(u.pages, paras[i+1].Pages)
				i++
			}
		}
		units = append(units, u)
	}
	return units
}

// reSectionNumber is a section number opening a paragraph: "3." or "3".
var reSectionNumber = regexp.MustCompile(`^(\d{1,3})\.?\s+`)

// splitSideHeadings splits a paragraph that runs a numbered heading into
// its first numbered subsection ("3. Invoices 3.1 Provider shall invoice
// ..."), as OCR reads a heading set in the margin beside the first line
// of its text, into the heading and the subsection. The subsection's
// number restating the heading's ("3." then "3.1") is what tells a
// heading from a sentence.
func splitSideHeadings(paras []Paragraph) []Paragraph {
	var out []Paragraph
	for i, p := range paras {
		head, rest, ok := splitSideHeading(cleanText(p.Text))
		if !ok {
			if out != nil {
				out = append(out, p)
			}
			continue
		}
		if out == nil {
			out = append(make([]Paragraph, 0, len(paras)+1), paras[:i]...)
		}
		out = append(out, Paragraph{Text: head, Pages: p.Pages}, Paragraph{Text: rest, Pages: p.Pages})
	}
	if out == nil {
		return paras
	}
	return out
}

// splitSideHeading splits "3. Invoices 3.1 Provider shall ..." into "3.
// Invoices" and "3.1 Provider shall ...": a title of at most eight words
// between a section number and that number's first-level subsection
// number, followed by text. A title ending in a stop is a run-in heading
// and is left to parseHeading.
func splitSideHeading(s string) (head, rest string, ok bool) {
	m := reSectionNumber.FindStringSubmatchIndex(s)
	if m == nil {
		return "", "", false
	}
	sub := " " + s[m[2]:m[3]] + "."
	at := strings.Index(s[m[1]:], sub)
	if at <= 0 {
		return "", "", false
	}
	at += m[1]
	title := strings.TrimSpace(s[m[1]:at])
	rest = strings.TrimSpace(s[at:])
	if len(rest) <= len(sub) || !unicode.IsDigit(rune(rest[len(sub)-1])) {
		return "", "", false
	}
	if strings.HasSuffix(title, ".") || strings.HasSuffix(title, ":") {
		return "", "", false // "7. Liability. 7.1 In no event ...": a run-in heading, read as one
	}
	if t, ok := standaloneTitle(title, false); !ok || len(strings.Fields(t)) > 8 {
		return "", "", false
	}
	return strings.TrimSpace(s[:at]), rest, true
}

// wrappedHeading reports a numbered heading with a title and no body
// whose title ends in a word no title ends in ("and", "of", "without"):
// the rest of it is on the next line.
func wrappedHeading(h *heading, body string) bool {
	if h == nil || h.number == "" || h.title == "" || body != "" {
		return false
	}
	f := strings.Fields(h.title)
	last := strings.ToLower(strings.Trim(f[len(f)-1], ",;"))
	return smallWords[last] || last == "without" || last == "non" || strings.HasSuffix(f[len(f)-1], "-") || strings.HasSuffix(f[len(f)-1], ",")
}

// reListMarker is a paragraph number at the start of a list item: "8.1",
// "12.", "(a)", "(iv)", "(3)".
var reListMarker = regexp.MustCompile(`^(?:\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)]|\((?:[a-z]{1,4}|\d{1,2})\))\s+`)

// reNumberMarker is a paragraph number at the start of a heading's text:
// "7.1", "12.3.".
var reNumberMarker = regexp.MustCompile(`^\d{1,3}(?:\.\d{1,3})+\.?\s+`)

// stripNumberMarker drops the number of a run-in heading's first
// paragraph ("7. Liability. 7.1 In no event ...").
func stripNumberMarker(s string) string {
	if loc := reNumberMarker.FindStringIndex(s); loc != nil && loc[1] < len(s) {
		return s[loc[1]:]
	}
	return s
}

// continues reports whether text goes on with the sentence the unit
// before it left open: that unit has body text not ended by a stop, and
// text starts no section (it has no number, no signature or exhibit).
func continues(prev *unit, text string) bool {
	if prev.h != nil && prev.body == "" || prev.body == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(prev.body)
	if strings.ContainsRune(".;:!?\"'”’)", last) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(text)
	if unicode.IsLower(first) {
		return true // "signature page or such other address ..." goes on a sentence
	}
	h, _ := parseHeading(text)
	if h != nil && h.number != "" || reSignature.MatchString(text) || reAttachment.MatchString(text) {
		return false
	}
	// A lower-case word, or a run of capitals going on with capitals.
	return unicode.IsLower(first) || strings.ToUpper(text) == text && strings.ToUpper(prev.body) == prev.body
}

// stripMarker drops a list item's number.
func stripMarker(s string) string {
	if loc := reListMarker.FindStringIndex(s); loc != nil && loc[1] < len(s) {
		return s[loc[1]:]
	}
	return s
}

// innermost returns the deepest section containing unit i (nil if none).
func (d *document) innermost(i int) *section {
	var best *section
	for _, s := range d.sections {
		if s.contains(i) {
			best = s
		}
	}
	return best
}

// innermostTitled returns the deepest section with a title containing
// unit i (nil if none).
func (d *document) innermostTitled(i int) *section {
	var best *section
	for _, s := range d.sections {
		if s.contains(i) && s.h.title != "" {
			best = s
		}
	}
	return best
}

// unionPages merges two page lists into one ascending list of valid pages.
func unionPages(a, b []int) []int {
	out := slices.Clone(a)
	for _, p := range b {
		if p > 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	out = slices.DeleteFunc(out, func(p int) bool { return p <= 0 || p > result.MaxPageNumber })
	slices.Sort(out)
	return out
}
