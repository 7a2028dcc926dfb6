package redactcorpus

import (
	"fmt"
	"strings"
)

// textKinds are the plain-text document templates.
var textKinds = []func(*gen, *builder){letter, roles, hrRecord, payment, serverLog, narrative, international, wrapped, nearMissMemo}

// letter: salutation, body, signature block with a multi-line address.
func letter(g *gen, b *builder) {
	first, last := g.pick(firstNames), g.pick(surnames)
	b.text("Dear ").pii(Person, first).text(",\n\n")
	b.text("Thank you for your letter of ").text(g.date(2019, 2024)).text(". ")
	b.text("I will mark the rose garden in April, as agreed with the committee. ")
	b.text("Please send the signed form to ").pii(Email, g.email(first+" "+last)).text(" or call me on ").pii(Phone, g.phone()).text(".\n\n")
	b.text("Sincerely,\n\n")
	sender := g.person()
	b.pii(Person, sender).text("\n").pii(StreetAddress, g.address("\n")).text("\n")
	b.text("Tel. ").pii(Phone, g.phone()).text("\n")
}

// hrRecord: a labelled form, one field per line.
func hrRecord(g *gen, b *builder) {
	name := g.person()
	b.text("EMPLOYEE RECORD - CONFIDENTIAL\n\n")
	b.text("Name: ").pii(Person, name).text("\n")
	b.text("SSN: ").pii(SSN, g.ssn()).text("\n")
	b.text("Date of Birth: ").pii(DateOfBirth, g.date(1950, 2003)).text("\n")
	b.text("Home address: ").pii(StreetAddress, g.address(", ")).text("\n")
	b.text("Mobile: ").pii(Phone, g.phone()).text("\n")
	b.text("E-mail: ").pii(Email, g.email(name)).text("\n")
	b.text("Direct deposit - Routing number: ").pii(BankRouting, g.aba()).text(", Account number: ").pii(BankAccount, g.account()).text("\n")
	b.text("Driver's License: ").pii(DriverLicense, g.driverLicense()).text("\n")
	b.text("Passport No: ").pii(Passport, g.passport()).text("\n")
	b.text("Start date: ").miss("date_not_birth", g.date(2015, 2024)).text("\n")
	b.text("Employee ID: ").miss("employee_id", "E-"+g.digits(6)).text("\n")
	b.text("Emergency contact: ").pii(Person, g.person()).text(", ").pii(Phone, g.phone()).text("\n")
}

// payment: card, IBAN and identifiers that are not personal.
func payment(g *gen, b *builder) {
	name := g.person()
	b.text("Payment confirmation\n")
	b.text("Cardholder: ").pii(Person, name).text("\n")
	b.text("Card: ").pii(CreditCard, g.card()).text(" (exp 09/27)\n")
	b.text("Transaction ID: ").miss("transaction_id", g.transactionID()).text("\n")
	b.text("Order #").miss("order_number", "ORD-"+g.digits(4)+"-"+g.digits(6)).text(" placed ").miss("timestamp", "2024-03-15T12:30:45Z").text("\n")
	b.text("Tracking number: ").miss("tracking", "1Z"+g.digits(3)+"AA1"+g.digits(8)).text("\n")
	b.text("Refund to IBAN ").pii(IBAN, g.iban()).text(" (account holder ").pii(Person, g.person()).text(").\n")
	b.text("A previous attempt with card ").miss("card_luhn_invalid", g.badCard()).text(" was declined; IBAN ").miss("iban_bad_checksum", g.badIBAN()).text(" was rejected.\n")
	b.text("Receipt sent to ").pii(Email, g.email(name)).text(".\n")
}

// serverLog: timestamps, IPs, versions and e-mails in log lines.
func serverLog(g *gen, b *builder) {
	for i := 0; i < 4; i++ {
		b.miss("timestamp", fmt.Sprintf("2024-0%d-1%dT0%d:1%d:2%d.123Z", g.n(1, 9), g.n(0, 9), g.n(0, 9), g.n(0, 9), g.n(0, 9)))
		b.text(" INFO login ok user=").pii(Email, g.email(g.person()))
		b.text(" ip=").pii(IPAddress, g.ipv4()).text(" build ").miss("version", fmt.Sprintf("%d.%d.%d.%d", g.n(1, 9), g.n(0, 20), g.n(0, 9), g.n(0, 200))).text("\n")
	}
	b.miss("timestamp", "2024-05-02 08:15:00").text(" WARN client ").pii(IPAddress, g.ipv6()).text(" agent curl/").miss("version", "8.4.0").text(" request_id=").miss("request_id", g.digits(12)).text("\n")
	b.text("Deployed version ").miss("version", fmt.Sprintf("%d.%d.%d.%d", g.n(1, 9), g.n(0, 9), g.n(0, 9), g.n(1, 9))).text(" (v").miss("version", "2.4.1").text(") at epoch ").miss("timestamp", "1700000000").text("\n")
}

// narrative: names that are words, used as words and as names.
func narrative(g *gen, b *builder) {
	b.text("Minutes of the garden committee. I will mark the rose garden in April. ")
	b.text("Sales rose sharply in June, and the grace period ends in May. ")
	b.pii(Person, "Grace "+g.pick([]string{"Kim", "Okafor", "Patel", "Lindqvist"})).text(" chaired the meeting; ")
	b.pii(Person, "Mark "+g.pick([]string{"Davis", "Thompson", "Nguyen"})).text(" took notes. ")
	b.text("Will the new benches arrive? ").pii(Person, "Will "+g.pick([]string{"Anderson", "Martinez", "Chen"})).text(" thinks so. ")
	b.text("We sang Amazing Grace and planted Hope Street's verges. ")
	b.text(g.pick(titles)+" ").pii(Person, g.pick(rareLast)).text(" will review the plan with ").pii(Person, g.person()).text(".\n")
	b.text("Contact: ").pii(Email, g.email(g.person())).text(". Invoice dated ").miss("date_not_birth", g.date(2020, 2024)).text(".\n")
	b.text("Signed on ").miss("date_not_birth", "January 5, 1980").text(" by the committee.\n")
}

// international: non-Latin names by label, NFD accents, Last, First.
func international(g *gen, b *builder) {
	c := cyrillic[g.r.IntN(len(cyrillic))]
	gr := greek[g.r.IntN(len(greek))]
	b.text("Имя: ").pii(Person, c[0]+" "+c[1]).text("\n")
	b.text("Όνομα: ").pii(Person, gr[0]+" "+gr[1]).text("\n")
	b.text("姓名：").pii(Person, g.pick(cjk)).text("\n")
	b.text("Name: ").pii(Person, g.pick(rareFirst)+" "+g.pick(rareLast)).text("\n")
	b.text("Patient: ").pii(Person, nfd(g.pick([]string{"José García", "Chloé Dubois", "Björn Müller", "Zoë Fernández"}))).text("\n")
	b.text("Listed as ").pii(Person, g.pick(surnames)+", "+g.pick(firstNames)).text(" in the register.\n")
	b.text("Herr ").pii(Person, "Müller").text(" wohnt in der ").pii(StreetAddress, g.pick(deStreets)+" "+fmt.Sprint(g.n(1, 99))+", "+fmt.Sprint(g.n(10115, 99998))+" Berlin").text(".\n")
	b.text("IBAN: ").pii(IBAN, g.iban()).text("\n")
	b.text("Tel: ").pii(Phone, "+44 20 7946 "+g.digits(4)).text("\n")
}

// wrapped: values broken across lines as narrow columns do.
func wrapped(g *gen, b *builder) {
	ssn := g.ssn()
	card := strings.ReplaceAll(g.card(), "-", " ")
	b.text("Applicant SSN ").pii(SSN, ssn[:7]+"\n"+ssn[7:]).text(" on file.\n")
	if i := strings.LastIndex(card, " "); i > 0 && len(card) == 19 {
		card = card[:9] + "\n" + card[10:]
	}
	b.text("Card on file ").pii(CreditCard, card).text(".\n")
	b.text("Mailing address:\n").pii(StreetAddress, g.address("\n")).text("\n")
	b.text("Contact ").pii(Person, g.pick(firstNames)+"\n"+g.pick([]string{"Kim", "Okafor", "Smith", "Nguyen", "Patel"})).text(" for details.\n")
	b.text("Email ").pii(Email, g.email(g.person())).text("\n")
}

// nearMissMemo: mostly things that must not be redacted, plus one phone.
func nearMissMemo(g *gen, b *builder) {
	b.text("Reference memo. Invalid test SSNs: ")
	for i, s := range invalidSSNs[:4+g.r.IntN(4)] {
		if i > 0 {
			b.text(", ")
		}
		b.miss("ssn_invalid", s)
	}
	b.text(".\nISBN ").miss("isbn", "978-0-306-40615-7").text(" and ISBN ").miss("isbn", "978-3-16-148410-0").text(".\n")
	b.text("Routing number: ").miss("aba_bad_checksum", g.badABA()).text(" (typo, rejected).\n")
	b.text("Card ").miss("card_luhn_invalid", g.badCard()).text(" failed; transaction ").miss("transaction_id", g.transactionID()).text(".\n")
	b.text("Order ").miss("order_number", "#"+g.digits(6)).text(" shipped; part ").miss("part_number", "PN-"+g.digits(4)+"-"+g.digits(3)).text(".\n")
	b.text("Meeting at ").miss("time", "12:30:45").text(" on ").miss("date_not_birth", g.date(2021, 2024)).text("; version ").miss("version", "10.0.19045.1").text(".\n")
	b.text("Will you sign by May 5? Mark the date. The Rose Bowl is in January.\n")
	b.text("Questions: ").pii(Phone, g.phone()).text("\n")
}

// roles: a case file of role labels ("Patient:", "Guarantor:", "Attn:")
// before names, most of them invented so only the label says they are
// names, in the shapes forms use ("Last, First", a title, a trailing
// date); a memo header; and labels followed by what is not a person.
func roles(g *gen, b *builder) {
	b.text("CASE FILE SUMMARY\n\n")
	b.text("Patient: ").pii(Person, g.slot(b, Person, g.inventedName())).text(", born ").pii(DateOfBirth, g.date(1950, 2000)).text(".\n")
	for _, k := range g.r.Perm(len(personRoles))[:7] {
		b.text(personRoles[k] + ": ")
		name := g.inventedName()
		switch g.r.IntN(5) {
		case 0:
			first, last, _ := strings.Cut(name, " ")
			b.pii(Person, last+", "+first)
		case 1:
			b.text(g.pick(titles)+" ").pii(Person, name)
		case 2:
			b.pii(Person, name).text(" (" + g.date(2022, 2024) + ")")
			b.near["date_not_birth"]++
		default:
			b.pii(Person, name)
		}
		b.text("\n")
	}
	b.text("\nTo: ").pii(Person, g.inventedName()).text("\nFrom: ").pii(Person, g.person()).text("\nRe: Renewal\n\n")
	misses := []string{"To: All Staff", "From: Accounts Payable", "Client: Northwind Holdings LLC",
		"Contact: Customer Service", "Witness: N/A", "Attn: Billing Department", "Signed: ____________",
		"Beneficiary: Estate of the Insured", "Tenant: Unit 4B, Building C", "Employee: see attached list"}
	for _, k := range g.r.Perm(len(misses))[:4] {
		b.miss("label_not_person", misses[k]).text("\n")
	}
	b.text("Please contact ").pii(Person, g.inventedName()).text(" or ").pii(Person, g.person()).text(" if anything is missing.\n")
}
