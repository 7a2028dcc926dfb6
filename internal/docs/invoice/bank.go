package invoice

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/checksum"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// parseIBAN reads an IBAN printed whole or in groups of four, cut at its
// country's length, and checks mod-97. A failing IBAN is tried with OCR's
// letter/digit confusions undone; if none passes it is reported as read
// with checksum_failed, never "fixed" into some other valid number.
func (x *run) parseIBAN(ws []word) (parsed, bool) {
	for i, w := range ws {
		t := strings.ToUpper(strings.TrimLeft(ibanGroup(w.text), "-"))
		if len(t) < 4 || !isUpperAlpha(t[:2]) || !checkDigitsLike(t[2:4]) {
			continue
		}
		s, used := t, []word{w}
		want := x.lx.ibanLengths[t[:2]]
		for j := i + 1; j < len(ws) && (want == 0 || len(s) < want); j++ {
			g := strings.ToUpper(ibanGroup(ws[j].text))
			// Groups of four; OCR may glue two together.
			if g == "" || len(g) > 4 && want == 0 || !isUpperAlnum(g) {
				break
			}
			s += g
			used = append(used, ws[j])
		}
		if want > 0 && len(s) > want {
			s = s[:want]
		}
		if len(s) < 15 || len(s) > 34 || !isUpperAlnum(s) {
			continue
		}
		fixed, issues := repairIBAN(s, want, minConf(used) < 1)
		return parsed{value: fixed, words: used, issues: issues}, true
	}
	return parsed{}, false
}

func repairIBAN(s string, want int, ocr bool) (string, []string) {
	lenOK := func(c string) bool { return want == 0 || len(c) == want }
	// Variants: digits everywhere after the country (DE, FR numeric BBANs),
	// or only after a four-letter bank code (GB, NL), with OCR's digits in
	// the bank code read back as letters.
	var variants []string
	for _, from := range []int{8, 2} {
		v := []byte(s)
		for k := 2; k < len(v); k++ {
			switch {
			case k >= from || k < 4:
				if d, ok := ibanDigit(v[k]); ok {
					v[k] = d
				}
			case from == 8 && k < 8:
				v[k] = digitToLetter(v[k])
			}
		}
		if c := string(v); c != s && lenOK(c) && ibanValid(c) {
			variants = append(variants, c)
		}
	}
	// An OCR'd IBAN with look-alike letters past the bank code is read
	// with digits there even when the letters happen to pass mod-97 (one
	// corrupted IBAN in 97 does).
	if ocr && len(variants) > 0 && hasLookAlike(s, 8) {
		return variants[0], []string{result.IssueOCRCorrected}
	}
	if lenOK(s) && ibanValid(s) {
		return s, nil
	}
	if len(variants) > 0 {
		return variants[0], []string{result.IssueOCRCorrected}
	}
	if ocr && lenOK(s) {
		if fixed, ok := confusedDigit(s, 2, ibanValid); ok {
			return fixed, []string{result.IssueOCRCorrected}
		}
	}
	return s, []string{result.IssueChecksumFailed}
}

// ibanGroup is one printed group of an IBAN without the punctuation OCR
// adds to it: edge marks, a speck read as '.' inside a group ("9268.19"),
// a degree sign after the last ("31°").
func ibanGroup(s string) string {
	s = strings.Trim(s, ":.,;()'\"°_")
	if strings.HasPrefix(s, "-") {
		return "-" + strings.Map(ibanRune, s)
	}
	return strings.Map(ibanRune, s)
}

// ibanRune keeps letters and digits, reading '@' and '§' (never letters
// in an IBAN) as the digits OCR took them for.
func ibanRune(r rune) rune {
	switch {
	case r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z':
		return r
	case r == '@' || r == '§':
		d, _ := ocrDigit(r)
		return d
	}
	return -1
}

// digitConfusions are the digits tesseract reads for one another in
// degraded print, likeliest first: a 0 read as 6, 8 or 9 (most of the
// misread digits observed on scans, photos and faxes), then 5/6, 3/8 and
// 1/7.
var digitConfusions = []map[byte]string{
	{'6': "0", '8': "0", '9': "0"},
	{'0': "689", '6': "58", '8': "369", '9': "8", '5': "63", '3': "85", '1': "74", '7': "1", '4': "1"},
}

// confusedDigit repairs one digit of s (from byte from on) that OCR
// confused with another, when exactly one repair of the likeliest kind
// that has any passes valid. A check digit scheme catches every
// single-digit error, so the printed number is among the candidates; if
// another candidate of the same kind also passes, nothing is repaired:
// never a guess between two valid numbers.
func confusedDigit(s string, from int, valid func(string) bool) (string, bool) {
	for _, tier := range digitConfusions {
		var found []string
		for k := from; k < len(s); k++ {
			for _, alt := range []byte(tier[s[k]]) {
				v := []byte(s)
				v[k] = alt
				if c := string(v); valid(c) && !slices.Contains(found, c) {
					found = append(found, c)
				}
			}
		}
		switch len(found) {
		case 1:
			return found[0], true
		case 0:
			continue
		}
		return "", false
	}
	return "", false
}

// abaValid is the ABA routing number check (weights 3, 7, 1).
func abaValid(s string) bool { return checksum.ABA(s) }

// parseRouting reads a routing number; an OCR'd one failing its check
// digit is repaired when exactly one confused digit explains it, else
// reported as read with checksum_failed.
func parseRouting(ws []word) (parsed, bool) {
	p, ok := parseDigits(ws, 9, 9)
	if !ok || abaValid(p.value) || minConf(p.words) >= 1 {
		return p, ok
	}
	if fixed, ok := confusedDigit(p.value, 0, abaValid); ok {
		p.value, p.issues = fixed, appendOnce(p.issues, result.IssueOCRCorrected)
		return p, true
	}
	p.issues = appendOnce(p.issues, result.IssueChecksumFailed)
	return p, true
}

func hasLookAlike(s string, from int) bool {
	for k := from; k < len(s); k++ {
		if _, ok := ibanDigit(s[k]); ok {
			return true
		}
	}
	return false
}

// ibanDigit is ocrDigit after upper-casing: a read "l" arrives as "L".
func ibanDigit(b byte) (byte, bool) {
	if b == 'L' {
		return '1', true
	}
	d, ok := ocrDigit(rune(b))
	return byte(d), ok
}

// checkDigitsLike: the two IBAN check digits, as digits or OCR's letters.
func checkDigitsLike(s string) bool {
	for _, r := range s {
		if _, ok := ibanDigit(byte(r)); !ok && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func digitToLetter(b byte) byte {
	switch b {
	case '0':
		return 'O'
	case '1':
		return 'I'
	case '5':
		return 'S'
	case '8':
		return 'B'
	}
	return b
}

// ibanValid is the ISO 13616 shape and mod-97 check.
func ibanValid(s string) bool {
	return len(s) >= 15 && isUpperAlpha(s[:2]) && isDigits(s[2:4]) && checksum.IBANMod97(s)
}

// parseBIC reads an 8- or 11-character BIC, undoing OCR digits in its
// six letter positions.
func parseBIC(ws []word) (parsed, bool) {
	for _, w := range ws {
		raw := strings.Trim(w.text, ":.,;()")
		var issues []string
		if len(raw) == 12 && w.conf < 1 && strings.HasSuffix(strings.ToUpper(raw), "XXXX") {
			// "INGDDEFFXXxX": tesseract doubled the branch's X.
			raw, issues = raw[:11], []string{result.IssueOCRCorrected}
		}
		t := strings.ToUpper(raw)
		if len(t) != 8 && len(t) != 11 || !isUpperAlnum(t) {
			continue
		}
		v := []byte(t)
		for k := 0; k < 6; k++ {
			if l := digitToLetter(v[k]); l != v[k] {
				v[k] = l
				issues = []string{result.IssueOCRCorrected}
			}
		}
		if !isUpperAlpha(string(v[:6])) {
			continue
		}
		return parsed{value: string(v), words: []word{w}, issues: issues}, true
	}
	return parsed{}, false
}

func isUpperAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return s != ""
}

func isUpperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
