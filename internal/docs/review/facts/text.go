package facts

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Paragraph is one paragraph of the contract in reading order, with the
// pages it is on (the review job's input).
type Paragraph struct {
	Text  string
	Pages []int
}

// sentence is one sentence with the page it starts on and its paragraph.
type sentence struct {
	text string
	page int
	para int
}

// abbreviations never end a sentence.
var abbreviations = map[string]bool{
	"inc": true, "ltd": true, "corp": true, "co": true, "no": true, "e.g": true, "i.e": true, "st": true,
	"u.s": true, "mr": true, "ms": true, "mrs": true, "dr": true, "etc": true, "n.v": true, "b.v": true,
	"s.a": true, "plc": true, "llc": true, "l.l.c": true, "l.p": true, "jr": true, "sr": true, "art": true, "sec": true,
}

// splitSentences cuts paragraphs into sentences at ". " (or "? ", "! ")
// before an upper-case letter, a digit, a quote or a parenthesis, unless
// the word before the period is an abbreviation or a single letter.
func splitSentences(paras []Paragraph) []sentence {
	var out []sentence
	for pi, p := range joinBroken(paras) {
		text := strings.Join(strings.Fields(p.Text), " ")
		start := 0
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c != '.' && c != '?' && c != '!' || i+2 >= len(text) || text[i+1] != ' ' {
				continue
			}
			next, _ := utf8.DecodeRuneInString(text[i+2:])
			if !unicode.IsUpper(next) && !unicode.IsDigit(next) && next != '(' && next != '"' && next != '“' {
				continue
			}
			word := text[strings.LastIndexByte(text[:i], ' ')+1 : i]
			w := strings.ToLower(strings.Trim(word, "(\"“"))
			if c == '.' && (abbreviations[w] || utf8.RuneCountInString(w) == 1) {
				continue
			}
			out = append(out, sentence{text: text[start : i+1], page: pageAt(p.Pages, start, len(text)), para: pi})
			start = i + 2
		}
		if start < len(text) {
			out = append(out, sentence{text: text[start:], page: pageAt(p.Pages, start, len(text)), para: pi})
		}
	}
	return out
}

// pageAt estimates the page of an offset in a paragraph spread evenly
// over its pages.
func pageAt(pages []int, off, n int) int {
	if len(pages) == 0 {
		return 0
	}
	if n == 0 {
		return pages[0]
	}
	return pages[min(len(pages)-1, off*len(pages)/n)]
}

// bound cuts s to at most n bytes on a rune boundary.
func bound(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

const months = `January|February|March|April|May|June|July|August|September|October|November|December`

var (
	dateMDY = `(?:` + months + `)\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}`
	dateDMY = `\d{1,2}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?(?:` + months + `),?\s+\d{4}`
	dateISO = `\d{4}-\d{2}-\d{2}`
	datePat = `(?:` + dateMDY + `|` + dateDMY + `|` + dateISO + `)`
	dateRE  = regexp.MustCompile(datePat)
	monthRE = regexp.MustCompile(months)
	digitRE = regexp.MustCompile(`\d+`)
)

// parseDate reads one date as written ("March 5, 2025", "5th day of
// March, 2025", "2025-03-05").
func parseDate(s string) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	m := monthRE.FindString(s)
	nums := digitRE.FindAllString(s, -1)
	if m == "" || len(nums) != 2 {
		return time.Time{}, false
	}
	mon, _ := time.Parse("January", m)
	d, _ := strconv.Atoi(nums[0])
	y, _ := strconv.Atoi(nums[1])
	if d > 31 {
		d, y = y, d
	}
	t := time.Date(y, mon.Month(), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || y < 1900 || y > 2200 {
		return time.Time{}, false
	}
	return t, true
}

func firstDate(s string) (time.Time, bool) {
	for _, m := range dateRE.FindAllString(s, -1) {
		if t, ok := parseDate(m); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

func ymd(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

var numberWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
	"eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50,
	"sixty": 60, "seventy": 70, "seventy-five": 75, "eighty": 80, "ninety": 90, "one hundred": 100,
	"one hundred twenty": 120, "one hundred eighty": 180, "a": 1, "an": 1,
}

// durPat is a duration as contracts write it: "thirty (30) days",
// "30 days", "ten business days", "one (1) year", "sixty days'".
const durPat = `(?:(?:[A-Za-z]+(?:[ -][a-z]+)?\s+)?\(\d+\)|\d+|[A-Za-z]+(?:-[a-z]+)?)\s+(?:business\s+|calendar\s+|working\s+)?(?:day|week|month|year)s?(?:'|’)?`

var durRE = regexp.MustCompile(`(?i)^(.*?)\s+(business\s+|calendar\s+|working\s+)?(day|week|month|year)s?(?:'|’)?$`)

type duration struct {
	n        int
	unit     string // day, week, month, year
	business bool
}

func parseDuration(s string) (duration, bool) {
	m := durRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return duration{}, false
	}
	num := strings.ToLower(strings.TrimSpace(m[1]))
	n := 0
	if d := digitRE.FindString(num); d != "" {
		n, _ = strconv.Atoi(d)
	} else if v, ok := numberWords[num]; ok {
		n = v
	}
	if n <= 0 || n > 10000 {
		return duration{}, false
	}
	b := strings.TrimSpace(strings.ToLower(m[2]))
	return duration{n: n, unit: strings.ToLower(m[3]), business: b == "business" || b == "working"}, true
}

// add moves t by d, sign times (sign is 1 or -1).
func (d duration) add(t time.Time, sign int) time.Time {
	switch d.unit {
	case "day":
		if !d.business {
			return t.AddDate(0, 0, sign*d.n)
		}
		for left := d.n; left > 0; {
			t = t.AddDate(0, 0, sign)
			if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday {
				left--
			}
		}
		return t
	case "week":
		return t.AddDate(0, 0, sign*7*d.n)
	case "month":
		return t.AddDate(0, sign*d.n, 0)
	default:
		return t.AddDate(sign*d.n, 0, 0)
	}
}

// joinBroken re-joins a paragraph that ends mid-sentence (no closing
// punctuation) with the next when that one starts in lower case: a
// wrapped line extraction took for a new paragraph.
func joinBroken(paras []Paragraph) []Paragraph {
	out := make([]Paragraph, 0, len(paras))
	for _, p := range paras {
		t := strings.TrimSpace(p.Text)
		if n := len(out); n > 0 && t != "" {
			prev := strings.TrimSpace(out[n-1].Text)
			first, _ := utf8.DecodeRuneInString(t)
			if prev != "" && !strings.ContainsAny(prev[len(prev)-1:], ".;:!?") && unicode.IsLower(first) {
				out[n-1] = Paragraph{Text: prev + " " + t, Pages: mergePages(out[n-1].Pages, p.Pages)}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func mergePages(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, p := range b {
		if len(out) == 0 || p > out[len(out)-1] {
			out = append(out, p)
		}
	}
	return out
}
