package pattern

import "github.com/airlock-dev/airlock/internal/checksum"

// validateIBAN strips separators, takes exactly the country's length
// (which must end where a group of the candidate ends), checks the BBAN
// structure and mod-97 (internal/checksum). A national check digit that fails, where one is
// implemented, lowers the score but keeps the finding: the number passed
// mod-97, so it was written on purpose, and under-redaction is the worse
// error.
func validateIBAN(tb *Tables, s string) []vmatch {
	var norm []byte
	var pos []int // candidate offset just after each normalised char
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			continue
		}
		norm = append(norm, c)
		pos = append(pos, i+1)
	}
	if len(norm) < 4 {
		return nil
	}
	spec, ok := tb.ibans[string(norm[:2])]
	if !ok || len(norm) < spec.length {
		return nil
	}
	end := pos[spec.length-1]
	if end < len(s) && isAlnumByte(s[end]) {
		return nil // the IBAN would end inside a group of the text
	}
	iban := string(norm[:spec.length])
	if !bbanMatches(iban[4:], spec.bban) || !checksum.IBANMod97(iban) {
		return nil
	}
	score := -1.0
	if ok, known := nationalCheck(iban); known && !ok {
		score = 0.6
	}
	return []vmatch{{0, end, score}}
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func bbanMatches(b string, parts []bbanPart) bool {
	i := 0
	for _, p := range parts {
		for k := 0; k < p.n; k++ {
			c := b[i+k]
			digit, upper := c >= '0' && c <= '9', c >= 'A' && c <= 'Z'
			if p.kind == 'n' && !digit || p.kind == 'a' && !upper {
				return false
			}
		}
		i += p.n
	}
	return true
}

// nationalCheck verifies the BBAN's own check digits for the countries
// where the algorithm is public and bank-independent. known is false for
// other countries.
func nationalCheck(iban string) (ok, known bool) {
	b := iban[4:]
	switch iban[:2] {
	case "BE":
		return mod97Pair(b[:10], b[10:12]), true
	case "FR", "MC":
		return ribKey(b), true
	case "ES":
		return spanishCheck(b), true
	case "IT", "SM":
		return italianCIN(b), true
	case "NO":
		return norwegianMod11(b), true
	}
	return false, false
}

// mod97Pair: Belgian accounts end in the first ten digits mod 97 (97
// when that is 0).
func mod97Pair(num, check string) bool {
	m := 0
	for i := 0; i < len(num); i++ {
		m = (m*10 + int(num[i]-'0')) % 97
	}
	if m == 0 {
		m = 97
	}
	return check == twoDigits(m)
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// ribKey checks the French RIB key: 97 - (89*bank + 15*branch + 3*account)
// mod 97, letters in the account mapped 1-9 in the RIB's own way.
func ribKey(b string) bool {
	conv := func(s string) int {
		m := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			d := int(c - '0')
			if c >= 'A' && c <= 'Z' {
				d = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7, 8, 9}[c-'A']
			}
			m = (m*10 + d) % 97
		}
		return m
	}
	key := 97 - (89*conv(b[:5])+15*conv(b[5:10])+3*conv(b[10:21]))%97
	return twoDigits(key) == b[21:23]
}

// spanishCheck checks the two control digits of a CCC: one over bank and
// branch, one over the account, weights 1,2,4,8,5,10,9,7,3,6 mod 11.
func spanishCheck(b string) bool {
	dc := func(s string) byte {
		w := []int{1, 2, 4, 8, 5, 10, 9, 7, 3, 6}
		sum := 0
		for i := 0; i < 10; i++ {
			sum += w[i] * int(s[i]-'0')
		}
		d := 11 - sum%11
		switch d {
		case 11:
			d = 0
		case 10:
			d = 1
		}
		return byte('0' + d)
	}
	return dc("00"+b[:8]) == b[8] && dc(b[10:20]) == b[9]
}

// italianCIN checks the CIN letter over ABI, CAB and account: odd
// positions through the conversion table, even ones by value, mod 26.
func italianCIN(b string) bool {
	odd := []int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}
	val := func(c byte) int {
		if c >= '0' && c <= '9' {
			return int(c - '0')
		}
		return int(c - 'A')
	}
	s := b[1:]
	sum := 0
	for i := 0; i < len(s); i++ {
		if i%2 == 0 {
			sum += odd[val(s[i])]
		} else {
			sum += val(s[i])
		}
	}
	return b[0] == byte('A'+sum%26)
}

// norwegianMod11 checks the account's last digit (weights 5,4,3,2,7,...).
func norwegianMod11(b string) bool {
	w := []int{5, 4, 3, 2, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i := 0; i < 10; i++ {
		sum += w[i] * int(b[i]-'0')
	}
	c := 11 - sum%11
	if c == 11 {
		c = 0
	}
	return c != 10 && byte('0'+c) == b[10]
}
