// Package checksum holds the check-digit algorithms of banking identifiers
// that both the guest (to repair an OCR misreading only when exactly one
// repair passes) and the host (to judge what the guest claims) need. One
// implementation, so the two sides can never disagree about what valid
// means. Standard library only; it interprets no documents.
//
// The PII verifier deliberately does not use it: its whole point is to be
// independent of the code it checks.
package checksum

import "math/big"

// IBANMod97 reports whether s (upper-case, no spaces) passes the ISO 13616
// mod-97 check. It does not check the country's length.
func IBANMod97(s string) bool {
	if len(s) < 5 {
		return false
	}
	digits := make([]byte, 0, 2*len(s))
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, byte(c))
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			digits = append(digits, byte('0'+v/10), byte('0'+v%10))
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(string(digits), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// ABA reports whether s is a 9-digit US routing number whose check digit
// holds: 3(d1+d4+d7) + 7(d2+d5+d8) + (d3+d6+d9) = 0 mod 10. All zeros is
// not a routing number.
func ABA(s string) bool {
	if len(s) != 9 || s == "000000000" {
		return false
	}
	for i := 0; i < 9; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	d := func(i int) int { return int(s[i] - '0') }
	return (3*(d(0)+d(3)+d(6))+7*(d(1)+d(4)+d(7))+d(2)+d(5)+d(8))%10 == 0
}
