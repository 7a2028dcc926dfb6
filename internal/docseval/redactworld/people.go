package redactworld

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Name pools, written for this corpus. Even positions go to Dev, odd
// ones to Test (see gen.pick).
var (
	// Given names from many places, with their diacritics.
	givenNames = []string{"Chidinma", "Ngozi", "Adaeze", "Tendai", "Kwabena", "Abebe", "Makena",
		"Wanjiru", "Thandiwe", "Sipho", "Babajide", "Yaw", "Aminata", "Moussa", "Fatoumata", "Siddharth",
		"Aishwarya", "Harpreet", "Gurpreet", "Lakshmi", "Venkatesh", "Anjali", "Rohan", "Meenakshi",
		"Tanvir", "Nusrat", "Hyun-woo", "Ji-yeon", "Dilnoza", "Arash", "Nilufar", "Hamid", "Minh",
		"Wen-Li", "Siti", "Putu", "Youssef", "Layla", "Khadija", "Mehmet", "Ayşe", "Özlem", "Reza",
		"Parisa", "Dariush", "Nour", "Siobhán", "Aoife", "Pádraig", "Ólafur", "Þórdís", "Søren", "Åsa",
		"Józef", "Małgorzata", "Łukasz", "Zdeněk", "Jiří", "Ştefan", "Ioana", "Çağla", "Ramón",
		"Begoña", "Íñigo", "João", "Conceição", "François", "Hélène", "Anaïs", "Jürgen", "Dörte",
		"Xiomara", "Yesenia", "Maricruz", "Sione", "Mele", "Tevita", "Oksana", "Bohdan", "Ljubica",
		"Dragan", "Eero", "Aino", "Gunnhild", "Eirik", "Zainab", "Ikechukwu", "Olumide", "Temitope"}
	// Family names: particles, apostrophes, hyphens, Irish and Arabic
	// prefixes, marks.
	familyNames = []string{"Okonkwo", "Adeyemi-Bello", "Mwangi", "Nkosi", "Achterberg", "van der Berg",
		"de Vries", "van den Heuvel", "ter Horst", "de la Cruz", "del Río", "dos Santos", "da Silva",
		"von Hohenberg", "zu Lynar", "Ó Ceallaigh", "Ní Bhriain", "Mac Giolla Phádraig", "O'Sullivan",
		"McAllister", "bin Rashid", "Al-Farsi", "al-Hakim", "Abu-Khalil", "Ben-David", "Venkataraman",
		"Subramanian", "Chatterjee", "Kaur", "Öztürk", "Yıldız", "Kowalczyk", "Wiśniewska", "Dvořák",
		"Novotná", "Popescu", "Jovanović", "Petrović", "Søndergaard", "Þórsdóttir", "Gonçalves",
		"Lefèvre-Durand", "Schäfer", "Müller-Lüdenscheidt", "Fa'asavalu", "Tuilagi", "Haddad-Mansour",
		"Oyelowo", "Diallo", "Traoré", "Van Buren", "D'Souza", "Le Goff", "Di Stefano", "De Luca",
		"Sánchez-Vicario", "Ibáñez", "Kristiansen", "Nieminen", "Kovačević", "Horvath", "Papadakis"}
	// East Asian names, family name first when written in the native
	// order (and in Vietnamese also in English).
	eastAsian = [][2]string{{"Nguyễn", "Thị Mai"}, {"Trần", "Văn Hùng"}, {"Phạm", "Quốc Bảo"},
		{"Lê", "Thu Trang"}, {"Park", "Ji-hoon"}, {"Choi", "Min-seo"}, {"Yamamoto", "Kenta"},
		{"Takahashi", "Haruka"}, {"Wang", "Xiaoming"}, {"Liu", "Yifei"}, {"Kim", "Seo-yeon"}, {"Sato", "Yuto"}}
	// Names in their own scripts, for text formats (page fonts lack them).
	nativeNames = []string{"山本 健太", "高橋 遥", "王小明", "刘亦菲", "김서연", "박지훈", "Αικατερίνη Παπαδάκη",
		"Ελευθέριος Βενιζέλος", "Олена Коваленко", "Богдан Шевчук", "محمد الحسيني", "ليلى حداد",
		"אורית בן-דוד", "יוסף כהן", "प्रिया शर्मा", "अर्जुन मेहता"}
	// Given names that are also English words, used in contexts that say
	// they are names.
	wordNames = []string{"Hope", "Faith", "Will", "Mark", "Grace", "Joy", "Patience", "Mercy", "Summer",
		"Sunny", "Rich", "Bill", "Dawn", "Rose", "Ivy", "Art", "Pat", "Chase", "Hunter", "Ray", "Sky", "Precious"}
	// Verbs after which a capitalised word is a person.
	saidVerbs = []string{"said", "told us", "wrote", "confirmed", "signed", "agreed", "called", "asked",
		"explained", "noted", "reported", "replied", "has agreed", "will attend", "objected", "emailed"}
	titlesEN = []string{"Ms", "Mr", "Dr", "Mrs", "Prof.", "Mx"}
)

// person is a name as a document writes it.
type person struct {
	given, family string
	familyFirst   bool // written family name first (Vietnamese, or East Asian native order)
}

// full is the name as written in running text.
func (p person) full() string {
	if p.familyFirst {
		return p.family + " " + p.given
	}
	return p.given + " " + p.family
}

// formal is "Family, Given", as registers and exports write it.
func (p person) formal() string { return p.family + ", " + p.given }

// caps is the name in capitals, as recitals write parties.
func (p person) caps() string { return strings.ToUpper(p.full()) }

func (g *gen) person() person {
	switch k := g.r.IntN(10); {
	case k < 2:
		e := eastAsian[g.pickIndex(len(eastAsian))]
		return person{given: e[1], family: e[0], familyFirst: e[0] == "Nguyễn" || e[0] == "Trần" || e[0] == "Phạm" || e[0] == "Lê" || g.chance(0.3)}
	case k < 3:
		return person{given: g.pick(wordNames), family: g.pick(familyNames)}
	default:
		return person{given: g.pick(givenNames), family: g.pick(familyNames)}
	}
}

// pickIndex is pick for a pool given by its length.
func (g *gen) pickIndex(n int) int {
	off := 0
	if g.split == Test && n > 1 {
		off = 1
	}
	return off + 2*g.r.IntN((n-off+1)/2)
}

// invented is a name no list anywhere has (canaries, and people only
// context can reveal).
func (g *gen) invented() person {
	syl := []string{"ta", "vo", "lu", "ke", "bren", "quis", "zor", "mi", "dra", "pel", "thu", "gan", "rel", "ios", "fen", "wyl", "sab", "orn"}
	word := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syl[g.r.IntN(len(syl))])
		}
		s := b.String()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return person{given: word(g.n(2, 3)), family: word(g.n(3, 4))}
}

// ascii folds a name to what an e-mail address would hold.
func ascii(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == 'ł':
			b.WriteByte('l')
		case r == 'ø':
			b.WriteByte('o')
		case r == 'þ':
			b.WriteString("th")
		case r == 'ı':
			b.WriteByte('i')
		case r == 'å' || r == 'æ':
			b.WriteByte('a')
		case unicode.Is(unicode.Mn, r), r == ' ', r == '-', r == '\'':
		}
	}
	return b.String()
}

var mailDomains = []string{"posteo.de", "orange.fr", "kpnmail.nl", "btinternet.com", "shaw.ca",
	"bigpond.com", "docomo.ne.jp", "gmail.com", "outlook.com", "uni-heidelberg.de", "example.org",
	"hospital.example.ie", "free.fr", "web.de", "yahoo.co.uk", "icloud.com"}

func (g *gen) email(p person) string {
	given, family := ascii(p.given), ascii(p.family)
	if given == "" || family == "" {
		given, family = "contact", g.digits(4)
	}
	switch g.r.IntN(4) {
	case 0:
		return given + "." + family + "@" + g.any(mailDomains)
	case 1:
		return given[:1] + family + "@" + g.any(mailDomains)
	case 2:
		return family + "_" + given + g.digits(2) + "@" + g.any(mailDomains)
	}
	return given + "-" + family + "@" + g.any(mailDomains)
}
