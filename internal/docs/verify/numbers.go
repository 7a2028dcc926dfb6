package verify

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// A run is a stretch of digits joined by single separators (space, dash,
// dot, slash, parentheses, a line break), with where each digit group is.
type run struct {
	start, end int // bytes
	groups     [][2]int
	plus       bool // written with a leading '+'
}

func (r *run) digits(s string, from, to int) string {
	var b strings.Builder
	for _, g := range r.groups[from:to] {
		b.WriteString(s[g[0]:g[1]])
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// runsOf scans s once for digit runs.
func runsOf(s string) []run {
	var out []run
	i := 0
	for i < len(s) {
		if !isDigit(s[i]) || i > 0 && isDigit(s[i-1]) {
			i++
			continue
		}
		r := run{start: i, plus: i > 0 && s[i-1] == '+'}
		if r.plus {
			r.start--
		}
		for i < len(s) {
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			r.groups = append(r.groups, [2]int{i, j})
			r.end = j
			k := skipSep(s, j)
			if k == j || k >= len(s) || !isDigit(s[k]) || len(r.groups) > 40 {
				i = j
				break
			}
			i = k
		}
		out = append(out, r)
	}
	return out
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// skipSep passes at most three separator characters, one line break
// among them.
func skipSep(s string, j int) int {
	k, nl := j, 0
	for k < len(s) && k-j < 3 {
		switch s[k] {
		case ' ', '-', '.', '/', '(', ')', '\t':
		case '\n', '\r':
			nl++
		default:
			return k
		}
		k++
	}
	if nl > 1 {
		return j
	}
	return k
}

// numberRuns applies the digit checks to every run.
func numberRuns(sub *subject) []hit {
	var out []hit
	for _, r := range runsOf(sub.s) {
		out = append(out, cards(sub, &r)...)
		out = append(out, ssns(sub, &r)...)
		out = append(out, bankNumbers(sub, &r)...)
		out = append(out, phones(sub, &r)...)
	}
	return out
}

// cards: any window of whole groups with 13-19 digits passing Luhn whose
// first digit is a card industry's (2-6: airlines, travel, banking,
// merchandising), written as a card is: one group, or groups of three or
// more digits inside joined by one kind of separator (a line break may
// stand for it, as in a narrow cell).
func cards(sub *subject, r *run) []hit {
	if ibanBody(sub.s, r) {
		return nil
	}
	var out []hit
	for a := 0; a < len(r.groups); a++ {
		for b := a + 1; b <= len(r.groups); b++ {
			d := r.digits(sub.s, a, b)
			if len(d) > 19 {
				break
			}
			if len(d) >= 13 && d[0] >= '2' && d[0] <= '6' && cardShaped(sub.s, r.groups[a:b]) && luhnOK(d) {
				out = append(out, hit{"CREDIT_CARD", "luhn", r.groups[a][0], r.groups[b-1][1]})
			}
		}
	}
	return out
}

// ibanBody: the run's first group is two digits right after two capital
// letters ("DE94 3653 8528 ..."): the check digits and body of an
// IBAN-shaped string, which the IBAN rule judges (by mod 97); a card
// number window inside it would be a chance Luhn pass.
func ibanBody(s string, r *run) bool {
	g := r.groups[0]
	return g[1]-g[0] == 2 && g[0] >= 2 && s[g[0]-1] >= 'A' && s[g[0]-1] <= 'Z' && s[g[0]-2] >= 'A' && s[g[0]-2] <= 'Z' &&
		(g[0] == 2 || !isLetter(s[g[0]-3]))
}

func cardShaped(s string, gs [][2]int) bool {
	sep := ""
	for i := 1; i < len(gs); i++ {
		between := strings.TrimSpace(strings.ReplaceAll(s[gs[i-1][1]:gs[i][0]], "\n", ""))
		if strings.Contains(s[gs[i-1][1]:gs[i][0]], "\n") && between == "" {
			continue
		}
		if sep == "" {
			sep = s[gs[i-1][1]:gs[i][0]]
		}
		if s[gs[i-1][1]:gs[i][0]] != sep || sep != " " && sep != "-" {
			return false
		}
		if i < len(gs)-1 && gs[i][1]-gs[i][0] < 3 {
			return false
		}
	}
	return true
}

func luhnOK(d string) bool {
	total := 0
	for i := 0; i < len(d); i++ {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v = v * 2 % 9
			if d[len(d)-1-i] == '9' {
				v = 9
			}
		}
		total += v
	}
	return total%10 == 0
}

// neverIssued are SSNs printed in advertising or reserved for examples.
var neverIssued = map[string]bool{"078051120": true, "219099999": true, "457555462": true, "123456789": true}

func ssnRulesOK(d string) bool {
	if len(d) != 9 || neverIssued[d] {
		return false
	}
	a, g, sn := d[:3], d[3:5], d[5:]
	return a != "000" && a != "666" && a[0] != '9' && g != "00" && sn != "0000" && strings.Count(d, d[:1]) < 9
}

// ssns: three groups 3-2-4, or nine digits after SSN words.
func ssns(sub *subject, r *run) []hit {
	var out []hit
	for a := 0; a+3 <= len(r.groups); a++ {
		g := r.groups[a : a+3]
		if g[0][1]-g[0][0] == 3 && g[1][1]-g[1][0] == 2 && g[2][1]-g[2][0] == 4 && ssnRulesOK(r.digits(sub.s, a, a+3)) {
			out = append(out, hit{"US_SSN", "ssn-structure", g[0][0], g[2][1]})
		}
	}
	for _, g := range r.groups {
		if g[1]-g[0] == 9 && ssnRulesOK(sub.s[g[0]:g[1]]) && sub.near(g[0], 40, "ssn", "social security", "soc sec", "ss#", "ss no") {
			out = append(out, hit{"US_SSN", "ssn-context", g[0], g[1]})
		}
	}
	return out
}

// bankNumbers: nine digits with a valid ABA checksum after routing words;
// long digit groups after account words; identity document numbers (see
// idNumbers).
func bankNumbers(sub *subject, r *run) []hit {
	var out []hit
	for _, g := range r.groups {
		d := sub.s[g[0]:g[1]]
		if len(d) == 9 && abaOK(d) && sub.near(g[0], 40, "routing", "aba", "rtn", "transit") {
			out = append(out, hit{"US_BANK_ROUTING", "aba-checksum", g[0], g[1]})
		}
		if len(d) >= 6 && len(d) <= 17 && sub.near(g[0], 25, "account", "acct", "a/c", "checking", "savings") {
			out = append(out, hit{"US_BANK_ACCOUNT", "account-context", g[0], g[1]})
		}
		out = append(out, idNumbers(sub, g)...)
	}
	return out
}

// idNumbers: a passport number (eight or nine digits, perhaps after one
// letter) after passport words; a driver's licence number (five to
// fourteen digits, perhaps after letters) after licence words.
func idNumbers(sub *subject, g [2]int) []hit {
	a, n := g[0], g[1]-g[0]
	for a > 0 && a > g[0]-2 && sub.s[a-1] >= 'A' && sub.s[a-1] <= 'Z' {
		a--
	}
	if a > 0 && isAlnumAt(sub.s, a-1) {
		return nil
	}
	switch {
	case n >= 8 && n <= 9 && g[0]-a <= 1 && sub.near(a, 30, "passport", "passport no", "passport number"):
		return []hit{{"US_PASSPORT", "passport-context", a, g[1]}}
	case n >= 5 && n <= 14 && sub.near(a, 30, "license", "licence", "dl", "dln", "driver's license"):
		return []hit{{"US_DRIVER_LICENSE", "license-context", a, g[1]}}
	}
	return nil
}

func abaOK(d string) bool {
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(d[i]-'0') * []int{3, 7, 1}[i%3]
	}
	return sum%10 == 0 && d != "000000000"
}

// phones: runs libphonenumber accepts: international ('+') runs as they
// are; national runs written the North American way, (ddd) ddd-dddd or
// ddd-ddd-dddd and the like; bare ten-digit runs only after phone words.
func phones(sub *subject, r *run) []hit {
	txt := sub.s[r.start:r.end]
	nd := len(r.digits(sub.s, 0, len(r.groups)))
	if nd < 7 || nd > 15 {
		return nil
	}
	lens := make([]int, len(r.groups))
	for i, g := range r.groups {
		lens[i] = g[1] - g[0]
	}
	start := r.start
	if start > 0 && sub.s[start-1] == '(' {
		start--
		txt = "(" + txt
	}
	switch {
	case r.plus && parses(txt, "ZZ"):
		return []hit{{"PHONE", "e164", start, r.end}}
	case r.plus && trunkDropped(sub.s, r) != "":
		return []hit{{"PHONE", "e164", start, r.end}}
	case !r.plus && nationalForm(sub.s, r, lens):
		return []hit{{"PHONE", "national", start, r.end}}
	case groupsAre(lens, 3, 3, 4) || groupsAre(lens, 1, 3, 3, 4):
		if parses(txt, "US") {
			return []hit{{"PHONE", "nanp-format", start, r.end}}
		}
	case groupsAre(lens, 10) && sub.near(r.start, 20, "phone", "tel", "mobile", "cell", "call", "fax"):
		if parses(txt, "US") {
			return []hit{{"PHONE", "phone-context", start, r.end}}
		}
	}
	return nil
}

// trunkDropped: "+44 (0)20 7946 0958", an international number with the
// home trunk "(0)" kept; it returns the number without it when that
// parses, else "".
func trunkDropped(s string, r *run) string {
	if len(r.groups) < 3 {
		return ""
	}
	g := r.groups[1]
	if s[g[0]:g[1]] != "0" || g[0] == 0 || s[g[0]-1] != '(' {
		return ""
	}
	n := "+" + r.digits(s, 0, 1) + r.digits(s, 2, len(r.groups))
	if parses(n, "ZZ") {
		return n
	}
	return ""
}

// nationalRegions are the countries a number written in national form
// is tried in (the verifier's own list).
var nationalRegions = []string{"GB", "FR", "DE", "NL", "BE", "CH", "AT", "IE", "AU", "NZ", "JP", "IT", "ES",
	"SE", "NO", "DK", "FI", "PL", "PT", "ZA", "IN", "BR", "KR", "TR", "IL", "GR", "CZ", "HU", "RO"}

// nationalForm: a number written with its trunk 0 as a country writes
// it, valid there: three or more groups of two to five digits, or an
// area code and a run of six to eight ("01512 3457861", "06 12 34 56 78",
// "0412 345 678").
func nationalForm(s string, r *run, lens []int) bool {
	d := r.digits(s, 0, len(r.groups))
	if d[0] != '0' || len(d) < 9 || len(d) > 12 || len(lens) < 2 || lens[0] > 5 || groupsAre(lens, 3, 2, 4) {
		return false // (3-2-4 is how an SSN is written)
	}
	switch {
	case len(lens) == 2:
		if lens[1] < 6 || lens[1] > 8 {
			return false
		}
	default:
		for _, l := range lens[1:] {
			if l < 2 || l > 5 {
				return false
			}
		}
	}
	txt := s[r.start:r.end]
	for _, region := range nationalRegions {
		if parses(txt, region) {
			return true
		}
	}
	return false
}

func groupsAre(lens []int, want ...int) bool {
	if len(lens) != len(want) {
		return false
	}
	for i := range want {
		if lens[i] != want[i] {
			return false
		}
	}
	return true
}

func parses(s, region string) bool {
	n, err := phonenumbers.Parse(s, region)
	return err == nil && phonenumbers.IsValidNumber(n)
}
