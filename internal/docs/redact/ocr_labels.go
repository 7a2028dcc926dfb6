package redact

import (
	"regexp"
	"strings"
)

// A label vouches for the value after it on an OCR page: "Routing number:
// Q@52229800" is a routing number whatever its checksum says, since OCR
// may have changed a digit, dropped one or added one. The value is read
// by its shape alone: mostly digits (a number), capitals and digits (an
// IBAN), a numeric date, an address around a domain (an e-mail whose "@"
// OCR lost).

// vouchedTypes are the types whose label may vouch for a misread value,
// in the order a label of several types ("account": IBAN and bank
// account) is read: a value that is mostly digits is an account number.
var vouchedTypes = []Type{SSN, CreditCard, BankRouting, BankAccount, Passport, DriverLicense, Phone, IBAN,
	DateOfBirth, Email}

// minDigits is how many digits (look-alikes aside) a labelled value of
// each type needs: most of the shortest real one, so a digit or two lost
// to OCR still counts, but a card's last four ("card ending in 2118") or
// a short reference does not.
var minDigits = map[Type]int{SSN: 7, CreditCard: 11, BankRouting: 7, BankAccount: 5, Passport: 6,
	DriverLicense: 5, Phone: 6, IBAN: 10}

// ocrLabelled returns, after each label of a vouched type, the value that
// follows (see valueStart) when it has that type's shape: a date, an
// IBAN, an address (see the run functions), or for the number types
// mostly digits (look-alikes and separators aside), at most six chunks
// with minDigits of its type.
func (a *Analyzer) ocrLabelled(text string) []span {
	w := newWindow(a.lx, text)
	var out []span
	for _, l := range w.labels {
		typ := Type("")
		for _, t := range vouchedTypes {
			if l.has(t) && a.pol.Enabled(t) {
				typ = t
				break
			}
		}
		if typ == "" || l.endTok >= len(w.toks) {
			continue
		}
		start, ok := valueStart(w, l)
		if !ok {
			continue
		}
		var end int
		switch typ {
		case IBAN:
			end = ibanRun(text, start)
		case DateOfBirth:
			end = dateRun(text, start)
		case Email:
			end = a.emailRun(text, start)
		default:
			end = digitRun(text, start, minDigits[typ])
		}
		if end > start {
			out = append(out, span{start: start, end: end, typ: typ, score: 0.8, detector: strings.ToLower(string(typ)) + "/ocr_label"})
		}
	}
	return out
}

// valueStart returns where the value after label l begins: the next
// token, past a colon, "#" or a stray sign OCR put there ("Card:
// $579-..."), at most two short lower-case words ("number as", "is") and
// at most one line break (a wrapped paragraph).
func valueStart(w *window, l label) (int, bool) {
	k, lines := l.endTok, 0
	for skip := 0; k < len(w.toks); k++ {
		t := w.toks[k]
		g := w.text[w.toks[k-1].end:t.start]
		if lines += strings.Count(g, "\n"); len(strings.TrimSpace(g)) > 3 || len(g) > 6 || lines > 1 {
			return 0, false
		}
		s := w.text[t.start:t.end]
		if t.digits || skip == 2 || len(s) > 3 || strings.ToLower(s) != s {
			return t.start, true
		}
		skip++
	}
	return 0, false
}

// digitRun returns the end of the mostly-digit chunks from start
// (trailing punctuation left out), or start when they hold fewer than
// need digits.
func digitRun(text string, start, need int) int {
	end, digits := start, 0
	for i, n := start, 0; i < len(text) && n < 6; n++ {
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' {
			j++
		}
		d, like, other := chunkCounts(text[i:j])
		if d == 0 || 2*(like+other) > d {
			break
		}
		end, digits = j, digits+d
		// A value goes on past a space, or past a line break while it is
		// still too short to be whole ("798-05-" over "172").
		if j >= len(text) || text[j] != ' ' && (text[j] != '\n' || digits >= need) {
			break
		}
		i = j + 1
	}
	if digits < need {
		return start
	}
	return start + len(strings.TrimRight(text[start:end], ".,;:)"))
}

// ibanRun returns the end of an IBAN-shaped run from start on its line:
// groups of capitals, digits and digit look-alikes, 12 to 34 of them, at
// least half digits; or start.
func ibanRun(text string, start int) int {
	end, n, digits := start, 0, 0
	for i, groups := start, 0; i < len(text) && groups < 9; groups++ {
		j := i
		for j < len(text) && (text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9' || digitLike[text[j]] != 0) {
			j++
		}
		if j == i || n+j-i > 34 || j < len(text) && text[j] != ' ' && text[j] != '\n' && !strings.ContainsRune(".,;)", rune(text[j])) {
			break
		}
		d, _, _ := chunkCounts(text[i:j])
		end, n, digits = j, n+j-i, digits+d
		if j >= len(text) || text[j] != ' ' {
			break
		}
		i = j + 1
	}
	if n < 12 || 2*digits < n {
		return start
	}
	return end
}

// dateShape is a numeric date, look-alikes allowed ("99.12.1970" is a
// misread "09.12.1970": it need not be a valid date).
var dateShape = regexp.MustCompile(`^[0-9OoQDlISBZ@]{1,4}[./-][0-9OoQDlISBZ@]{1,2}[./-][0-9OoQDlISBZ@]{2,4}`)

// dateRun returns the end of a numeric date at start, or start.
func dateRun(text string, start int) int {
	if m := dateShape.FindStringIndex(text[start:]); m != nil {
		return start + m[1]
	}
	return start
}

// emailRun returns the end of an address at start: at most three chunks
// on the line, the last ending in a domain with a listed top-level
// domain ("tholath+billing outlook.com", where OCR lost the "@"); or
// start.
func (a *Analyzer) emailRun(text string, start int) int {
	for i, n := start, 0; i < len(text) && n < 3; n++ {
		j := i
		for j < len(text) && text[j] != ' ' && text[j] != '\n' && text[j] != '\t' {
			j++
		}
		chunk := strings.TrimRight(text[i:j], ".,;:)")
		if dot := strings.LastIndexByte(chunk, '.'); dot > 0 && dot > strings.LastIndexAny(chunk, "@«»©®") {
			if a.lx.tlds[strings.ToLower(chunk[dot+1:])] && n > 0 || strings.ContainsAny(text[start:i+len(chunk)], "@«»©®") {
				return i + len(chunk)
			}
		}
		if j >= len(text) || text[j] != ' ' {
			break
		}
		i = j + 1
	}
	return start
}
