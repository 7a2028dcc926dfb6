package verify

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// birthWord: words that say a date nearby is a birth date. Letters
	// must not touch them ("stubborn", "Osborne"); an underscore may
	// ("date_of_birth").
	birthWord = regexp.MustCompile(`(?i)birthday|birthdate|birth|born|dob|d\.o\.b|bday|geburt\p{L}*|geboren|geb\.|geboorte\p{L}*|naissance|nacimiento|nascita|nato|nata|née?|рожд\p{L}*|生年月日|出生|\(b\.`)
	// dateish: a date written with numbers, or with a month name.
	dateish = regexp.MustCompile(`(?i)\b[0-9]{1,4}[-/.][0-9]{1,2}[-/.][0-9]{2,4}\b|` +
		`\b(?:` + monthWords + `)\.?\s+[0-9]{1,2}(?:st|nd|rd|th)?,?\s+(?:[0-9]{4}|[0-9]{2})\b|` +
		`\b[0-9]{1,2}(?:st|nd|rd|th|er|e|º)?\.?\s+(?:of\s+|de\s+)?(?:` + monthWords + `)\.?,?\s+(?:de\s+)?(?:[0-9]{4}|[0-9]{2})\b|` +
		`\b[0-9]{1,2}[-/. ](?:` + monthWords + `)\.?[-/. ](?:[0-9]{4}|[0-9]{2})\b|[0-9]{4}年[0-9]{1,2}月[0-9]{1,2}日`)
)

// monthWords are month names and their short forms in English,
// German, French, Dutch, Spanish, Italian and Portuguese (the verifier's
// own list).
const monthWords = `jan[a-z]*|feb[a-z]*|mar[a-z]*|apr[a-z]*|may|jun[a-z]*|jul[a-z]*|aug[a-z]*|sep[a-z]*|oct[a-z]*|nov[a-z]*|dec[a-z]*|` +
	`märz|mai|okt[a-z]*|dez[a-z]*|janv[a-z]*|févr[a-z]*|fevr[a-z]*|mars|avril|juin|juil[a-z]*|août|aout|sept[a-z]*|déc[a-z]*|` +
	`maart|mei|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|` +
	`gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|janeiro|fevereiro|março|maio|junho|julho|` +
	`setembro|outubro|novembro|dezembro`

// birthDates: a date within 40 characters after a birth word on its
// line, or opening the next line when nothing but the label's colon is
// left on this one (a form's value under its label). A date further on,
// after another label ("Date of birth:\nVisit date: 03/14/2024"), is
// that label's.
func birthDates(sub *subject) []hit {
	var out []hit
	for _, l := range birthWord.FindAllStringIndex(sub.s, -1) {
		if letterAt(sub.s, l[0]-1, true) || letterAt(sub.s, l[1], false) && !camelNext(sub.s, l[1]) {
			continue
		}
		eol := strings.IndexByte(sub.s[l[1]:], '\n')
		if eol < 0 {
			eol = len(sub.s) - l[1]
		}
		// The date starts on the birth word's line (it may wrap).
		seg := sub.s[l[1]:min(len(sub.s), l[1]+40)]
		if d := dateish.FindStringIndex(seg); d != nil && d[0] < eol {
			out = append(out, hit{"DATE_OF_BIRTH", "birth-word", l[1] + d[0], l[1] + d[1]})
			continue
		}
		next := l[1] + eol + 1
		if strings.Trim(sub.s[l[1]:l[1]+eol], " \t\r:=-\"'") != "" || next >= len(sub.s) {
			continue
		}
		line := sub.s[next:min(len(sub.s), next+40)]
		if d := dateish.FindStringIndex(line); d != nil && strings.TrimSpace(line[:d[0]]) == "" {
			out = append(out, hit{"DATE_OF_BIRTH", "birth-word", next + d[0], next + d[1]})
		}
	}
	return out
}

// camelNext: an upper-case letter goes on from a lower-case word
// ("birthDate"), a new word in a camelCase key.
func camelNext(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsUpper(r) && unicode.IsLower(p)
}

// letterAt reports whether the rune ending (before) or starting at i is a
// letter.
func letterAt(s string, i int, before bool) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	var r rune
	if before {
		r, _ = utf8.DecodeLastRuneInString(s[:i+1])
	} else {
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	return unicode.IsLetter(r)
}

var (
	// honorific + a capitalised word: "Dr. Okafor", "Ms Kim", "Herr Müller".
	honorific = regexp.MustCompile(`\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Sig|Dott)\.?[ \t]+\p{Lu}[\p{Ll}\p{M}'’-]+`)
	// a name label and what follows it: "Name: ...", "\"customer_name\":
	// \"...\"", "Имя: ...", "姓名：...". Whatever word follows is taken.
	nameLabel = regexp.MustCompile(`(?i)(?:\b(?:full[ _]?name|first[ _]?name|last[ _]?name|given[ _]?name|family[ _]?name|surname|name|nom|prénom|vorname|nachname|nombre|apellidos?|nome|cognome)"?[ \t]*[:=][ \t]*"?|(?:имя|фамилия|όνομα|επώνυμο)[ \t]*:[ \t]*|(?:姓名|氏名|名前|이름)[ \t]*[:：][ \t]*)`)
	// a role label: what follows is a person only when it reads like a
	// name ("Patient: Tavi Rennick", not "Tenant: Unit 4B").
	roleLabel = regexp.MustCompile(`(?i)\b(?:patient|customer|client|employee|cardholder|card[ _]holder|account[ _]holder|applicant|tenant|borrower|co-borrower|guarantor|claimant|insured|policyholder|beneficiary|contact|emergency[ _]contact|witness|signed(?:[ _]by)?|prepared[ _]by|approved[ _]by|attn|attention|recipient|sender|next[ _]of[ _]kin|spouse|guardian)"?[ \t]*[:=][ \t]*"?`)
	// memo header labels, only at the start of a line ("To:", "From:").
	memoLabel = regexp.MustCompile(`(?im)^[ \t]*(?:to|from|cc)[ \t]*:[ \t]*`)
	// cue words in running text before a name: two or more name-like
	// words after them are a person ("please contact Ama Owusu").
	cueWord  = regexp.MustCompile(`(?i)\b(?:contact|call|ask for|speak (?:with|to)|case officer|representative|(?:signed|prepared|approved|witnessed) by|transfer from)[ \t]*`)
	dearWord = regexp.MustCompile(`\b(?:Dear|Hi|Hello)[ \t]+\p{Lu}[\p{Ll}\p{M}'’-]*`)
	notAName = map[string]bool{"sir": true, "madam": true, "all": true, "team": true, "customer": true,
		"colleague": true, "colleagues": true, "friends": true, "none": true, "n/a": true, "unknown": true,
		"true": true, "false": true, "null": true, "yes": true, "no": true, "the": true}
	// titles are skipped to reach the name they stand before.
	titles = map[string]bool{"mr": true, "mrs": true, "ms": true, "miss": true, "mx": true, "dr": true,
		"prof": true, "sir": true, "madam": true, "herr": true, "frau": true, "mme": true, "mlle": true}
	// roleNotNames: words that, after a role label, say it is not a
	// person that follows (a department, an organisation, a unit, "see
	// attached"). The verifier's own list, kept apart from the redactor's.
	roleNotNames = map[string]bool{"all": true, "staff": true, "team": true, "department": true, "dept": true,
		"office": true, "services": true, "service": true, "support": true, "desk": true, "accounts": true,
		"payable": true, "receivable": true, "billing": true, "payroll": true, "human": true, "resources": true,
		"customer": true, "customers": true, "reception": true, "management": true, "board": true,
		"committee": true, "holdings": true, "llc": true, "inc": true, "ltd": true, "corp": true,
		"company": true, "group": true, "bank": true, "trust": true, "estate": true, "unit": true,
		"building": true, "apartment": true, "suite": true, "family": true, "household": true, "see": true,
		"attached": true, "list": true, "below": true, "above": true, "same": true, "self": true,
		"none": true, "unknown": true, "tbd": true, "n": true, "na": true, "various": true,
		"insured": true, "policyholder": true, "applicant": true, "owner": true, "manager": true}
	// nameParticles may stand lower-case inside a name.
	nameParticles = map[string]bool{"de": true, "van": true, "von": true, "der": true, "den": true, "da": true,
		"di": true, "du": true, "la": true, "le": true, "del": true, "della": true, "bin": true, "ibn": true,
		"al": true, "y": true}
)

// names: a title before a capitalised word; a name label followed on the
// same line by a word in any script (not a placeholder, not a mask); a
// role or memo label followed by what reads like a name; a letter's
// salutation.
func names(sub *subject) []hit {
	var out []hit
	for _, l := range honorific.FindAllStringIndex(sub.s, -1) {
		out = append(out, hit{"PERSON", "honorific", l[0], l[1]})
	}
	for _, l := range dearWord.FindAllStringIndex(sub.s, -1) {
		if a, b, ok := salutation(sub.s, l); ok {
			out = append(out, hit{"PERSON", "salutation", a, b})
		}
	}
	for _, l := range nameLabel.FindAllStringIndex(sub.s, -1) {
		if a, b := firstWord(sub.s, l[1]); b > a && !notAName[strings.ToLower(sub.s[a:b])] {
			out = append(out, hit{"PERSON", "name-label", a, b})
		}
	}
	for _, re := range []*regexp.Regexp{roleLabel, memoLabel} {
		for _, l := range re.FindAllStringIndex(sub.s, -1) {
			if a, b, ok := nameAfterRole(sub.s, l[1]); ok {
				out = append(out, hit{"PERSON", "role-label", a, b})
			}
		}
	}
	for _, l := range cueWord.FindAllStringIndex(sub.s, -1) {
		if a, b, ok := nameWords(sub.s, l[1], true, 2); ok && !capitalAfter(sub.s, b) {
			out = append(out, hit{"PERSON", "cue", a, b})
		}
	}
	return out
}

// capitalAfter: a capitalised word follows at i after spaces (the words
// before it are then part of a longer title, not a name).
func capitalAfter(s string, i int) bool {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && unicode.IsUpper(r)
}

// salutation: "Dear Priya" is a name; "Dear Sir", "Dear Ms." before a
// placeholder, and a short word with a full stop (OCR's reading of a
// title next to a black box) are not.
func salutation(s string, l []int) (int, int, bool) {
	a := l[0] + strings.IndexAny(s[l[0]:l[1]], " \t")
	for a < l[1] && (s[a] == ' ' || s[a] == '\t') {
		a++
	}
	w := strings.ToLower(s[a:l[1]])
	if notAName[w] {
		return 0, 0, false
	}
	if titles[w] || utf8.RuneCountInString(w) <= 3 && strings.HasPrefix(s[l[1]:], ".") {
		return 0, 0, false // a title: the honorific rule judges what follows
	}
	return a, l[1], utf8.RuneCountInString(w) >= 2
}

// nameAfterRole returns the words after a role label on its line when
// they read like a name: a title is skipped; then up to four words, the
// first capitalised (or of a script without case), none with a digit,
// none lower-case but particles, none on roleNotNames.
func nameAfterRole(s string, i int) (int, int, bool) {
	return nameWords(s, i, false, 1)
}

// nameWords is nameAfterRole, optionally reading on over one line break
// (a wrapped paragraph), and wanting at least min words.
func nameWords(s string, i int, wrap bool, min int) (int, int, bool) {
	var words [][2]int
	breaks := 0
	for j := i; len(words) < 5; {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || wrap && s[j] == '\n' && breaks == 0) {
			if s[j] == '\n' {
				breaks++
			}
			j++
		}
		a, b := rawWord(s, j)
		if b == a || b < len(s) && s[b] == ':' {
			break // the end, or the next label ("Cardholder: Card:")
		}
		if r, _ := utf8.DecodeRuneInString(s[a:]); len(words) > 0 && unicode.IsLower(r) && !nameParticles[s[a:b]] {
			break // the sentence goes on ("Grace Kim presented with")
		}
		words = append(words, [2]int{a, b})
		j = b
		if j < len(s) && s[j] == '.' {
			j++
		}
	}
	for len(words) > 0 && titles[strings.ToLower(s[words[0][0]:words[0][1]])] {
		words = words[1:]
	}
	if len(words) < max(min, 1) || len(words) > 4 {
		return 0, 0, false
	}
	for k, w := range words {
		word := s[w[0]:w[1]]
		r, _ := utf8.DecodeRuneInString(word)
		switch {
		case strings.IndexFunc(word, unicode.IsDigit) >= 0 || roleNotNames[strings.ToLower(word)]:
			return 0, 0, false
		case !unicode.IsLetter(r):
			return 0, 0, false
		case unicode.IsLower(r) && (k == 0 || !nameParticles[word]):
			return 0, 0, false
		}
	}
	return words[0][0], words[len(words)-1][1], true
}

// rawWord returns the run of letters, digits, marks, apostrophes and
// hyphens starting at i (empty at anything else: punctuation, a
// placeholder, a line break).
func rawWord(s string, i int) (int, int) {
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) || (j > i && strings.ContainsRune("'’-", r))) {
			break
		}
		j += n
	}
	return i, j
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
	ukPostcode = regexp.MustCompile(`\p{Lu}[\p{Ll}]+,?[ \t\n]+[A-Z]{1,2}[0-9][A-Z0-9]?[ \t]?[0-9][A-Z]{2}\b`)
	// Continental: street word with a number, then a postal code and town
	// (on the same line or the next).
	euStreet = regexp.MustCompile(`(?i)(?:stra(?:ß|ss)e|str\.|weg|allee|gasse|platz|rue|avenue|boulevard|calle|via|viale|piazza|straat|gracht|laan)[ \t]+[0-9]{1,4}[a-z]?\b[^\n]{0,40}?(?:[ \t,]*\n[ \t]*)?\b[0-9]{4,5}[ \t]+\p{Lu}|\b[0-9]{1,4},?[ \t]+(?:rue|avenue|boulevard|place|chemin|allée|quai)[ \t][^\n]{2,60}?(?:[ \t,]*\n[ \t]*)?\b[0-9]{5}[ \t]+\p{Lu}`)
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
