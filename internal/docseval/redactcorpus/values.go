package redactcorpus

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// gen draws values from one seeded source. canaries is the corpus's
// canary list (empty for the generator that draws the canaries).
type gen struct {
	r        *rand.Rand
	canaries []string
	// plant maps an entity type to the canary the next slot of that
	// type takes (set per document by Generate).
	plant map[string]string
}

func newGen(seed int64) *gen { return &gen{r: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))} }

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) n(lo, hi int) int        { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }

func (g *gen) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// Names. Mostly common names, some rarer ones, several scripts; the
// ambiguous ones double as English words.
var (
	firstNames = []string{"Grace", "Priya", "James", "Maria", "Oluwaseun", "Wei", "Sofia", "Ahmed",
		"Chloé", "José", "Ingrid", "Kenji", "Aisha", "Mateo", "Hannah", "Dmitri", "Fatima", "Liam",
		"Linh", "Siobhan", "Rahul", "Elena", "Thabo", "Yuki", "Zainab", "Lukas", "Camille",
		"Santiago", "Amara", "Björn", "Noah", "Emily", "Michael", "Sarah", "David", "Olivia",
		"Robert", "Jennifer", "Daniel", "Laura", "Anders", "Chiara", "Tomasz", "Anneke", "Kwame",
		"Leila", "Hiroshi", "Mei", "Jamal", "Fernanda"}
	ambiguousFirst = []string{"Will", "Mark", "Rose", "Grace", "April", "June", "Hope", "Faith", "Bill", "Dawn"}
	surnames       = []string{"Kim", "Okafor", "Smith", "García", "Nguyen", "Müller", "Rossi", "Patel",
		"Johansson", "O'Brien", "Kowalski", "Tanaka", "Haddad", "Dubois", "Adeyemi", "Petrov",
		"Silva", "Chen", "Murphy", "Schneider", "Fernández", "Novak", "Papadopoulos", "Yılmaz",
		"Mensah", "Lindqvist", "Moreau", "Castillo", "Nakamura", "Hernandez", "Williams", "Brown",
		"Davis", "Anderson", "Thompson", "Jackson", "Martinez", "Lopez", "Wilson", "Taylor"}
	// Names on few lists anywhere: findable only from context (a label or
	// a title), as a real document's rarer names are.
	rareFirst = []string{"Ifeoluwa", "Tsegaye", "Oyelaran", "Zhivko", "Kalinda", "Mirabela"}
	rareLast  = []string{"Quarshie", "Venkataraghavan", "Ndiritu", "Abaroa", "Szczygieł", "Thorvaldsen"}
	cyrillic  = [][2]string{{"Иван", "Петров"}, {"Ольга", "Смирнова"}, {"Дмитрий", "Соколов"}, {"Анна", "Иванова"}}
	greek     = [][2]string{{"Γιώργος", "Παπαδόπουλος"}, {"Μαρία", "Οικονόμου"}, {"Νίκος", "Γεωργίου"}}
	cjk       = []string{"王伟", "李娜", "张敏", "山田太郎", "佐藤花子", "김민준"}
	titles    = []string{"Dr.", "Ms.", "Mr.", "Mrs.", "Prof.", "Dr"}
)

// person returns a full name and whether it is on common lists.
func (g *gen) person() string {
	switch k := g.r.IntN(20); {
	case k < 2:
		return g.pick(ambiguousFirst) + " " + g.pick(surnames)
	default:
		return g.pick(firstNames) + " " + g.pick(surnames)
	}
}

// nfd decomposes é, á, ü, ö, ó, í, ñ, ç into base + combining mark, as
// some systems store names.
func nfd(s string) string {
	r := strings.NewReplacer("é", "e\u0301", "á", "a\u0301", "ü", "u\u0308", "ö", "o\u0308",
		"ó", "o\u0301", "í", "i\u0301", "ñ", "n\u0303", "ç", "c\u0327")
	return r.Replace(s)
}

// SSNs: area 001-899 but not 666, group 01-99, serial 0001-9999.
func (g *gen) ssnDigits() string {
	for {
		a := g.n(1, 899)
		if a == 666 || a == 78 || a == 219 || a == 457 || a == 123 {
			continue
		}
		return fmt.Sprintf("%03d%02d%04d", a, g.n(1, 99), g.n(1, 9999))
	}
}

func (g *gen) ssn() string {
	d := g.ssnDigits()
	return d[:3] + "-" + d[3:5] + "-" + d[5:]
}

var invalidSSNs = []string{"000-12-3456", "666-45-1234", "912-34-5678", "123-00-4567", "345-67-0000",
	"078-05-1120", "219-09-9999", "987-65-4321"}

// luhnDigit returns the check digit that makes body+d pass Luhn.
func luhnDigit(body string) byte {
	sum := 0
	for i := len(body) - 1; i >= 0; i-- {
		n := int(body[i] - '0')
		if (len(body)-1-i)%2 == 0 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return byte('0' + (10-sum%10)%10)
}

// card returns a Luhn-valid number of a real brand, formatted as people
// write it.
func (g *gen) card() string {
	var prefix string
	length := 16
	switch g.r.IntN(5) {
	case 0:
		prefix = "4"
	case 1:
		prefix = fmt.Sprintf("5%d", g.n(1, 5))
	case 2:
		prefix, length = g.pick([]string{"34", "37"}), 15
	case 3:
		prefix = "6011"
	default:
		prefix = fmt.Sprintf("35%d", g.n(28, 89))
	}
	body := prefix + g.digits(length-1-len(prefix))
	d := body + string(luhnDigit(body))
	return g.groupCard(d)
}

func (g *gen) groupCard(d string) string {
	switch {
	case len(d) == 15:
		return d[:4] + " " + d[4:10] + " " + d[10:]
	case g.chance(0.3):
		return d
	default:
		sep := g.pick([]string{" ", "-"})
		return d[:4] + sep + d[4:8] + sep + d[8:12] + sep + d[12:]
	}
}

// badCard is a card-shaped number failing Luhn.
func (g *gen) badCard() string {
	body := "4" + g.digits(14)
	c := luhnDigit(body)
	bad := byte('0' + (int(c-'0')+g.n(1, 9))%10)
	return g.groupCard(body + string(bad))
}

// transactionID is 16 digits no card network issues (leading 7).
func (g *gen) transactionID() string { return "7" + g.digits(15) }

// aba returns a routing number with a Federal Reserve prefix and a
// valid checksum; badABA breaks the checksum.
func (g *gen) aba() string {
	for {
		p := g.pick([]string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "21", "22", "26", "31", "32", "61", "63", "71"})
		body := p + g.digits(6)
		w := []int{3, 7, 1, 3, 7, 1, 3, 7}
		sum := 0
		for i := 0; i < 8; i++ {
			sum += w[i] * int(body[i]-'0')
		}
		d := body + string(byte('0'+(10-sum%10)%10))
		if d[:3] != "000" {
			return d
		}
	}
}

func (g *gen) badABA() string {
	d := []byte(g.aba())
	d[8] = byte('0' + (int(d[8]-'0')+g.n(1, 9))%10)
	return string(d)
}

// ibanCheck computes the two check digits for country+bban.
func ibanCheck(country, bban string) string {
	r := bban + country + "00"
	m := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c >= 'A' && c <= 'Z' {
			m = (m*100 + int(c-'A') + 10) % 97
		} else {
			m = (m*10 + int(c-'0')) % 97
		}
	}
	return fmt.Sprintf("%02d", 98-m)
}

// iban returns a valid IBAN of one of several countries, grouped by four
// (as printed) or not (as stored).
func (g *gen) iban() string {
	var country, bban string
	switch g.r.IntN(7) {
	case 0:
		country, bban = "DE", g.digits(18)
	case 1:
		country, bban = "GB", g.pick([]string{"NWBK", "BARC", "LOYD", "HBUK"})+g.digits(14)
	case 2:
		country, bban = "NL", g.pick([]string{"ABNA", "RABO", "INGB"})+g.digits(10)
	case 3:
		country, bban = "CH", g.digits(17)
	case 4:
		country, bban = "AT", g.digits(16)
	case 5:
		country, bban = "PL", g.digits(24)
	default:
		acct := g.digits(10)
		m := 0
		for i := 0; i < 10; i++ {
			m = (m*10 + int(acct[i]-'0')) % 97
		}
		if m == 0 {
			m = 97
		}
		country, bban = "BE", acct+fmt.Sprintf("%02d", m)
	}
	s := country + ibanCheck(country, bban) + bban
	if g.chance(0.3) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(len(s), i+4)])
	}
	return b.String()
}

// badIBAN is a valid-looking IBAN whose check digits are wrong.
func (g *gen) badIBAN() string {
	bban := g.digits(18)
	good, bad := ibanCheck("DE", bban), ""
	for bad == "" || bad == good {
		bad = fmt.Sprintf("%02d", g.n(2, 98))
	}
	return "DE" + bad + " " + bban[:4] + " " + bban[4:8] + " " + bban[8:12] + " " + bban[12:16] + " " + bban[16:]
}

var areaCodes = []string{"201", "202", "206", "212", "213", "303", "305", "312", "404", "415",
	"503", "512", "617", "646", "702", "713", "718", "773", "818", "917"}

// phone returns a number libphonenumber accepts, in a common format.
func (g *gen) phone() string {
	for {
		s := g.phoneCandidate()
		if n, err := phonenumbers.Parse(s, "US"); err == nil && phonenumbers.IsValidNumber(n) {
			return s
		}
	}
}

func (g *gen) phoneCandidate() string {
	ac, ex, sub := g.pick(areaCodes), fmt.Sprintf("%d%02d", g.n(2, 9), g.n(0, 99)), g.digits(4)
	if ex[1:] == "11" {
		ex = ex[:1] + "23"
	}
	switch g.r.IntN(9) {
	case 0:
		return "(" + ac + ") " + ex + "-" + sub
	case 1:
		return ac + "-" + ex + "-" + sub
	case 2:
		return ac + "." + ex + "." + sub
	case 3:
		return "+1 " + ac + " " + ex + " " + sub
	case 4:
		return "(" + ac + ") " + ex + "-" + sub + " ext. " + g.digits(3)
	case 5:
		return "+44 20 7946 " + g.digits(4)
	case 6:
		return "+49 30 " + g.digits(8)
	case 7:
		return "+33 1 " + g.digits(2)[:1] + "2 " + g.digits(2) + " " + g.digits(2) + " " + g.digits(2)
	default:
		return "+1-" + ac + "-" + ex + "-" + sub
	}
}

var domains = []string{"example.com", "mail.example.org", "acme-corp.co.uk", "uni-berlin.de",
	"startup.io", "clinic.health", "firm.law", "gmail.com", "outlook.com", "post.example.fr"}

// email derives an address from a name.
func (g *gen) email(name string) string {
	parts := strings.Fields(strings.ToLower(ascii(name)))
	local := g.pick([]string{"user", "contact", "info"})
	if len(parts) >= 2 {
		switch g.r.IntN(4) {
		case 0:
			local = parts[0] + "." + parts[len(parts)-1]
		case 1:
			local = parts[0][:1] + parts[len(parts)-1]
		case 2:
			local = parts[0] + "_" + parts[len(parts)-1] + g.digits(2)
		default:
			local = parts[0] + "+billing"
		}
	}
	return local + "@" + g.pick(domains)
}

// ascii keeps ASCII letters, spaces and dots of a name (for e-mail locals).
func ascii(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == ' ' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "user name"
	}
	return b.String()
}

func (g *gen) ipv4() string {
	return fmt.Sprintf("%d.%d.%d.%d", g.pick2(10, 172, 192, 203, 81, 98), g.n(0, 255), g.n(0, 255), g.n(1, 254))
}

func (g *gen) pick2(xs ...int) int { return xs[g.r.IntN(len(xs))] }

func (g *gen) ipv6() string {
	return fmt.Sprintf("2001:db8:%x:%x::%x", g.n(1, 0xffff), g.n(1, 0xffff), g.n(1, 0xffff))
}

var monthsEN = []string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// date returns a calendar date in a random common format.
func (g *gen) date(yLo, yHi int) string {
	y, m, d := g.n(yLo, yHi), g.n(1, 12), g.n(1, 28)
	switch g.r.IntN(5) {
	case 0:
		return fmt.Sprintf("%02d/%02d/%d", m, d, y)
	case 1:
		return fmt.Sprintf("%d-%02d-%02d", y, m, d)
	case 2:
		return fmt.Sprintf("%s %d, %d", monthsEN[m-1], d, y)
	case 3:
		return fmt.Sprintf("%d %s %d", d, monthsEN[m-1], y)
	default:
		return fmt.Sprintf("%02d.%02d.%d", d, m, y)
	}
}

var (
	usStreets  = []string{"Main", "Oak", "Maple", "Pennsylvania", "Elm", "Cedar", "Lakeview", "Sunset", "Washington", "5th", "Willow Creek", "Hillcrest", "Park"}
	usSuffixes = []string{"Street", "St.", "Avenue", "Ave", "Road", "Rd.", "Boulevard", "Blvd", "Lane", "Drive", "Court", "Way", "Place"}
	usCities   = [][2]string{{"Springfield", "IL"}, {"Portland", "OR"}, {"Austin", "TX"}, {"San Francisco", "CA"},
		{"New York", "NY"}, {"Chicago", "IL"}, {"Denver", "CO"}, {"Seattle", "WA"}, {"Boston", "MA"},
		{"Salt Lake City", "UT"}, {"St. Louis", "MO"}, {"Miami", "FL"}}
	ukStreets = []string{"High Street", "Baker Street", "Church Road", "Victoria Road", "Park Lane", "Station Road", "Queen's Gardens"}
	ukCities  = []string{"London", "Manchester", "Leeds", "Bristol", "Edinburgh"}
	deStreets = []string{"Hauptstraße", "Berliner Straße", "Goethestraße", "Schillerweg", "Bahnhofstr.", "Lindenallee"}
	deCities  = []string{"Berlin", "München", "Hamburg", "Köln", "Frankfurt am Main"}
	frStreets = []string{"rue de la Paix", "avenue des Champs-Élysées", "boulevard Saint-Germain", "rue Victor Hugo", "place de la République"}
	frCities  = []string{"Paris", "Lyon", "Marseille", "Toulouse", "Bordeaux"}
)

// usUnit is an apartment or suite, or nothing.
func (g *gen) usUnit() string {
	switch g.r.IntN(4) {
	case 0:
		return ", Apt " + fmt.Sprint(g.n(1, 40)) + g.pick([]string{"", "B", "C"})
	case 1:
		return ", Suite " + fmt.Sprint(g.n(100, 900))
	case 2:
		return " #" + fmt.Sprint(g.n(2, 30))
	}
	return ""
}

// address returns a whole postal address; sep joins the street line and
// the city line (", " or a line break).
func (g *gen) address(sep string) string {
	switch k := g.r.IntN(10); {
	case k < 6:
		c := usCities[g.r.IntN(len(usCities))]
		zip := g.digits(5)
		if zip[0] == '0' {
			zip = "6" + zip[1:]
		}
		if g.chance(0.2) {
			zip += "-" + g.digits(4)
		}
		return fmt.Sprintf("%d %s %s%s%s%s, %s %s", g.n(1, 9899), g.pick(usStreets), g.pick(usSuffixes),
			g.usUnit(), sep, c[0], c[1], zip)
	case k == 6:
		pc := g.pick([]string{"SW1A 2AA", "W8 4PT", "M1 1AE", "LS2 7EY", "EC1V 9BD", "BS1 5TR"})
		flat := ""
		if g.chance(0.4) {
			flat = fmt.Sprintf("Flat %d, ", g.n(1, 12))
		}
		return fmt.Sprintf("%s%d %s%s%s %s", flat, g.n(1, 220), g.pick(ukStreets), sep, g.pick(ukCities), pc)
	case k == 7:
		return fmt.Sprintf("%s %d%s%05d %s", g.pick(deStreets), g.n(1, 120), sep, g.n(10115, 99998), g.pick(deCities))
	case k == 8:
		return fmt.Sprintf("%d %s%s%05d %s", g.n(1, 150), g.pick(frStreets), sep, g.n(75001, 75020), g.pick(frCities))
	}
	c := usCities[g.r.IntN(len(usCities))]
	return fmt.Sprintf("PO Box %d%s%s, %s %s", g.n(10, 9999), sep, c[0], c[1], "6"+g.digits(4))
}

func (g *gen) account() string { return g.digits(g.n(8, 12)) }

func (g *gen) passport() string {
	if g.chance(0.5) {
		return fmt.Sprint(g.n(1, 9)) + g.digits(8)
	}
	return string(byte('A'+g.r.IntN(26))) + g.digits(8)
}

func (g *gen) driverLicense() string {
	return string(byte('A'+g.r.IntN(26))) + g.digits(7)
}

// Invented names: syllables no name list is likely to hold, so only
// context (a label, a title, a salutation) can say they are names, as
// with the rarer names real documents carry. ASCII, so every renderer and
// OCR reads them as written.
var (
	nameOnsets = []string{"B", "D", "F", "G", "K", "L", "M", "N", "P", "R", "S", "T", "V", "Z", "Br",
		"Dr", "Gr", "Kr", "Th", "Sh", "Qu", "Ch", "Or", "Al", "El", "Is"}
	nameVowels  = []string{"a", "e", "i", "o", "u", "ai", "ei", "ou", "ia"}
	nameCodas   = []string{"", "n", "l", "r", "s", "th", "nd", "rk", "x", "m"}
	nameEndings = []string{"maine", "worth", "ley", "ford", "ovic", "enko", "ani", "sen", "stad", "quist", "bury", "wick"}
)

func (g *gen) syllable(first bool) string {
	on := g.pick(nameOnsets)
	if !first {
		on = strings.ToLower(on)
	}
	return on + g.pick(nameVowels) + g.pick(nameCodas)
}

// inventedName returns "First Last" made of invented syllables.
func (g *gen) inventedName() string {
	first := g.syllable(true) + g.syllable(false)
	for len(first) < 5 {
		first += g.pick(nameVowels)
	}
	last := g.syllable(true) + g.syllable(false) + g.pick(nameEndings)
	return first + " " + last
}

// canarySet returns the corpus's canary strings: two invented names and
// an SSN-shaped number, drawn from their own stream so the set depends
// on the seed only (not on how many documents are generated).
func canarySet(seed int64) []string {
	g := newGen(seed ^ 0x5ca1ab1e)
	a, b := g.inventedName(), g.inventedName()
	for b == a {
		b = g.inventedName()
	}
	return []string{a, b, g.ssn()}
}

// usAddressLines is a US address on two lines.
func (g *gen) usAddressLines() string {
	c := usCities[g.r.IntN(len(usCities))]
	return strings.Join([]string{
		strings.TrimSpace(g.pick([]string{"12", "455", "1600", "77", "2100"}) + " " + g.pick(usStreets) + " " + g.pick(usSuffixes) + g.usUnit()),
		c[0] + ", " + c[1] + " " + "6" + g.digits(4),
	}, "\n")
}
