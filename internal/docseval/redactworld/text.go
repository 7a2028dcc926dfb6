package redactworld

import (
	"fmt"
	"strings"
)

// Entity types (the redactor's names, as the truth files use them).
const (
	tPerson  = "PERSON"
	tEmail   = "EMAIL"
	tPhone   = "PHONE"
	tSSN     = "US_SSN"
	tCard    = "CREDIT_CARD"
	tIBAN    = "IBAN"
	tIP      = "IP_ADDRESS"
	tDOB     = "DATE_OF_BIRTH"
	tAddress = "STREET_ADDRESS"
	tAccount = "US_BANK_ACCOUNT"
	tRouting = "US_BANK_ROUTING"
)

// textKinds are the plain-text documents, in turn.
var textKinds = []func(*gen, *doc){emailThread, clinicalNote, referenceLetter, leaseRecitals, minutes,
	chatLog, japaneseRecord, germanLetter, frenchLetter, footnotedArticle, usIntake, accessLog}

// country picks where a document's people live.
func (g *gen) country() string { return g.any(countries) }

// plainDate is a date that is no birth date (a meeting, a letter).
func (g *gen) plainDate() string {
	return fmt.Sprintf("%d %s %d", g.n(1, 28), g.any([]string{"March", "May", "June", "October", "November"}), g.n(2019, 2025))
}

func emailThread(g *gen, d *doc) {
	c := g.country()
	from, to, cc, other := g.nextPerson(), g.person(), g.person(), g.person()
	d.t("From: ").pii(tPerson, from.full()).t(" <").pii(tEmail, g.email(from)).t(">\n")
	d.t("Sent: ").miss("date_not_birth", g.plainDate()).t(" 09:12\n")
	d.t("To: ").pii(tPerson, to.full()).t(" <").pii(tEmail, g.email(to)).t(">\n")
	d.t("Cc: ").pii(tPerson, cc.full()).t("\nSubject: RE: deposit\n\n")
	d.t(g.any([]string{"Hi ", "Dear ", "Hello "})).pii(tPerson, to.given).t(",\n\n")
	switch g.variant(4) {
	case 0:
		d.pii(tPerson, other.given).t(" rang this morning: the landlord still has not returned the deposit. ")
	case 1:
		d.t("I spoke to ").pii(tPerson, other.full()).t(" yesterday and she ").t(g.any(saidVerbs)).t(" the same. ")
	case 2:
		d.t("As ").pii(tPerson, other.given).t(" ").t(g.any(saidVerbs)).t(", the deposit is still outstanding. ")
	default:
		d.t("Per my colleague ").pii(tPerson, other.full()).t(", the deposit remains unpaid. ")
	}
	d.t("We ").miss("word_not_name", "hope").t(" to settle this in good ").miss("word_not_name", "faith").t(" before the ").miss("word_not_name", "grace").t(" period ends.\n")
	d.t("Could you call them on ").pii(tPhone, g.phone(c)).t(" or write to ").pii(tAddress, strings.Join(g.address(c), ", ")).t("?\n\n")
	d.t(g.any([]string{"Kind regards,\n", "Best,\n", "Many thanks,\n"})).pii(tPerson, from.given).t("\n\n--\n")
	d.pii(tPerson, from.full()).t("\nSenior Caseworker, Tenants' Advice Service\n")
	d.t("T: ").pii(tPhone, g.phone(c)).t(" | M: ").pii(tPhone, g.phone(c)).t("\n")
}

func clinicalNote(g *gen, d *doc) {
	c := g.country()
	pt, gp, kin := g.nextPerson(), g.person(), g.person()
	d.t("DISCHARGE SUMMARY - Ward 7B\n\n")
	d.t("Patient name: ").pii(tPerson, strings.ToUpper(pt.family)+", "+pt.given).t("\n")
	d.t(g.any([]string{"D.O.B.: ", "DOB ", "Date of birth: ", "Birth date: "}))
	dob, _ := g.birth()
	d.pii(tDOB, dob).t("\n")
	d.t("Address: ").pii(tAddress, strings.Join(g.address(c), ", ")).t("\n")
	d.t("GP: Dr ").pii(tPerson, gp.family).t(", tel. ").pii(tPhone, g.phone(c)).t("\n")
	d.t("Next of kin: ").t(g.any([]string{"husband ", "wife ", "daughter ", "son ", "partner "})).pii(tPerson, kin.full()).t(", ").pii(tPhone, g.phone(c)).t("\n")
	d.t("Admitted: ").miss("date_not_birth", g.plainDate()).t("   Discharged: ").miss("date_not_birth", g.plainDate()).t("\n\n")
	switch g.variant(4) {
	case 0:
		d.t("History: ").pii(tPerson, pt.given).t(" was seen by Dr ").pii(tPerson, gp.family).t(" after a fall at home. ")
	case 1:
		d.t("History: Ms ").pii(tPerson, pt.family).t(" presented after a fall; she was born on ").pii(tDOB, g.birthIn("en")).t(". ")
	case 2:
		d.t("History: patient (b. ").pii(tDOB, g.birthIn("en")).t(") presented after a fall. ")
	default:
		d.t("History: seen with ").pii(tPerson, kin.given).t(", who ").t(g.any(saidVerbs)).t(" she had been unwell for a week. ")
	}
	d.t("She was transferred from ").miss("place", g.any(placeNames)).t(" in ").miss("date_not_birth", g.any([]string{"May", "June", "2023"})).t(".\n")
	d.t("Follow-up with ").pii(tPerson, gp.full()).t(" in two weeks.\n")
}

func referenceLetter(g *gen, d *doc) {
	c := g.country()
	p, hr := g.nextPerson(), g.person()
	d.miss("place", g.any(placeNames)).t(", ").miss("date_not_birth", g.plainDate()).t("\n\nTo whom it may concern,\n\n")
	d.t("This is to confirm that ").t(g.any(titlesEN)).t(" ").pii(tPerson, p.full())
	switch g.variant(3) {
	case 0:
		d.t(" (born ").pii(tDOB, g.birthIn("en")).t(")")
	case 1:
		d.t(", date of birth ").pii(tDOB, g.birthIn("en")).t(",")
	default:
		d.t(", who was born on ").pii(tDOB, g.birthIn("en")).t(",")
	}
	d.t(" residing at ").pii(tAddress, strings.Join(g.address(c), ", ")).t(", has worked for ").miss("org", g.any(orgNames)).t(" since 2019.\n")
	d.pii(tPerson, p.given).t(" has been reliable and ").t(g.any([]string{"we will miss her.", "we wish him well.", "we recommend them warmly."})).t("\n\n")
	d.t("Should you need anything further, please contact me on ").pii(tPhone, g.phone(c)).t(" or at ").pii(tEmail, g.email(hr)).t(".\n\n")
	d.t("Yours faithfully,\n\n").pii(tPerson, hr.full()).t("\nHead of People\n")
}

func leaseRecitals(g *gen, d *doc) {
	c := g.country()
	ll, t1, t2, wit := g.nextPerson(), g.person(), g.person(), g.person()
	d.t("THIS AGREEMENT is made on ").miss("date_not_birth", g.plainDate()).t("\n\nBETWEEN:\n\n")
	d.t("(1) ").pii(tPerson, ll.caps()).t(" of ").pii(tAddress, strings.Join(g.address(c), ", ")).t(" (the \"Landlord\"); and\n")
	d.t("(2) ").pii(tPerson, t1.caps()).t(" and ").pii(tPerson, t2.caps()).t(" of ").pii(tAddress, strings.Join(g.address(c), ", ")).t(" (together the \"Tenant\").\n\n")
	d.t("1.1 Rent is payable to the Landlord's account, IBAN ").pii(tIBAN, g.iban()).t(", held in the name of ").pii(tPerson, ll.full()).t(".\n")
	d.t("1.2 Notices go to the Tenant at the Property or by e-mail to ").pii(tEmail, g.email(t1)).t(".\n\n")
	d.t("SIGNED by ").pii(tPerson, ll.full()).t(" in the presence of:\n")
	d.t("Witness name: ").pii(tPerson, wit.full()).t("\nOccupation: Teacher\nAddress: ").pii(tAddress, strings.Join(g.address(c), "\n")).t("\n")
}

func minutes(g *gen, d *doc) {
	chair, a, b, wn := g.nextPerson(), g.person(), g.person(), g.wordNamed()
	d.t("Minutes of the Residents' Association, held at ").miss("place", g.any(placeNames)).t("\n\n")
	d.t("Present: ").pii(tPerson, chair.full()).t(" (Chair), ").pii(tPerson, a.full()).t(", ").pii(tPerson, b.full()).t(", ").pii(tPerson, wn.full()).t("\n")
	d.t("Apologies: ").pii(tPerson, g.person().full()).t("\n\n")
	switch g.variant(4) {
	case 0:
		d.t("1. ").pii(tPerson, wn.given).t(" ").t(g.any(saidVerbs)).t(" that the lift is out of order again.\n")
	case 1:
		d.t("1. The lift: ").pii(tPerson, wn.given).t(" will write to the managing agent.\n")
	case 2:
		d.t("1. Thanks to ").pii(tPerson, wn.given).t(" for organising the summer fête.\n")
	default:
		d.t("1. ").pii(tPerson, wn.given).t(" and ").pii(tPerson, a.given).t(" ").t(g.any(saidVerbs)).t(" the quotes were too high.\n")
	}
	d.t("2. Members ").miss("word_not_name", "will").t(" ").miss("word_not_name", "mark").t(" the date; we ").miss("word_not_name", "hope").t(" to raise funds with ").miss("word_not_name", "joy").t(" and ").miss("word_not_name", "patience").t(".\n")
	d.t("3. The grant from ").miss("place", g.any(placeNames)).t(" and a donation from ").miss("org", g.any(orgNames)).t(" were noted.\n")
	d.t("Next meeting: ").miss("date_not_birth", g.plainDate()).t(". Contact: ").pii(tEmail, g.email(chair)).t("\n")
}

// wordNamed is a person whose given name is also an English word.
func (g *gen) wordNamed() person {
	return person{given: g.pick(wordNames), family: g.pick(familyNames)}
}

func chatLog(g *gen, d *doc) {
	c := g.country()
	a, b := g.nextPerson(), g.wordNamed()
	line := func(t string, p person, short bool) *doc {
		d.t("[" + t + "] ")
		if short {
			d.pii(tPerson, p.given)
		} else {
			d.pii(tPerson, p.full())
		}
		return d.t(": ")
	}
	line("09:41", a, false).t("morning! did the courier come?\n")
	line("09:42", b, false).t("yes, signed for by ").pii(tPerson, g.person().full()).t("\n")
	line("09:44", a, true).t("great. what's your new number?\n")
	line("09:45", b, true).pii(tPhone, g.phone(c)).t("\n")
	line("09:47", a, true).t("and the address for the invoice?\n")
	line("09:48", b, true).pii(tAddress, strings.Join(g.address(c), ", ")).t("\n")
	line("09:50", a, true).t("thanks ").pii(tPerson, b.given).t(" :)\n")
}

func japaneseRecord(g *gen, d *doc) {
	p := eastAsian[g.pickIndex(len(eastAsian))]
	d.t("氏名 / Name: ").pii(tPerson, g.pick(nativeNames[:2])).t(" (").pii(tPerson, p[1]+" "+p[0]).t(")\n")
	d.t("生年月日 / Date of birth: ").pii(tDOB, g.birthIn("ja")).t("\n")
	d.t("住所 / Address: ").pii(tAddress, g.jpNativeAddress()).t("\n")
	d.t("Address (English): ").pii(tAddress, strings.Join(g.address("JP"), ", ")).t("\n")
	d.t("電話 / Tel: ").pii(tPhone, g.phone("JP")).t("\n")
	d.t("E-mail: ").pii(tEmail, g.email(person{given: p[1], family: p[0]})).t("\n")
	d.t("Emergency contact: ").pii(tPerson, g.pick(nativeNames[2:])).t(", ").pii(tPhone, g.phone("JP")).t("\n")
	d.t("Branch: ").miss("place", "Shinjuku").t(" / Visit: ").miss("date_not_birth", g.plainDate()).t("\n")
}

func germanLetter(g *gen, d *doc) {
	from, to := g.nextPerson(), g.person()
	anrede, titel := "Sehr geehrte Frau ", "Frau "
	if g.chance(0.5) {
		anrede, titel = "Sehr geehrter Herr ", "Herr "
	}
	d.pii(tPerson, from.full()).t("\n").pii(tAddress, strings.Join(g.address("DE"), "\n")).t("\n\n")
	d.t(titel).pii(tPerson, to.full()).t("\n").pii(tAddress, strings.Join(g.address("DE"), "\n")).t("\n\n")
	d.miss("place", "Frankfurt am Main").t(", den ").miss("date_not_birth", fmt.Sprintf("%d.%02d.2024", g.n(1, 28), g.n(1, 12))).t("\n\nBetreff: Ihr Mietvertrag\n\n")
	d.t(anrede).pii(tPerson, to.family).t(",\n\n")
	d.t("wir bestätigen den Eingang Ihrer Unterlagen (geboren am ").pii(tDOB, g.birthIn("de")).t("). ")
	d.t("Bitte überweisen Sie die Kaution auf das Konto IBAN ").pii(tIBAN, g.iban()).t(". ")
	d.t("Für Rückfragen erreichen Sie uns unter ").pii(tPhone, g.phone("DE")).t(".\n\nMit freundlichen Grüßen\n\n").pii(tPerson, from.full()).t("\n")
}

func frenchLetter(g *gen, d *doc) {
	from, to := g.nextPerson(), g.person()
	civ := g.any([]string{"Madame ", "Monsieur "})
	d.t(civ).pii(tPerson, to.full()).t("\n").pii(tAddress, strings.Join(g.address("FR"), "\n")).t("\n\n")
	d.t("Objet : votre dossier\n\n").t(civ).t(",\n\n")
	d.t("Nous avons bien reçu le dossier de ").pii(tPerson, to.full()).t(", ")
	d.t(g.any([]string{"née le ", "né le "})).pii(tDOB, g.birthIn("fr")).t(". ")
	d.t("Vous pouvez joindre votre conseillère, ").pii(tPerson, from.full()).t(", au ").pii(tPhone, g.phone("FR")).t(" ou par courriel : ").pii(tEmail, g.email(from)).t(".\n")
	d.t("Le dossier a été transmis à notre agence de ").miss("place", "Saint-Étienne").t(".\n\n")
	d.t("Veuillez agréer, ").t(civ).t(", nos salutations distinguées.\n\n").pii(tPerson, from.full()).t("\n")
}

func footnotedArticle(g *gen, d *doc) {
	a, b, c := g.nextPerson(), g.person(), g.person()
	d.t("The dispute began when the tenants' association wrote to the council in ").miss("date_not_birth", "March 2021").t(".¹ ")
	d.t("The landlord, ").miss("org", g.any(orgNames)).t(", disputed the figures.² ")
	d.t("Residents of ").miss("place", g.any(placeNames)).t(" ").miss("word_not_name", "hope").t(" the matter will be settled.³\n\n")
	d.t("____\n")
	d.t("¹ Interview with ").pii(tPerson, a.full()).t(", ").miss("place", g.any(placeNames)).t(", ").miss("date_not_birth", g.plainDate()).t(".\n")
	d.t("² Letter from ").pii(tPerson, b.full()).t(" to the council; copy held by ").pii(tPerson, c.full()).t(" (").pii(tEmail, g.email(c)).t(").\n")
	d.t("³ See also the note by ").pii(tPerson, b.family+", "+b.given).t(" (2022).\n")
}

func usIntake(g *gen, d *doc) {
	p := g.nextPerson()
	d.t("CLIENT INTAKE\n")
	d.t("Client: ").pii(tPerson, p.full()).t("\n")
	d.t("Social Security No. ").pii(tSSN, g.ssn()).t("\n")
	dob, _ := g.birth()
	d.t("DOB: ").pii(tDOB, dob).t("\n")
	d.t("Home: ").pii(tAddress, strings.Join(g.address("US"), ", ")).t("\n")
	d.t("Cell: ").pii(tPhone, g.phone("US")).t("\n")
	d.t("Direct deposit: routing ").pii(tRouting, g.aba()).t(", account no. ").pii(tAccount, g.digits(g.n(8, 12))).t("\n")
	d.t("Retainer charged to card ").pii(tCard, g.card()).t("; the card ending ").miss("card_last_four", g.digits(4)).t(" was declined.\n")
	d.t("Referred by ").pii(tPerson, g.person().full()).t(" of ").miss("org", g.any(orgNames)).t(".\n")
}

func accessLog(g *gen, d *doc) {
	for i := 0; i < 3; i++ {
		p := g.person()
		d.miss("timestamp", fmt.Sprintf("2025-0%d-%02dT%02d:%02d:11Z", g.n(1, 9), g.n(1, 28), g.n(0, 23), g.n(0, 59)))
		d.t(" login user=").pii(tEmail, g.email(p)).t(" from ")
		if g.chance(0.3) {
			d.pii(tIP, g.ipv6())
		} else {
			d.pii(tIP, g.ipv4())
		}
		d.t(" ua=Mozilla/5.0 build ").miss("version", fmt.Sprintf("%d.%d.%d", g.n(1, 20), g.n(0, 9), g.n(0, 99))).t("\n")
	}
	d.t("audit: profile of ").pii(tPerson, g.nextPerson().full()).t(" exported by admin\n")
}
