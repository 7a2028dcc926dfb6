package review

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// heading is a section heading found at the start of a paragraph.
type heading struct {
	// style groups headings of one level: "article", "section-2" (Section
	// 7.01), "dotted-1" (7.), "dotted-2" (7.1), "roman" (VII.), "alpha"
	// (A.), "paren" ((a)), and for unnumbered headings "caps", "title",
	// "caps-runin", "title-runin".
	style  string
	number string // as written, "" when unnumbered
	last   int    // last numeric component of the number (VII is 7), 0 if none
	title  string // "" for an untitled numbered paragraph
	text   string // the heading as written, for reports
}

var (
	// The separator after the number may be doubled or misread by OCR
	// ("Section 6 -- Notices", "Section 6 ~ Notices").
	reArticle = regexp.MustCompile(`^(?i:article|art\.)\s+([IVXLCDMivxlcdm]+|\d{1,3})\b\.?\s*(?:[-:.~]+\s*)?(.*)$`)
	reSection = regexp.MustCompile(`^(?i:section|sec\.|§)\s*(\d{1,3}(?:\.\d{1,3})*)\b\.?\s*(?:[-:~]+\s*)?(.*)$`)
	// reClause is the English drafting style "Clause 7 - Liability",
	// "CLAUSE 7. LIABILITY", "Clause 7.2".
	reClause = regexp.MustCompile(`^(?i:clause|cl\.)\s*(\d{1,3}(?:\.\d{1,3})*)\b\.?\s*(?:[-:~]+\s*)?(.*)$`)
	reDotted = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3})*)([.):,]?)(?:\s+(.*)|$)`)
	reRoman  = regexp.MustCompile(`^([IVXL]{1,6})\.\s+(.*)$`)
	reAlpha  = regexp.MustCompile(`^([A-Z])\.\s+(.*)$`)
	reParen  = regexp.MustCompile(`^\(([a-z]{1,4}|\d{1,2})\)\s+(.*)$`)
	// reMarkerGlued is a leading "7." run into its title ("7.Intellectual").
	reMarkerGlued = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3})*\.)(\p{Lu})`)
	// reMarkerOCR is a leading number OCR may have garbled (l2. for 12.).
	reMarkerOCR = regexp.MustCompile(`^[0-9lIoO|]{1,3}(?:\.[0-9lIoO|]{1,3})*[.)]?\s`)
	// reLeadSpeck is dust OCR read in the margin before a section number
	// or keyword ("_5. Export Compliance", "~Section 6").
	reLeadSpeck = regexp.MustCompile(`^[_~'\x60.,:;*]{1,2}([0-9]|(?i:section|article)\b)`)
)

// parseHeading splits a cleaned paragraph into its heading, if it starts
// with one, and the body text after it. A numbered paragraph with no
// title is returned as an untitled heading (the caller decides from the
// numbering around it whether it is a section or a list item).
func parseHeading(s string) (*heading, string) {
	h, body := parseMarked(s)
	if h != nil {
		return h, body
	}
	// Dust OCR read before a heading ("'INTELLECTUAL PROPERTY", "_ Assignment.
	// Neither party ..."): the heading without it, if it has a title.
	if rest, ok := cutLeadSpecks(s); ok {
		if h2, body2 := parseMarked(rest); h2 != nil && h2.title != "" {
			return h2, body2
		}
	}
	return h, body
}

// leadSpecks are characters OCR makes of dust in the margin.
const leadSpecks = "_~'`\".,:;*"

// cutLeadSpecks removes one or two speck characters (and a space) from
// the start of s when a capital, digit or parenthesis follows.
func cutLeadSpecks(s string) (string, bool) {
	rest := strings.TrimLeft(s, leadSpecks)
	if n := len(s) - len(rest); n == 0 || n > 2 {
		return s, false
	}
	rest = strings.TrimPrefix(rest, " ")
	if rest == "" {
		return s, false
	}
	first := []rune(rest)[0]
	return rest, unicode.IsUpper(first) || unicode.IsDigit(first) || first == '('
}

// parseMarked is parseHeading without the dust removal.
func parseMarked(s string) (*heading, string) {
	if m := reLeadSpeck.FindStringSubmatchIndex(s); m != nil {
		s = s[m[2]:]
	}
	s = fixParenSymbol(s)
	s = reMarkerGlued.ReplaceAllString(fixMarkerOCR(fixKeywordOCR(s)), "$1 $2")
	if m := reArticle.FindStringSubmatch(s); m != nil {
		return numbered("article", m[1], m[2], s, false)
	}
	if m := reSection.FindStringSubmatch(s); m != nil {
		return numbered("section-"+strconv.Itoa(strings.Count(m[1], ".")+1), m[1], m[2], s, true)
	}
	if m := reClause.FindStringSubmatch(s); m != nil {
		return numbered("clause-"+strconv.Itoa(strings.Count(m[1], ".")+1), m[1], m[2], s, true)
	}
	if m := reDotted.FindStringSubmatch(s); m != nil {
		h, body := numbered("dotted-"+strconv.Itoa(strings.Count(m[1], ".")+1), m[1], m[3], s, m[2] != "" || strings.Contains(m[1], "."))
		if h != nil && m[2] == "" && !strings.Contains(m[1], ".") && h.title == "" {
			return nil, s // "30 days after..." is a sentence, not a section
		}
		return h, body
	}
	for _, re := range []struct {
		re    *regexp.Regexp
		style string
	}{{reRoman, "roman"}, {reAlpha, "alpha"}, {reParen, "paren"}} {
		if m := re.re.FindStringSubmatch(s); m != nil {
			h, body := numbered(re.style, m[1], m[2], s, false)
			if h == nil || h.title == "" {
				return nil, s // a list item: "(a) any breach of ..."
			}
			return h, body
		}
	}
	return unnumbered(s)
}

// fixKeywordOCR reads a leading "Artide" or "SECTlON" as the keyword it
// was, so a misread keyword does not lose the heading.
func fixKeywordOCR(s string) string {
	first, rest, ok := strings.Cut(s, " ")
	if !ok || strings.EqualFold(first, "article") || strings.EqualFold(first, "section") || strings.EqualFold(first, "clause") {
		return s
	}
	t := getTables()
	second, rest2, _ := strings.Cut(rest, " ")
	for _, kw := range []string{"Article", "Section", "Clause"} {
		if t.ocrEqual(foldWord(first), foldWord(kw)) {
			return kw + " " + rest
		}
		if len(second) <= 3 && t.ocrEqual(foldWord(first+second), foldWord(kw)) {
			return kw + " " + rest2 // "Sectio n 4.02"
		}
	}
	return s
}

// fixParenSymbol reads a leading "(©)" as the list marker "(c)" and
// "(®)" as "(r)", which OCR took for the copyright and registered signs.
func fixParenSymbol(s string) string {
	for _, p := range [][2]string{{"(©)", "(c)"}, {"(®)", "(r)"}} {
		if rest, ok := strings.CutPrefix(s, p[0]); ok {
			return p[1] + rest
		}
	}
	return s
}

var markerDigits = strings.NewReplacer("l", "1", "I", "1", "|", "1", "o", "0", "O", "0")

// fixMarkerOCR reads a leading "l2." or "7.l" as the number it was.
func fixMarkerOCR(s string) string {
	loc := reMarkerOCR.FindStringIndex(s)
	if loc == nil {
		return s
	}
	marker := s[:loc[1]]
	if !hasDigit(marker) {
		return s
	}
	fixed := markerDigits.Replace(marker)
	return fixed + s[loc[1]:]
}

// numbered builds a heading from a marker and the rest of the paragraph.
// untitledOK says whether the marker may stand for a section with no
// title ("7.2 Customer shall ..."); otherwise a rest that is neither a
// title nor a run-in title means this is not a heading.
func numbered(style, number, rest, all string, untitledOK bool) (*heading, string) {
	h := &heading{style: style, number: number, last: lastComponent(number)}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		h.text = strings.TrimSpace(all)
		return h, ""
	}
	marker := strings.TrimSpace(strings.TrimSuffix(all, rest))
	if title, ok := standaloneTitle(rest, true); ok {
		h.title, h.text = title, strings.TrimSpace(all)
		return h, ""
	}
	if title, body, ok := runInTitle(rest, 8, true); ok {
		h.title = title
		h.text = marker + " " + strings.TrimSpace(strings.TrimSuffix(rest, body))
		return h, body
	}
	first := []rune(rest)[0]
	if !untitledOK || !(unicode.IsUpper(first) || first == '"' || first == '(') {
		return nil, all
	}
	h.text = marker
	return h, rest
}

func lastComponent(number string) int {
	parts := strings.Split(number, ".")
	p := parts[len(parts)-1]
	if n, err := strconv.Atoi(p); err == nil {
		return n
	}
	if n := romanValue(p); n > 0 {
		return n
	}
	if len(p) == 1 {
		return int(unicode.ToLower(rune(p[0]))-'a') + 1
	}
	return 0
}

func romanValue(s string) int {
	vals := map[rune]int{'i': 1, 'v': 5, 'x': 10, 'l': 50, 'c': 100, 'd': 500, 'm': 1000}
	total, prev := 0, 0
	rs := []rune(strings.ToLower(s))
	for i := len(rs) - 1; i >= 0; i-- {
		v, ok := vals[rs[i]]
		if !ok {
			return 0
		}
		if v < prev {
			total -= v
		} else {
			total += v
			prev = v
		}
	}
	return total
}

// unnumbered recognises a heading paragraph with no number ("LIMITATION
// OF LIABILITY", "Governing Law") and a run-in one ("Governing Law. This
// Agreement ...").
func unnumbered(s string) (*heading, string) {
	if title, ok := standaloneTitle(s, false); ok && len(strings.Fields(title)) <= 10 {
		return &heading{style: caseStyle(title, ""), title: title, text: s}, ""
	}
	if t := trimTrailingSpecks(s); t != s && strings.ToUpper(t) == t {
		// "DATA PROTECTION . c .": dust after a heading in capitals.
		if title, ok := standaloneTitle(t, false); ok && len(strings.Fields(title)) <= 10 {
			return &heading{style: caseStyle(title, ""), title: title, text: s}, ""
		}
	}
	if title, body, ok := runInTitle(s, 6, false); ok {
		return &heading{style: caseStyle(title, "-runin"), title: title, text: strings.TrimSpace(strings.TrimSuffix(s, body))}, body
	}
	return nil, s
}

// trimTrailingSpecks drops the words at the end of s that are only
// punctuation or one lower-case letter: what OCR reads of dust after a
// line. A capital after a title ("Schedule A") is part of it and stays.
func trimTrailingSpecks(s string) string {
	f := strings.Fields(s)
	n := len(f)
	for n > 1 {
		w := []rune(f[n-1])
		letters := 0
		for _, r := range w {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				letters++
			}
		}
		if letters > 1 || letters == 1 && (len(w) > 1 || !unicode.IsLower(w[0])) {
			break
		}
		n--
	}
	return strings.Join(f[:n], " ")
}

func caseStyle(title, suffix string) string {
	if strings.ToUpper(title) == title {
		return "caps" + suffix
	}
	return "title" + suffix
}

// standaloneTitle reports whether s as a whole is a title (allowing one
// trailing period or colon) and returns it without that punctuation.
// sentenceCase allows "Limitation of liability" (after a number only: on
// its own such a line is as likely a sentence fragment).
func standaloneTitle(s string, sentenceCase bool) (string, bool) {
	s = strings.TrimSpace(s)
	if sentenceCase && strings.HasSuffix(s, ".") && !titleLike(strings.TrimRight(s, "."), 12, false) {
		return "", false // "1. The cap applies to all claims." is a sentence
	}
	t := strings.TrimSpace(strings.TrimRight(s, ".:"))
	if strings.HasSuffix(t, ";") || strings.HasSuffix(t, ",") {
		return "", false // a list item ("(a) Customer Data;")
	}
	if t == "" || strings.ContainsAny(t, ".:") && !abbrevOnly(t) {
		return "", false
	}
	return t, titleLike(t, 12, sentenceCase)
}

// abbrevOnly allows the periods of abbreviations inside a title ("U.S.
// Export Controls") but not a sentence break.
func abbrevOnly(t string) bool {
	return !strings.Contains(t, ". ") && !strings.Contains(t, ":")
}

// runInTitle splits "Title. Body ..." (or "Title: Body", "Title - Body")
// at the first break whose left side is a title of at most maxWords words
// and whose right side starts like a sentence.
func runInTitle(s string, maxWords int, sentenceCase bool) (title, body string, ok bool) {
	limit := min(len(s), 160)
	for i := 0; i < limit; i++ {
		var skip int
		switch {
		case strings.HasPrefix(s[i:], ". "), strings.HasPrefix(s[i:], ": "):
			skip = 2
		case strings.HasPrefix(s[i:], " - "):
			skip = 3
		case s[i] == '.' && i+2 < len(s) && unicode.IsUpper(rune(s[i+1])) && unicode.IsLower(rune(s[i+2])) && i > 0 && unicode.IsLower(rune(s[i-1])):
			skip = 1 // "Notices.All notices": the space lost after the title
		default:
			continue
		}
		t := strings.TrimSpace(s[:i])
		b := strings.TrimSpace(s[i+skip:])
		if b == "" || endsWithAbbrev(t) {
			continue
		}
		first := []rune(b)[0]
		if titleLike(t, maxWords, sentenceCase) && (unicode.IsUpper(first) || unicode.IsDigit(first) || first == '"' || first == '(') {
			return t, b, true
		}
		return "", "", false // the first sentence break decides
	}
	return "", "", false
}

var (
	smallWords = setOf("of", "and", "or", "the", "for", "to", "in", "on", "a", "an", "by", "with", "under",
		"per", "upon", "from", "at", "as", "its", "&", "vs", "not", "no", "between")
	verbWords = setOf("shall", "will", "may", "must", "is", "are", "be", "been", "was", "were", "means", "mean",
		"has", "have", "had", "does", "do", "hereby", "agrees", "agree", "warrants", "acknowledges", "if",
		"when", "that", "which", "who", "whom", "can", "cannot", "should", "would", "could", "it", "you", "we",
		// Verbs of short provisions read as sentence-case run-in titles
		// ("16.1 The laws of Switzerland govern this Agreement. The courts
		// ...").
		"govern", "governs", "apply", "applies", "survive", "survives", "prevail", "prevails", "remain", "remains",
		"continue", "continues", "bind", "binds", "constitute", "constitutes")
	abbrevs = setOf("inc", "corp", "ltd", "co", "llc", "l.l.c", "no", "mr", "mrs", "ms", "dr", "st", "jr", "u.s",
		"e.g", "i.e", "etc", "vs", "v", "n.a", "s.a", "b.v", "gmbh", "plc")
)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func endsWithAbbrev(t string) bool {
	f := strings.Fields(t)
	if len(f) == 0 {
		return false
	}
	last := strings.ToLower(strings.TrimRight(f[len(f)-1], "."))
	return abbrevs[last] || len(last) == 1 && len(f) > 1
}

// titleLike: a short phrase of capitalised words (small words excepted;
// with sentenceCase any word after the first), no verbs, not starting
// with a quote (a defined term) or a digit.
func titleLike(t string, maxWords int, sentenceCase bool) bool {
	words := strings.Fields(t)
	if len(words) == 0 || len(words) > maxWords || len(t) > 100 || strings.ContainsAny(t, "\"") {
		return false
	}
	first := []rune(t)[0]
	if !unicode.IsLetter(first) || sentenceCase && !unicode.IsUpper(first) {
		return false
	}
	capital, fragments := 0, 0
	caps := strings.ToUpper(t) == t
	for i, w := range words {
		lw := strings.ToLower(strings.Trim(w, ",;()'"))
		// A verb gives a sentence away, unless capitalised in a title-case
		// heading ("Laws That Apply"); in all caps there is no telling, so
		// it does too.
		if verbWords[lw] && (caps || lw == strings.Trim(w, ",;()'")) {
			return false
		}
		r := []rune(strings.Trim(w, ",;()'"))
		if len(r) == 0 || !unicode.IsLetter(r[0]) {
			if lw == "&" || lw == "-" {
				continue
			}
			return false
		}
		switch {
		case unicode.IsUpper(r[0]):
			// One capital letter before a lower-case piece is a word OCR
			// split after its first letter ("I nsurance").
			if len(r) > 1 || i+1 < len(words) && !smallWords[strings.ToLower(words[i+1])] && unicode.IsLower([]rune(words[i+1])[0]) {
				capital++
			}
		case smallWords[lw], sentenceCase && i > 0:
		case i > 0 && fragments == 0 && len(r) <= 3 && unicode.IsUpper([]rune(words[i-1])[0]):
			// One short lower-case piece right after a capitalised word is a
			// word OCR split ("Insuran ce", "C ap on Liability").
			fragments++
		default:
			return false
		}
	}
	return capital > 0
}
