package verify

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// birthWord: words that say a date nearby is a birth date.
	birthWord = regexp.MustCompile(`(?i)\b(?:birth|born|dob|d\.o\.b|bday|geburt\w*|geboren|naissance|nacimiento|nascita|nato|nata|née?)\b|рожд|生年月日|出生`)
	// dateish: a date written with numbers, or with a month name.
	dateish = regexp.MustCompile(`(?i)\b[0-9]{1,4}[-/.][0-9]{1,2}[-/.][0-9]{2,4}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+[0-9]{1,2}(?:st|nd|rd|th)?,?\s+[0-9]{4}\b|\b[0-9]{1,2}(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+[0-9]{4}\b`)
)

// birthDates: a date within 40 characters after a birth word.
func birthDates(sub *subject) []hit {
	var out []hit
	for _, l := range birthWord.FindAllStringIndex(sub.s, -1) {
		end := min(len(sub.s), l[1]+40)
		if d := dateish.FindStringIndex(sub.s[l[1]:end]); d != nil {
			out = append(out, hit{"DATE_OF_BIRTH", "birth-word", l[1] + d[0], l[1] + d[1]})
		}
	}
	return out
}

var (
	// honorific + a capitalised word: "Dr. Okafor", "Ms Kim", "Herr Müller".
	honorific = regexp.MustCompile(`\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Sig|Dott)\.?[ \t]+\p{Lu}[\p{Ll}\p{M}'’-]+`)
	// a name label and what follows it on the line: "Name: ...",
	// "\"customer_name\": \"...\"", "Имя: ...", "姓名：...".
	nameLabel = regexp.MustCompile(`(?i)(?:\b(?:full[ _]?name|first[ _]?name|last[ _]?name|given[ _]?name|family[ _]?name|surname|name|patient|customer|employee|cardholder|card[ _]holder|account[ _]holder|applicant|tenant|beneficiary|contact|signed[ _]by|emergency[ _]contact|nom|prénom|vorname|nachname|nombre|apellidos?|nome|cognome)"?[ \t]*[:=][ \t]*"?|(?:имя|фамилия|όνομα|επώνυμο)[ \t]*:[ \t]*|(?:姓名|氏名|名前|이름)[ \t]*[:：][ \t]*)`)
	dearWord  = regexp.MustCompile(`\b(?:Dear|Hi|Hello)[ \t]+\p{Lu}[\p{Ll}\p{M}'’-]+`)
	notAName  = map[string]bool{"sir": true, "madam": true, "all": true, "team": true, "customer": true,
		"colleague": true, "colleagues": true, "friends": true, "none": true, "n/a": true, "unknown": true,
		"true": true, "false": true, "null": true, "yes": true, "no": true, "the": true}
)

// names: a title before a capitalised word; a name label followed on the
// same line by a word in any script (not a placeholder, not a mask); a
// letter's salutation.
func names(sub *subject) []hit {
	var out []hit
	for _, l := range honorific.FindAllStringIndex(sub.s, -1) {
		out = append(out, hit{"PERSON", "honorific", l[0], l[1]})
	}
	for _, l := range dearWord.FindAllStringIndex(sub.s, -1) {
		w := strings.Fields(sub.s[l[0]:l[1]])
		if len(w) == 2 && !notAName[strings.ToLower(w[1])] {
			out = append(out, hit{"PERSON", "salutation", l[0], l[1]})
		}
	}
	for _, l := range nameLabel.FindAllStringIndex(sub.s, -1) {
		if a, b := firstWord(sub.s, l[1]); b > a && !notAName[strings.ToLower(sub.s[a:b])] {
			out = append(out, hit{"PERSON", "name-label", a, b})
		}
	}
	return out
}

// firstWord returns the word starting at i (letters of any script, marks,
// apostrophes, hyphens) if it starts with a letter.
func firstWord(s string, i int) (int, int) {
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !(unicode.IsLetter(r) || unicode.Is(unicode.M, r) || (j > i && strings.ContainsRune("'’-", r))) {
			break
		}
		j += n
	}
	return i, j
}

var (
	// A house number, one to four capitalised words and a street word.
	streetLine = regexp.MustCompile(`\b[0-9]{1,5}[A-Za-z]?[ \t]+(?:\p{Lu}[\p{L}'’.-]*[ \t]+){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Close|Crescent|Gardens|Square)\b`)
	// "City, ST 12345" and "ST 12345-6789".
	cityStateZip = regexp.MustCompile(`\p{Lu}[\p{L}.'-]+,[ \t]+[A-Z]{2}[ \t]+[0-9]{5}(?:-[0-9]{4})?\b`)
	// A UK postcode after a town.
	ukPostcode = regexp.MustCompile(`\p{Lu}[\p{Ll}]+[ \t]+[A-Z]{1,2}[0-9][A-Z0-9]?[ \t]?[0-9][A-Z]{2}\b`)
	// Continental: street word with a number, then a postal code and town.
	euStreet = regexp.MustCompile(`(?i)(?:stra(?:ß|ss)e|str\.|weg|allee|gasse|platz|rue|avenue|boulevard|calle|via|viale|piazza|straat|gracht|laan)[ \t]+[0-9]{1,4}[a-z]?\b[^\n]{0,40}?\b[0-9]{4,5}[ \t]+\p{Lu}|\b[0-9]{1,4},?[ \t]+(?:rue|avenue|boulevard|place|chemin|allée|quai)[ \t][^\n]{2,60}?\b[0-9]{5}[ \t]+\p{Lu}`)
	poBox    = regexp.MustCompile(`(?i)\bp\.?\s?o\.?\s?box[ \t]+[0-9]+`)
)

// addresses: a street line, a city-state-ZIP line, a UK town and
// postcode, a continental street and postal code, a PO box.
func addresses(sub *subject) []hit {
	var out []hit
	for _, re := range []*regexp.Regexp{streetLine, cityStateZip, ukPostcode, euStreet, poBox} {
		for _, l := range re.FindAllStringIndex(sub.s, -1) {
			out = append(out, hit{"STREET_ADDRESS", "street-words", l[0], l[1]})
		}
	}
	return out
}
