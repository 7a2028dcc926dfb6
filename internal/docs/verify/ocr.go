package verify

import (
	"regexp"
	"strings"
	"unicode"
)

// A leak on a page read by OCR may come back misread: a digit as a letter
// ("199@", "5O4-22-2846"), the "@" of an address as a symbol or with a
// space, an IBAN with a digit lost so its checksum fails. The rules that
// confirm a value by its structure would then pass it, so OCR pages are
// also checked as read with look-alikes taken for digits, and by rules of
// their own that ask for less. (The verifier's own reading, kept apart
// from the redactor's.)

// lookalike maps what OCR prints for a digit to the digit; one byte for
// one, so offsets do not move.
var lookalike = map[byte]byte{'O': '0', 'o': '0', 'Q': '0', 'D': '0', '@': '0', 'l': '1', 'I': '1',
	'|': '1', 'S': '5', 'B': '8', 'Z': '2'}

// asDigits replaces look-alikes in every word that has two or more
// digits, no other letters and no more look-alikes than digits.
func asDigits(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		digits, like, other := 0, 0, 0
		for _, r := range text[i:j] {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r < 0x80 && lookalike[byte(r)] != 0:
				like++
			case unicode.IsLetter(r):
				other++
			}
		}
		if digits >= 2 && like > 0 && like <= digits && other == 0 {
			for k := i; k < j; k++ {
				if d, ok := lookalike[b[k]]; ok {
					b[k] = d
				}
			}
		}
		i = j + 1
	}
	return string(b)
}

func ocrRules() []rule { return []rule{ocrEmails, ibanWord} }

// ocrAt: an address with a space or a line break around its "@", a line
// break after a dot of its domain, or a symbol OCR read for the "@".
var ocrAt = regexp.MustCompile(`([\p{L}\p{N}._%+\-]{2,64})([ \t]?@[ \t]?\n?[ \t]?|[ \t]?[«»©®][ \t]?|[ \t][4Q&][ \t])([\p{L}\p{N}\-–—]+(?:\.(?:[ \t]*\n[ \t]*)?[\p{L}\p{N}\-–—]+)+)`)

// ocrEmails: what ocrAt finds whose last domain label is two or more
// letters and no file or private name, after a local part that is no
// plain word unless an "@" (or a sign only OCR would print) joins them.
func ocrEmails(sub *subject) []hit {
	var out []hit
	for _, m := range ocrAt.FindAllStringSubmatchIndex(sub.s, -1) {
		local, sep, dom := sub.s[m[2]:m[3]], strings.TrimSpace(sub.s[m[4]:m[5]]), sub.s[m[6]:m[7]]
		tld := strings.ToLower(dom[strings.LastIndexByte(dom, '.')+1:])
		if len([]rune(tld)) < 2 || !allUnicodeLetters(tld) || notDomains[tld] {
			continue
		}
		if sep != "@" && !strings.ContainsAny(sep, "«»©®") && !strings.ContainsAny(local, "0123456789._+-") {
			continue
		}
		out = append(out, hit{"EMAIL", "ocr-address", m[2], m[7]})
	}
	return out
}

// ibanShape: a country code, two digits and ten or more capitals or
// digits in groups.
var ibanShape = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]){10,30}`)

// ibanWord: an IBAN-shaped value within a few characters after the word
// IBAN, checksum or not (OCR may have changed a digit).
func ibanWord(sub *subject) []hit {
	var out []hit
	for i := strings.Index(sub.lower, "iban"); i >= 0; {
		from := i + 4
		win := sub.s[from:min(len(sub.s), from+48)]
		if loc := ibanShape.FindStringIndex(win); loc != nil && loc[0] <= 8 {
			out = append(out, hit{"IBAN", "iban-word", from + loc[0], from + loc[1]})
		}
		next := strings.Index(sub.lower[from:], "iban")
		if next < 0 {
			break
		}
		i = from + next
	}
	return out
}
