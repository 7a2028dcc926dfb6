package invoice

import (
	"math/bits"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// parsed is a value read from some words.
type parsed struct {
	value  string
	words  []word // the words that held it (for page and confidence)
	issues []string
	amt    *amount
}

// parseValue reads a value of kind from words (a label's region, a
// template capture, a table cell).
func (x *run) parseValue(kind string, ws []word) (parsed, bool) {
	if len(ws) == 0 {
		return parsed{}, false
	}
	switch kind {
	case kindAmount:
		return x.parseAmountValue(ws)
	case kindDate:
		return x.parseDateValue(ws)
	case kindID:
		return parseID(ws)
	case kindCurrency:
		return x.parseCurrency(ws)
	case kindIBAN:
		return x.parseIBAN(ws)
	case kindBIC:
		return parseBIC(ws)
	case kindAccount:
		return parseDigits(ws, 4, 17)
	case kindRouting:
		return parseRouting(ws)
	case kindSortCode:
		return parseSortCode(ws)
	case kindTaxID:
		return x.parseTaxID(ws)
	case kindText:
		return parseText(ws)
	}
	return parsed{}, false
}

// findAmount returns the rightmost amount in ws: the longest parseable
// tail of the last run of amount-like words. A tail that leaves a bare
// digit group behind ("1234 56") means a separator was lost, so the
// reading is marked implausible rather than trusted.
func (x *run) findAmount(ws []word, sDollar bool) (amount, []word, bool) {
	runs := amountRuns(ws, x.lx)
	for k := len(runs) - 1; k >= 0; k-- {
		r := runs[k]
		for i := range r {
			tail := r[i:]
			if allCurrency(tail, x.lx) {
				break
			}
			a, err := parseAmount(joinWords(tail), x.decHint, x.lx, sDollar)
			if err != nil {
				continue
			}
			if i > 0 && isDigits(strings.Trim(r[i-1].text, ".,")) {
				a.implausible = true
			}
			if a.currency == "" && i > 0 {
				a.currency = x.lx.currencyIn(r[i-1].text)
			}
			return a, tail, true
		}
	}
	return amount{}, nil, false
}

func amountRuns(ws []word, lx *lexicon) [][]word {
	var runs [][]word
	var cur []word
	for _, w := range ws {
		if !amountish(w.text, lx) {
			if len(cur) > 0 {
				runs, cur = append(runs, cur), nil
			}
			continue
		}
		if n := len(cur); n > 0 && w.box.XMin-cur[n-1].box.XMax > 2.5*max(w.height(), 1) {
			runs, cur = append(runs, cur), nil
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

func allCurrency(ws []word, lx *lexicon) bool {
	for _, w := range ws {
		if !lx.isCurrencyToken(w.text) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// formatAmount prints a decimal with the fraction digits it was printed
// with (at least those), never in exponent form.
func formatAmount(a amount) string {
	if a.hasSep {
		return a.value.StringFixed(int32(a.frac))
	}
	return a.value.StringFixed(0)
}

func amountIssues(a amount) []string {
	var is []string
	if a.corrected {
		is = append(is, result.IssueOCRCorrected)
	}
	if a.implausible || a.ambiguous {
		is = append(is, result.IssueImplausibleSeparators)
	}
	return is
}

func (x *run) parseAmountValue(ws []word) (parsed, bool) {
	a, used, ok := x.findAmount(ws, x.dollar)
	if !ok {
		return parsed{}, false
	}
	return parsed{value: formatAmount(a), words: used, issues: amountIssues(a), amt: &a}, true
}

func (x *run) parseDateValue(ws []word) (parsed, bool) {
	d, err := x.dp.parse(joinWords(ws), x.order)
	if err != nil {
		return parsed{}, false
	}
	p := parsed{value: d.t.Format("2006-01-02"), words: digitWords(ws)}
	if d.ambiguous && x.orderWeak {
		p.issues = append(p.issues, result.IssueAmbiguousDate)
	}
	if d.corrected {
		p.issues = append(p.issues, result.IssueOCRCorrected)
	}
	return p, true
}

// digitWords keeps the words with a digit (the date's own words, not the
// label's neighbours), or all words if none has one.
func digitWords(ws []word) []word {
	var out []word
	for _, w := range ws {
		if strings.ContainsFunc(w.text, unicode.IsDigit) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return ws
	}
	return out
}

var idDashes = strings.NewReplacer("~", "-", "—", "-", "–", "-")

var idChars = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9\-/._#]{0,39}$`)

// parseID takes the first word with a digit: invoice and PO numbers. On
// OCR words, runs of digits holding OCR's letters are repaired
// ("INV-1O06" is INV-1006), with the repair recorded.
func parseID(ws []word) (parsed, bool) {
	for _, w := range ws {
		t := strings.TrimLeft(w.text, "#:№")
		t = strings.TrimRight(t, ".,;:)")
		if w.conf < 1 {
			t = strings.Trim(t, "“”‘’'\"")   // "Invoice #: “INV-1010"
			t = strings.TrimLeft(t, "_~-—–") // specks before the id: "__RE-2026-1074"
		}
		var issues []string
		if w.conf < 1 {
			// OCR reads a hyphen as a tilde or a dash ("INV~1042").
			if d := idDashes.Replace(t); d != t {
				t, issues = d, []string{result.IssueOCRCorrected}
			}
		}
		if !strings.ContainsFunc(t, unicode.IsDigit) || !idChars.MatchString(t) {
			continue
		}
		p := parsed{value: t, words: []word{w}, issues: issues}
		if w.conf < 1 {
			if fixed, ok := fixDigitRuns(t); ok {
				p.value, p.issues = fixed, []string{result.IssueOCRCorrected}
			}
		}
		return p, true
	}
	return parsed{}, false
}

// fixDigitRuns repairs OCR letters inside runs that are otherwise digits:
// a run of digits and confusable letters with at least as many digits as
// letters. "BC1O14" keeps its "BC" (C is no digit look-alike, so B stands
// alone without digits) and becomes BC1014.
func fixDigitRuns(s string) (string, bool) {
	rs := []rune(s)
	changed := false
	for i := 0; i < len(rs); {
		j := i
		digits, letters := 0, 0
		for j < len(rs) {
			if rs[j] >= '0' && rs[j] <= '9' {
				digits++
			} else if _, ok := ocrDigit(rs[j]); ok {
				letters++
			} else {
				break
			}
			j++
		}
		// A look-alike right after a letter may belong to the word
		// ("ABS1"): it starts a run only if real digits dominate it.
		wordTail := i > 0 && unicode.IsLetter(rs[i-1]) && j > i && !unicode.IsDigit(rs[i]) && digits < 2
		if digits > 0 && letters > 0 && letters <= digits && !wordTail {
			for k := i; k < j; k++ {
				if d, ok := ocrDigit(rs[k]); ok {
					rs[k], changed = d, true
				}
			}
		}
		i = max(j, i+1)
	}
	return string(rs), changed
}

func (x *run) parseCurrency(ws []word) (parsed, bool) {
	for _, w := range ws {
		t := strings.Trim(w.text, ":.,;()")
		if x.lx.codes[strings.ToUpper(t)] && len(t) == 3 {
			return parsed{value: strings.ToUpper(t), words: []word{w}}, true
		}
		for _, s := range x.lx.symbols {
			if t == s.text {
				return parsed{value: s.code, words: []word{w}}, true
			}
		}
	}
	return parsed{}, false
}

// parseDigits reads an account or routing number: the first word with a
// digit and the digit groups that follow it.
func parseDigits(ws []word, minLen, maxLen int) (parsed, bool) {
	var b strings.Builder
	var used []word
	var issues []string
	for _, w := range ws {
		t := strings.Trim(w.text, ":.,;()")
		if fixed, ok := fixOCRNumber(t); ok {
			t = fixed
			issues = appendOnce(issues, result.IssueOCRCorrected)
		}
		t = strings.ReplaceAll(t, "-", "")
		if !isDigits(t) {
			if len(used) > 0 {
				break
			}
			continue
		}
		if b.Len()+len(t) > maxLen {
			break
		}
		b.WriteString(t)
		used = append(used, w)
	}
	if b.Len() < minLen || b.Len() > maxLen {
		return parsed{}, false
	}
	return parsed{value: b.String(), words: used, issues: issues}, true
}

var (
	sortCodeRe   = regexp.MustCompile(`(\d{2})[-\s]?(\d{2})[-\s]?(\d{2})`)
	sortCodeSeps = regexp.MustCompile(`[-\s]+`)
)

func parseSortCode(ws []word) (parsed, bool) {
	n := min(len(ws), 3)
	// "20-00- 00": OCR splits a group off, leaving its hyphen behind.
	t := sortCodeSeps.ReplaceAllString(joinWords(ws[:n]), "-")
	fixed, ok := fixOCRNumber(t)
	var issues []string
	if ok {
		t = fixed
		issues = []string{result.IssueOCRCorrected}
	}
	m := sortCodeRe.FindStringSubmatch(t)
	if m == nil {
		return parsed{}, false
	}
	return parsed{value: m[1] + "-" + m[2] + "-" + m[3], words: ws[:n], issues: issues}, true
}

// parseTaxID reads a VAT number, EIN or similar: an optional two-letter
// country prefix word, then a word with digits and the digit groups that
// follow it ("GB 123 4567 89"), without spaces, upper case. A read id that
// fits no known format is tried with OCR's letters read as digits, and the
// variant that fits a format is kept.
func (x *run) parseTaxID(ws []word) (parsed, bool) {
	for i, w := range ws {
		t := strings.Trim(w.text, ":,;()")
		if w.conf < 1 {
			t = strings.TrimRight(t, "._-'") // specks after the id: "DE811234567_"
		}
		if countDigits(t) == 0 {
			continue
		}
		var b strings.Builder
		used := []word{}
		if i > 0 && isCountryPrefix(ws[i-1].text) {
			b.WriteString(ws[i-1].text)
			used = append(used, ws[i-1])
		}
		b.WriteString(t)
		used = append(used, w)
		for _, g := range ws[i+1:] {
			gt := strings.Trim(g.text, ":,;()")
			if fixed, ok := fixOCRNumber(gt); ok {
				gt = fixed
			}
			if !isDigits(strings.ReplaceAll(gt, "-", "")) || b.Len()+len(gt) > 20 {
				break
			}
			b.WriteString(gt)
			used = append(used, g)
		}
		id, issues := x.repairTaxID(b.String(), minConf(used) < 1)
		if countDigits(id) < 4 || len(id) > 20 || !idChars.MatchString(id) {
			return parsed{}, false
		}
		return parsed{value: id, words: used, issues: issues}, true
	}
	return parsed{}, false
}

// repairTaxID upper-cases id and, for OCR text that fits no format, tries
// every mix of keeping or reading as digits its (at most six) confusable
// letters; the first variant that fits a format wins.
func (x *run) repairTaxID(raw string, ocr bool) (string, []string) {
	up := strings.ToUpper(raw)
	if !ocr || x.fitsTaxFormat(up) {
		return up, nil
	}
	rs := []rune(raw)
	var at []int
	for i, r := range rs {
		if _, ok := ocrDigit(r); ok {
			at = append(at, i)
		}
	}
	if len(at) == 0 || len(at) > 8 {
		return x.lettersForDigits(up)
	}
	// Fewest changes first.
	masks := make([]int, 0, 1<<len(at))
	for m := 1; m < 1<<len(at); m++ {
		masks = append(masks, m)
	}
	sort.SliceStable(masks, func(i, j int) bool { return bits.OnesCount(uint(masks[i])) < bits.OnesCount(uint(masks[j])) })
	for _, mask := range masks {
		v := slices.Clone(rs)
		for k, i := range at {
			if mask&(1<<k) != 0 {
				v[i], _ = ocrDigit(v[i])
			}
		}
		if c := strings.ToUpper(string(v)); x.fitsTaxFormat(c) {
			return c, []string{result.IssueOCRCorrected}
		}
	}
	return x.lettersForDigits(up)
}

// taxLetters are the letters OCR reads as digits in a tax id's letter
// positions (seen: "NL123456789801" for NL...B01, "0E811234567" for DE...).
var taxLetters = map[byte]string{'8': "B", '0': "DO", '5': "S", '1': "I", '2': "Z", '6': "G"}

// lettersForDigits tries reading one digit of an OCR'd id that fits no
// format as the letter it may have been; the first variant, in reading
// order, that fits a format wins.
func (x *run) lettersForDigits(up string) (string, []string) {
	for i := 0; i < len(up); i++ {
		for _, l := range []byte(taxLetters[up[i]]) {
			v := []byte(up)
			v[i] = l
			if x.fitsTaxFormat(string(v)) {
				return string(v), []string{result.IssueOCRCorrected}
			}
		}
	}
	return up, nil
}

func (x *run) fitsTaxFormat(id string) bool {
	for _, re := range x.lx.taxIDFormats {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}

func isCountryPrefix(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// parseText reads a free-text value (a vendor name): the first cell of the
// region.
func parseText(ws []word) (parsed, bool) {
	first := cells(ws, 1.0)[0]
	t := strings.TrimSpace(strings.Trim(joinWords(first), ":,;"))
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < 2 || utf8.RuneCountInString(t) > result.MaxTextRunes {
		return parsed{}, false
	}
	return parsed{value: t, words: first}, true
}

func appendOnce(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}
