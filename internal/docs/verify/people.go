package verify

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The verifier's own knowledge of names, compiled apart from the
// redactor's lists (a mistake both shared would let the same leak
// through twice): given names from many places, family names written
// first, and the words that end a would-be name. Given names that are
// also English words are left out of givenNames; they count only before
// a verb of saying (wordGiven) or after a title, label or cue.
var (
	givenNames = foldedSet(`
aaliyah abdul abdullah abebe adaeze adebayo adel adrian agnieszka ahmad ahmed aiden aigerim aino aisha aishwarya
akosua alejandro aleksander alessandro alexei alhassan ali alisher amani amara amina aminata amir anaïs anders
andrés andriy aneta anjali ankit anna anneke antoine antonio aoife arash arjun arnav astrid aurélie ayodele ayşe
babajide bao barış beatriz begoña benedikt bich bjørn björn bogdan bohdan brigitte bukola büşra camille carmen
catalina chaima chiamaka chidi chidinma chinedu chioma çağla cheng chloé ciarán clément conceição dagny daniela
daniyar dariusz dariush darragh dawit deepika dilnoza dimitri dmitri dmytro dörte dragan duc dylan ebru efua
eero eirik elif elin emeka emre enrique eoin erlan esra esperanza fatima fatoumata fernanda fiadh fionn françois
funmilayo gaël gaëlle gonzalo gudrun guðrún gulnara gunnhild gurpreet håkon halima hamid hana hannah hans
harpreet hassan haruka hélène hemi hiroshi hoa hugo huong hùng hyun ibrahim ifeoma ikechukwu ilse ines inês
ingrid ioana irina iryna iñigo ivan jakub jasper javier jelena jiří joão jochen joaquim jonas jørgen josé józef
juan jukka julia jürgen kalani kamal karim karin kasia katarzyna kateryna kavya kenji kenta khadija kofi kwabena
kwame lakshmi lamine lars laura layla leila lena linh liu lorenzo lucía łukasz maeve magdalena mai makena
malgorzata małgorzata mamadou manpreet marcin mariam marta mateo matilde mehmet meenakshi mei mele merve mette
miguel mihai mikko milan milena minh mohamed mohammad moussa mthunzi mustafa nadia naledi nasrin nathalie
navid ngozi nguyet niamh nikolai nilufar nkechi noor nour nuno nusrat océane ola oleksandr olena olga oliver
olumide oluwaseun omar oskar otabek özlem pádraig paolo parisa pedro per petra pieter piotr pooja priya quang
rafael rahul ramón rania rashid ravi reza rhys rodrigo rohan róisín rui rustam sadia saeed sakura salma samir
sandeep sanjay santiago saoirse sara sebastián seán serkan shirin shreya siddharth sigrid sigurður simran sione
siobhán sipho siti søren stefan ştefan sunita svetlana tadhg takeshi tamar tanvir taras tatenda temitope tendai
teresa tevita thabo thandiwe thanh thảo thị thomas tiago tigist timur tomasz tuấn ursula uwe valentina vasyl
venkatesh viktor vikram wanjiru wei wiremu wojciech xiaoming xiomara yaw yasmin yesenia yetunde yifei yong
youssef yuki yulia yusuf yuto zainab zanele zdeněk zeynep zhang zoltan zuzana
`)
	// wordGiven are given names that are also words; before a verb of
	// saying they are people ("Hope noted", "Mark said").
	wordGiven = foldedSet(`hope faith will mark grace joy patience mercy summer sunny rich bill dawn rose ivy
art pat chase hunter ray sky precious blessing`)
	// familyFirst are family names that stand before the given name.
	familyFirst = foldedSet(`nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly
yamamoto takahashi tanaka watanabe suzuki sato ito nakamura kobayashi kato yoshida yamada sasaki
matsumoto inoue kimura hayashi shimizu mori kim lee park choi jung kang cho yoon jang lim han shin
wang li zhang liu chen yang huang zhao wu zhou xu sun zhu hu guo lin luo zheng liang`)
	// notSurname are capitalised words after a given name that make it
	// a place, a firm or a title rather than a person.
	notSurname = foldedSet(`street st road rd avenue ave lane way drive station lake mount river bay beach
park square place hall house court centre center college university school hospital church bank group
holdings limited ltd inc llc plc gmbh corporation company co foundation trust fund partners associates
hotel airport island county city town valley falls bridge tower gardens garden road boulevard the and
of for in on at with by from to is was will has have day week month year`)
	// firmNames are firms named after people.
	firmNames = foldedSet(`louis vuitton|philip morris|hugo boss|ralph lauren|calvin klein|estée lauder|
morgan stanley|goldman sachs|charles schwab|dow jones|merrill lynch|walt disney|giorgio armani|christian dior|
yves saint|jean paul|tommy hilfiger|john lewis|thomas cook|marc jacobs|michael kors|ted baker|paul smith`)
	// placeFirst are words that open a place name ("Rio de Janeiro",
	// "Santa Clara", "Lake Louise"), after which a given name is none.
	placeFirst = foldedSet(`rio san santa são sao port porto mont mount lake cape fort saint st
sainte notre bois val costa puerto villa hotel rue avenue place quai musée château university université
école banco banque casa gare pont ile île isla institut instituto museo museum palais palazzo plaza
boulevard chemin allée allee impasse calle via viale piazza corso camino paseo`)
)

// foldedSet splits s on white space (or on "|" when it has one) into
// folded entries.
func foldedSet(s string) map[string]bool {
	m := map[string]bool{}
	var items []string
	if strings.Contains(s, "|") {
		items = strings.Split(s, "|")
	} else {
		items = strings.Fields(s)
	}
	for _, it := range items {
		if it = strings.Join(strings.Fields(it), " "); it != "" {
			m[fold(it)] = true
		}
	}
	return m
}

// fold lower-cases and drops combining marks: "Zdeněk" and "zdenek".
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

var (
	// givenThenMore: a capitalised word, particles, and a capitalised
	// word ("Aino da Silva", "Makena al-Hakim", "Yesenia Ní Bhriain").
	givenThenMore = regexp.MustCompile(`(\p{Lu}[\p{Ll}\p{M}]+(?:-\p{L}[\p{Ll}\p{M}]+)?)((?:[ \t]+(?:van|von|de|De|da|Da|del|Del|della|der|den|di|Di|du|dos|das|le|Le|la|La|zu|ter|ten|bin|ibn|ben|Ó|Ní|Mac|Nic|Van))*)[ \t]+((?:al|el|as|ad|abu|bin|ibn)-\p{Lu}[\p{L}\p{M}]+|\p{Lu}[\p{L}\p{M}'’]+(?:-\p{Lu}[\p{L}\p{M}]+)?)`)
	// familyThenGiven: "Nguyễn Thị Mai", "Yamamoto Kenta", "Seo-yeon Kim".
	familyThenGiven = regexp.MustCompile(`(\p{Lu}[\p{L}\p{M}]+)[ \t]+(\p{Lu}[\p{Ll}\p{M}]+(?:-\p{Ll}+)?)(?:[ \t]+(\p{Lu}[\p{Ll}\p{M}]+))?`)
	hyphenGivenWord = regexp.MustCompile(`^\p{Lu}\p{Ll}{1,4}-\p{Ll}{2,5}$`)
	hyphenGiven     = regexp.MustCompile(`(\p{Lu}\p{Ll}{1,4}-\p{Ll}{2,5})[ \t]+(\p{Lu}\p{Ll}+)`)
	// saidWord: a capitalised word before a verb of saying.
	saidWord = regexp.MustCompile(`(\p{Lu}[\p{Ll}\p{M}]+)[ \t]+(?:said|says|told|wrote|confirmed|asked|replied|noted|emailed|called|rang|agreed|explained|reported|objected|signed)\b`)
	// chatSpeakerLine: "[09:41] Sabbren Luquiswyldra: ...".
	chatSpeakerLine = regexp.MustCompile(`(?m)^[ \t]*[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?[ \t]+(\p{Lu}[\p{L}\p{M}'’-]*(?:[ \t]+[\p{L}\p{M}'’-]+){0,2}):`)
	// partyLine: "(1) HOPE ACHTERBERG of ...", "and EIRIK ZU LYNAR of".
	partyLine = regexp.MustCompile(`(?m)(?:^[ \t]*\(\d{1,2}\)|\band)[ \t]+((?:\p{Lu}[\p{Lu}\p{M}'’-]+[ \t]+){1,4}\p{Lu}[\p{Lu}\p{M}'’-]+)[ \t]+(?:of|and)\b`)
	// nameKeys: name parts in structured data ("given": "Gurpreet").
	// lastThenGiven: "Horvath, Çağla", as registers and directories
	// write names.
	lastThenGiven = regexp.MustCompile(`(\p{Lu}[\p{L}\p{M}'’-]+),[ \t]+(\p{Lu}[\p{Ll}\p{M}]+(?:-\p{Ll}+)?)\b`)
	// surnameEnd: endings of family names in many languages (the
	// verifier's own list).
	surnameEnd = regexp.MustCompile(`(?:ian|yan|son|sen|ez|ski|ska|sky|ova|ov|ev|enko|escu|ić|vić|idis|akis|oglu|oğlu|ath|mann|berg|stein|ovic|iak|czyk|wicz|ani|elli|etti|ini|ino|oni|uzzi|appa|wala|kar)$`)
	nameKeys   = regexp.MustCompile(`"(?i:given|family|given_?names?|forename|middle_?name|first|last)"[ \t]*:[ \t]*"([^"\\]+)"`)
)

// people: names the label rules would not see, by the verifier's own
// lists and shapes: a listed given name before a family name (particles
// allowed), a family name written first, a given name before a verb of
// saying, a chat line's speaker, parties in capitals, and name fields of
// structured data.
func people(sub *subject) []hit {
	var out []hit
	for _, m := range givenThenMore.FindAllStringSubmatchIndex(sub.s, -1) {
		if givenPair(sub.s, m) {
			out = append(out, hit{"PERSON", "given-name", m[0], m[1]})
		}
	}
	for _, m := range familyThenGiven.FindAllStringSubmatchIndex(sub.s, -1) {
		if familyFirst[fold(sub.s[m[2]:m[3]])] && !notSurname[fold(sub.s[m[4]:m[5]])] && !precededByCapital(sub.s, m[0]) {
			out = append(out, hit{"PERSON", "family-first", m[0], m[1]})
		}
	}
	for _, m := range hyphenGiven.FindAllStringSubmatchIndex(sub.s, -1) {
		if familyFirst[fold(sub.s[m[4]:m[5]])] {
			out = append(out, hit{"PERSON", "family-first", m[0], m[1]})
		}
	}
	for _, m := range lastThenGiven.FindAllStringSubmatchIndex(sub.s, -1) {
		if givenNames[fold(sub.s[m[4]:m[5]])] && !notSurname[fold(sub.s[m[2]:m[3]])] {
			out = append(out, hit{"PERSON", "last-first", m[0], m[1]})
		}
	}
	for _, m := range saidWord.FindAllStringSubmatchIndex(sub.s, -1) {
		if w := fold(sub.s[m[2]:m[3]]); givenNames[w] || wordGiven[w] {
			out = append(out, hit{"PERSON", "said", m[2], m[3]})
		}
	}
	for _, re := range []*regexp.Regexp{chatSpeakerLine, partyLine, nameKeys} {
		for _, m := range re.FindAllStringSubmatchIndex(sub.s, -1) {
			if v := sub.s[m[2]:m[3]]; hasLetter(v) {
				out = append(out, hit{"PERSON", "name-shape", m[2], m[3]})
			}
		}
	}
	return out
}

// givenPair decides a givenThenMore match: the first word is a listed
// given name, the last no place, firm or title word, and the pair no
// firm's name nor inside a longer capitalised name or a place.
func givenPair(s string, m []int) bool {
	given, last := fold(s[m[2]:m[3]]), fold(s[m[6]:m[7]])
	// A particle ("Ní", "zu", "bin") or a hyphenated East Asian given
	// name ("Hyun-woo") says person without the list.
	shaped := m[5] > m[4] || hyphenGivenWord.MatchString(s[m[2]:m[3]]) ||
		wordGiven[given] && (surnameEnd.MatchString(last) || !isASCIIString(s[m[6]:m[7]]) || strings.ContainsAny(s[m[6]:m[7]], "'’-"))
	if !givenNames[given] && !(shaped && !placeFirst[given] && !notSurname[given]) {
		return false
	}
	if notSurname[strings.TrimSuffix(strings.TrimSuffix(last, "'s"), "’s")] || firmNames[given+" "+last] {
		return false
	}
	if precededByCapital(s, m[0]) || strings.HasPrefix(strings.TrimLeft(s[m[1]:], " \t"), "&") {
		return false
	}
	return !strings.HasSuffix(strings.TrimRight(s[:m[0]], " \t"), "&")
}

// precededByCapital: the word before i (on its line) is capitalised and
// no title: the match is inside a longer name of a place or a firm
// ("Rio de Janeiro", "Hotel Victoria").
func precededByCapital(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j == i || j == 0 {
		return false
	}
	k := j
	for k > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:k])
		if !unicode.IsLetter(r) && !unicode.Is(unicode.M, r) {
			break
		}
		k -= n
	}
	w := s[k:j]
	r, _ := utf8.DecodeRuneInString(w)
	return w != "" && unicode.IsUpper(r) && (placeFirst[fold(w)] || !titles[strings.ToLower(w)] && len(w) > 1)
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}
