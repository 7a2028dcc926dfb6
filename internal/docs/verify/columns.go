package verify

import (
	"strings"
)

// nameHeaders are column names whose cells are people (the verifier's own
// list).
var nameHeaders = map[string]bool{"name": true, "full name": true, "first name": true, "last name": true,
	"given name": true, "family name": true, "surname": true, "patient": true, "employee": true,
	"customer": true, "client": true, "contact": true, "cardholder": true, "account holder": true,
	"applicant": true, "tenant": true, "beneficiary": true, "borrower": true, "guarantor": true,
	"insured": true, "witness": true, "signed by": true, "emergency contact": true, "patient name": true,
	"employee name": true, "customer name": true, "contact name": true}

// columns: in a delimited table (CSV, TSV, semicolons) a header cell
// gives its column's meaning, which no cell repeats: every cell under a
// birth-date header is checked for a date, every cell under a name header
// for a name.
func columns(sub *subject) []hit {
	nl := strings.IndexByte(sub.s, '\n')
	if nl < 0 {
		return nil
	}
	delim := tableDelim(sub.s[:nl])
	if delim == 0 {
		return nil
	}
	recs := records(sub.s, delim)
	if len(recs) < 2 {
		return nil
	}
	kinds := headerKinds(sub, recs[0])
	var out []hit
	for _, rec := range recs[1:] {
		for c, cell := range rec {
			if c >= len(kinds) || kinds[c] == 0 {
				continue
			}
			a, b := cell[0], cell[1]
			for a < b && (sub.s[a] == '"' || sub.s[a] == ' ') {
				a++
			}
			v := sub.s[a:b]
			switch kinds[c] {
			case 'd':
				if d := dateish.FindStringIndex(v); d != nil {
					out = append(out, hit{"DATE_OF_BIRTH", "column", a + d[0], a + d[1]})
				}
			case 'n':
				if x, y, ok := nameAfterRole(v, 0); ok {
					out = append(out, hit{"PERSON", "column", a + x, a + y})
				}
			case 'a':
				if hasAlnum(v) {
					out = append(out, hit{"STREET_ADDRESS", "column", a, b})
				}
			case 'p', 'b':
				if digitCount(v) >= map[byte]int{'p': 7, 'b': 6}[kinds[c]] {
					out = append(out, hit{map[byte]string{'p': "PHONE", 'b': "US_BANK_ACCOUNT"}[kinds[c]], "column", a, b})
				}
			}
		}
	}
	return out
}

// Header words of columns that hold phones, bank numbers, and address
// parts (the verifier's own lists; parts other than a street count only
// when the table has a street column).
var (
	phoneHeaders  = keySet(`phone telephone tel mobile mobilephone cell cellphone fax telefoon telefon handy`)
	bankHeaders   = keySet(`routing routingnumber aba account accountnumber accountno acct iban`)
	streetHeaders = keySet(`street streetaddress address1 addressline1 line1 housenumber straat strasse straße rue`)
)

// headerKinds says what each column of a table holds: 'd' birth dates,
// 'n' names, 'a' address parts, 'p' phones, 'b' bank numbers, or 0.
func headerKinds(sub *subject, head [][2]int) []byte {
	kinds := make([]byte, len(head))
	street := false
	keys := make([]string, len(head))
	for c, cell := range head {
		h := strings.ToLower(strings.Trim(sub.s[cell[0]:cell[1]], "\uFEFF\" \t\r"))
		h = strings.Join(strings.FieldsFunc(h, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }), " ")
		keys[c] = normKey(h)
		street = street || streetHeaders[keys[c]]
		switch {
		case nameHeaders[h]:
			kinds[c] = 'n'
		case len(birthDates(newSubject(h+" 01/01/2000"))) > 0:
			kinds[c] = 'd'
		case phoneHeaders[keys[c]]:
			kinds[c] = 'p'
		case bankHeaders[keys[c]]:
			kinds[c] = 'b'
		}
	}
	for c := range head {
		if kinds[c] == 0 && (streetHeaders[keys[c]] || street && partKeys[keys[c]]) {
			kinds[c] = 'a'
		}
	}
	return kinds
}

func digitCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// tableDelim returns the delimiter a header line uses (comma, semicolon
// or tab, whichever it has most of), or 0.
func tableDelim(head string) byte {
	best, n := byte(0), 0
	for _, d := range []byte{',', ';', '\t'} {
		if k := strings.Count(head, string(d)); k > n {
			best, n = d, k
		}
	}
	return best
}

// records splits s into records of cells (byte ranges), quotes honoured
// (a quoted cell may hold delimiters and line breaks). Records whose cell
// count differs from the header's end the table.
func records(s string, delim byte) [][][2]int {
	var out [][][2]int
	var rec [][2]int
	start, quoted := 0, false
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] == '"' {
			quoted = !quoted
			continue
		}
		if i < len(s) && (quoted || s[i] != delim && s[i] != '\n') {
			continue
		}
		end := i
		if end > start && s[end-1] == '\r' {
			end--
		}
		rec = append(rec, [2]int{start, end})
		start = i + 1
		if i < len(s) && s[i] == delim {
			continue
		}
		if len(out) > 0 && len(rec) != len(out[0]) {
			if len(rec) > 1 {
				break
			}
			rec = nil
			continue // a blank or stray line
		}
		out = append(out, rec)
		rec = nil
	}
	return out
}
