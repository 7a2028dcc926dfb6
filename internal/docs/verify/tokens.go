package verify

import (
	"math/big"
	"net"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ibanStart finds two capital letters and two digits at the start of a
// word: where an IBAN would begin.
var ibanStart = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}`)

// ibans: from each such start, the chain of upper-case/digit groups
// (single spaces or one line break between them) is an IBAN when it is
// 15-34 characters and its mod-97 remainder is 1; the chain without a
// trailing all-letter group is tried too.
func ibans(sub *subject) []hit {
	var out []hit
	for _, loc := range ibanStart.FindAllStringIndex(sub.s, -1) {
		groups := ibanChain(sub.s, loc[0])
		for _, n := range []int{len(groups), len(groups) - 1} {
			if n < 1 {
				continue
			}
			var b strings.Builder
			for _, g := range groups[:n] {
				b.WriteString(sub.s[g[0]:g[1]])
			}
			if c := b.String(); len(c) >= 15 && len(c) <= 34 && mod97(c) == 1 {
				out = append(out, hit{"IBAN", "mod97", loc[0], groups[n-1][1]})
				break
			}
			if n == len(groups) && !allLetters(sub.s[groups[n-1][0]:groups[n-1][1]]) {
				break
			}
		}
	}
	return out
}

func ibanChain(s string, i int) [][2]int {
	var gs [][2]int
	for total := 0; i < len(s) && total < 34; {
		j := i
		for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || isDigit(s[j])) {
			j++
		}
		if j == i || j < len(s) && (isLetter(s[j]) || s[j] >= 0x80) {
			break // a lower-case or non-ASCII letter: ordinary text
		}
		gs = append(gs, [2]int{i, j})
		total += j - i
		k := j
		if k < len(s) && s[k] == ' ' {
			k++
		} else if k < len(s) && s[k] == '\n' {
			k++
		} else if k+1 < len(s) && s[k] == '\r' && s[k+1] == '\n' {
			k += 2
		}
		if k == j {
			break
		}
		i = k
	}
	return gs
}

func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// mod97 computes the ISO 7064 remainder with arbitrary precision.
func mod97(c string) int64 {
	rearranged := c[4:] + c[:4]
	var num strings.Builder
	for _, r := range rearranged {
		if r >= 'A' && r <= 'Z' {
			num.WriteString(big.NewInt(int64(r-'A') + 10).String())
		} else {
			num.WriteRune(r)
		}
	}
	n, ok := new(big.Int).SetString(num.String(), 10)
	if !ok {
		return -1
	}
	return new(big.Int).Mod(n, big.NewInt(97)).Int64()
}

// notDomains are endings that make "x@y.z" a file name or a host on no
// public network.
var notDomains = map[string]bool{"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true,
	"pdf": true, "webp": true, "local": true, "localhost": true, "test": true, "invalid": true,
	"internal": true, "lan": true, "txt": true, "js": true, "css": true}

// emails: around each '@', the longest local part and domain; an address
// needs a dot in the domain and a final label of two or more letters.
func emails(sub *subject) []hit {
	var out []hit
	s := sub.s
	for i := strings.IndexByte(s, '@'); i >= 0; {
		a := i
		for a > 0 && localChar(runeBefore(s, a)) {
			_, n := utf8.DecodeLastRuneInString(s[:a])
			a -= n
		}
		b := i + 1
		for b < len(s) {
			r, n := utf8.DecodeRuneInString(s[b:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-') {
				break
			}
			b += n
		}
		dom := strings.TrimRight(s[i+1:b], ".-")
		b = i + 1 + len(dom)
		labels := strings.Split(dom, ".")
		tld := labels[len(labels)-1]
		if a < i && len(labels) > 1 && utf8.RuneCountInString(tld) >= 2 && allUnicodeLetters(tld) && !notDomains[strings.ToLower(tld)] {
			out = append(out, hit{"EMAIL", "address", a, b})
		}
		next := strings.IndexByte(s[i+1:], '@')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return out
}

func localChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._%+-'", r) || unicode.Is(unicode.Mn, r)
}

func allUnicodeLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

func runeBefore(s string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

var (
	quad      = regexp.MustCompile(`[0-9]{1,3}(?:\.[0-9]{1,3}){3}`)
	v6cand    = regexp.MustCompile(`[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*`)
	versionWd = []string{"version", "ver", "build", "release", "rev", "v", "firmware", "agent"}
)

// ipAddresses: dotted quads of valid octets (not preceded by version
// words or glued to other digits or letters), and IPv6 literals that the
// standard library parses.
func ipAddresses(sub *subject) []hit {
	var out []hit
	s := sub.s
	for _, l := range quad.FindAllStringIndex(s, -1) {
		if l[0] > 0 && (isAlnumAt(s, l[0]-1) || s[l[0]-1] == '.') || l[1] < len(s) && (isAlnumAt(s, l[1]) || s[l[1]] == '.' && isAlnumAt(s, l[1]+1)) {
			continue
		}
		ip := net.ParseIP(s[l[0]:l[1]])
		if ip == nil || ip.IsUnspecified() || s[l[0]:l[1]] == "255.255.255.255" || sub.near(l[0], 12, versionWd...) {
			continue
		}
		out = append(out, hit{"IP_ADDRESS", "ipv4", l[0], l[1]})
	}
	for _, l := range v6cand.FindAllStringIndex(s, -1) {
		c := strings.TrimRight(s[l[0]:l[1]], ":.")
		ip := net.ParseIP(c)
		if ip == nil || ip.To4() != nil || ip.IsLoopback() || ip.IsUnspecified() {
			continue
		}
		out = append(out, hit{"IP_ADDRESS", "ipv6", l[0], l[0] + len(c)})
	}
	return out
}
