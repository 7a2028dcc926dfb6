package pattern

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/airlock-dev/airlock/internal/checksum"
	"github.com/airlock-dev/airlock/internal/docs/redact/nlp"
)

// vmatch is a validated part of a candidate, relative to the candidate;
// score < 0 keeps the pattern's base score.
type vmatch struct {
	start, end int
	score      float64
}

// validatorFunc checks a regex candidate and returns the parts that are
// real entities (often the whole candidate, sometimes a narrower window).
type validatorFunc func(tb *Tables, s string) []vmatch

var validators = map[string]validatorFunc{
	"us_ssn":             validateSSN,
	"credit_card":        validateCard,
	"aba_routing":        validateABA,
	"bank_account":       validateAccount,
	"iban":               validateIBAN,
	"ipv4":               validateIPv4,
	"ipv6":               validateIPv6,
	"birth_date":         validateBirthDate,
	"birth_date_after_b": validateBirthDateAfterB,
	"passport":           validateWhole,
	"driver_license":     validateDriverLicense,
	"email":              validateEmail,
	"phone":              validatePhone,
}

func whole(s string) []vmatch { return []vmatch{{0, len(s), -1}} }

func validateWhole(_ *Tables, s string) []vmatch { return whole(s) }

// validSSN applies the SSA's structural rules: no area 000, 666 or
// 900-999, no group 00, no serial 0000, not a known never-issued number.
func validSSN(tb *Tables, d string) bool {
	if len(d) != 9 || tb.invalidSSN[d] {
		return false
	}
	area, group, serial := d[:3], d[3:5], d[5:]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	return strings.Count(d, d[:1]) != 9
}

func validateSSN(tb *Tables, s string) []vmatch {
	if !validSSN(tb, nlp.DigitsOf(s)) {
		return nil
	}
	return whole(s)
}

// luhn reports whether a digit string passes the Luhn check.
func luhn(d string) bool {
	sum, dbl := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if dbl {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
		dbl = !dbl
	}
	return sum%10 == 0
}

// cardBrand returns the brand whose IIN range and lengths fit d, or "".
func cardBrand(tb *Tables, d string) string {
	for _, r := range tb.iins {
		if len(d) < r.digits || !r.lengths[len(d)] {
			continue
		}
		p, _ := strconv.Atoi(d[:r.digits])
		if p >= r.lo && p <= r.hi {
			return r.brand
		}
	}
	return ""
}

// validateCard tries every group-aligned window of 13-19 digits whose
// grouping looks like a card (one run, or groups of 4-6 after a first
// group of 4, the last group 1-6), and keeps those passing Luhn with a
// known IIN and length. Longest windows win; windows do not overlap.
func validateCard(tb *Tables, s string) []vmatch {
	gs := nlp.DigitGroups(s)
	var out []vmatch
	for i := 0; i < len(gs); {
		found := false
		for j := min(len(gs), i+6); j > i; j-- {
			if !cardGrouping(gs[i:j]) {
				continue
			}
			d := nlp.DigitsOf(s[gs[i].Start:gs[j-1].End])
			if len(d) < 13 || len(d) > 19 || !luhn(d) || cardBrand(tb, d) == "" || ibanHead(s[:gs[i].Start]) {
				continue
			}
			out = append(out, vmatch{gs[i].Start, gs[j-1].End, -1})
			i, found = j, true
			break
		}
		if !found {
			i++
		}
	}
	return out
}

// ibanHead reports a candidate prefix that ends like the start of a
// grouped IBAN ("... DE97 "): digits after it continue the IBAN.
func ibanHead(prefix string) bool {
	p := strings.TrimRight(prefix, " ")
	if len(p) < 4 || len(p) == len(prefix) {
		return false
	}
	h := p[len(p)-4:]
	return h[0] >= 'A' && h[0] <= 'Z' && h[1] >= 'A' && h[1] <= 'Z' && nlp.IsDigits(h[2:])
}

func cardGrouping(gs []nlp.DigitGroup) bool {
	if len(gs) == 1 {
		return true
	}
	if l := gs[0].End - gs[0].Start; l != 4 {
		return false
	}
	for k := 1; k < len(gs); k++ {
		l := gs[k].End - gs[k].Start
		if k < len(gs)-1 && (l < 4 || l > 6) || l < 1 || l > 6 {
			return false
		}
	}
	return true
}

// validABA checks an ABA routing number: a known Federal Reserve prefix
// and the 3-7-1 weighted checksum (internal/checksum).
func validABA(d string) bool {
	if len(d) != 9 {
		return false
	}
	p, _ := strconv.Atoi(d[:2])
	if !(p <= 12 || p >= 21 && p <= 32 || p >= 61 && p <= 72 || p == 80) {
		return false
	}
	return checksum.ABA(d)
}

func validateABA(_ *Tables, s string) []vmatch {
	if !validABA(nlp.DigitsOf(s)) {
		return nil
	}
	return whole(s)
}

func validateAccount(_ *Tables, s string) []vmatch {
	d := nlp.DigitsOf(s)
	if len(d) < 6 || len(d) > 17 || strings.Count(d, d[:1]) == len(d) {
		return nil
	}
	return whole(s)
}

func validateDriverLicense(_ *Tables, s string) []vmatch {
	if len(nlp.DigitsOf(s)) < 4 {
		return nil
	}
	return whole(s)
}

// validateIPv4 accepts four decimal octets without leading zeros (so
// "01.02.2023" and version-like "1.02.3.4" fail), optionally with a CIDR
// suffix; the unspecified and broadcast addresses are not personal.
func validateIPv4(_ *Tables, s string) []vmatch {
	addr, cidr, _ := strings.Cut(s, "/")
	parts := strings.Split(addr, ".")
	if len(parts) != 4 {
		return nil
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 || len(p) > 1 && p[0] == '0' {
			return nil
		}
	}
	if addr == "0.0.0.0" || addr == "255.255.255.255" {
		return nil
	}
	if cidr != "" {
		if n, err := strconv.Atoi(cidr); err != nil || n > 32 {
			return []vmatch{{0, len(addr), -1}}
		}
	}
	return whole(s)
}

func validateIPv6(_ *Tables, s string) []vmatch {
	s = strings.TrimRight(s, ":")
	if s == "" || strings.Count(s, ":") < 2 {
		return nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.IsUnspecified() || a.IsLoopback() {
		return nil
	}
	hex := 0
	for _, r := range s {
		if unicode.Is(unicode.ASCII_Hex_Digit, r) {
			hex++
		}
	}
	if hex < 4 {
		return nil
	}
	return []vmatch{{0, len(s), -1}}
}

// validateBirthDate accepts a real calendar date between 1900 and today
// in any of the common orders; whether it is a birth date is decided by
// context (the recogniser requires it).
func validateBirthDate(_ *Tables, s string) []vmatch {
	if !plausibleDate(s, time.Now()) {
		return nil
	}
	return whole(s)
}

// validateBirthDateAfterB keeps the date of "(b. 14 May 1960)", past
// the parenthesis and the abbreviation, when it is a plausible one.
func validateBirthDateAfterB(_ *Tables, s string) []vmatch {
	i := strings.IndexByte(s, '.') + 1
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] >= 0x80 && !unicode.IsLetter(rune(s[i]))) {
		i++
	}
	if i <= 1 || i >= len(s) || !plausibleDate(s[i:], time.Now()) {
		return nil
	}
	return []vmatch{{i, len(s), -1}}
}

func plausibleDate(s string, now time.Time) bool {
	nums, month := dateParts(s)
	ok := func(y, m, d int) bool {
		if y < 100 {
			if y += 1900; y+100 <= now.Year() {
				y += 100
			}
		}
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		return y >= 1900 && !t.After(now) && t.Day() == d && int(t.Month()) == m
	}
	switch {
	case month > 0 && len(nums) == 2:
		a, b := nums[0], nums[1]
		return ok(b, month, a) || ok(a, month, b)
	case month == 0 && len(nums) == 3:
		a, b, c := nums[0], nums[1], nums[2]
		if a >= 1000 {
			return ok(a, b, c)
		}
		return ok(c, a, b) || ok(c, b, a)
	}
	return false
}

var monthNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
	"oct": 10, "nov": 11, "dec": 12, "januar": 1, "februar": 2, "marz": 3, "maerz": 3, "mai": 5,
	"juni": 6, "juli": 7, "oktober": 10, "dezember": 12, "janvier": 1, "fevrier": 2, "mars": 3,
	"avril": 4, "juin": 6, "juillet": 7, "aout": 8, "septembre": 9, "octobre": 10,
	"novembre": 11, "decembre": 12, "enero": 1, "febrero": 2, "marzo": 3, "abril": 4,
	"mayo": 5, "junio": 6, "julio": 7, "agosto": 8, "septiembre": 9, "setiembre": 9,
	"octubre": 10, "noviembre": 11, "diciembre": 12, "gennaio": 1, "febbraio": 2,
	"aprile": 4, "maggio": 5, "giugno": 6, "luglio": 7, "settembre": 9, "ottobre": 10,
	"dicembre": 12, "januari": 1, "februari": 2, "maart": 3, "mei": 5, "augustus": 8, "janeiro": 1,
	"fevereiro": 2, "marco": 3, "maio": 5, "junho": 6, "julho": 7, "setembro": 9, "outubro": 10,
	"novembro": 11, "dezembro": 12,
}

// ordinalDay is a day written as an ordinal in English, French or
// Spanish and Portuguese.
var ordinalDay = regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th|er|re|e|º|ª|o|a)$`)

// dateParts returns the numbers in a date and its month if spelled out.
func dateParts(s string) (nums []int, month int) {
	for _, t := range nlp.Tokenize(s) {
		w := nlp.FoldName(s[t.Start:t.End])
		if t.Digits && !t.Letters {
			n, _ := strconv.Atoi(w)
			nums = append(nums, n)
			continue
		}
		if m := ordinalDay.FindStringSubmatch(w); m != nil {
			v, _ := strconv.Atoi(m[1]) // "2nd", "1er", "3º"
			nums = append(nums, v)
			continue
		}
		if m, ok := monthNames[w]; ok {
			month = m
		} else if len(w) > 3 {
			if m, ok := monthNames[w[:3]]; ok {
				month = m
			}
		}
	}
	return nums, month
}

// validateEmail checks the local part and domain shape and the TLD: a
// listed TLD scores high, another alphabetic one lower, a reserved name or
// a file extension ("icon@2x.png") not at all. Leading quotes are trimmed.
func validateEmail(tb *Tables, s string) []vmatch {
	start := 0
	for start < len(s) && strings.ContainsRune("'’.-", rune(s[start])) {
		start++
	}
	at := strings.LastIndexByte(s, '@')
	if at <= start {
		return nil
	}
	local := strings.TrimRightFunc(s[start:at], unicode.IsSpace)
	domain := strings.Join(strings.Fields(s[at+1:]), "")
	if len(local) > 64 || strings.Contains(local, "..") || strings.HasSuffix(local, ".") {
		return nil
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return nil
		}
	}
	tld := strings.ToLower(labels[len(labels)-1])
	if len(labels) < 2 || tb.tldDeny[tld] {
		return nil
	}
	score := 0.95
	if !tb.tlds[tld] {
		score = 0.6
	}
	return []vmatch{{start, len(s), score}}
}

// ValidEmail reports whether s passes as an e-mail address (the e-mail
// validator's shape and top-level domain checks).
func ValidEmail(tb *Tables, s string) bool { return len(validateEmail(tb, s)) > 0 }
