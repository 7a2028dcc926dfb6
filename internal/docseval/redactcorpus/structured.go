package redactcorpus

import (
	"fmt"
	"strings"
)

// jsonString appends a JSON string literal whose content is the span s
// (escaped as JSON requires; the span covers the escaped text).
func (b *builder) jstr(t, s string) *builder {
	b.text(`"`)
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	if t == "" {
		b.text(esc)
	} else {
		b.pii(t, esc)
	}
	return b.text(`"`)
}

// jsonDoc: nested records with PII in keys, strings, arrays and numbers.
func jsonDoc(g *gen, b *builder) {
	name := g.person()
	mail, mail2 := g.email(name), g.email(g.person())
	ssn := g.slot(b, SSN, g.ssnDigits())
	b.text("{\n  \"customer\": {\n    \"name\": ").jstr(Person, name).text(",\n")
	if ssn[0] == '0' || strings.Contains(ssn, "-") { // a JSON number cannot start with 0
		b.text("    \"ssn\": ").jstr(SSN, ssn).text(",\n")
	} else {
		b.text("    \"ssn\": ").pii(SSN, ssn).text(",\n")
	}
	b.text("    \"date_of_birth\": ").jstr(DateOfBirth, g.date(1950, 2004)).text(",\n")
	b.text("    \"phones\": [").jstr(Phone, g.phone()).text(", ").jstr(Phone, g.phone()).text("],\n")
	b.text("    \"address\": ").jstr(StreetAddress, g.address("\n")).text(",\n")
	b.text("    \"card_number\": ")
	card := strings.NewReplacer(" ", "", "-", "").Replace(g.card())
	b.pii(CreditCard, card).text(",\n")
	b.text("    \"bank\": {\"routing_number\": ").jstr(BankRouting, g.aba()).text(", \"account_number\": ").jstr(BankAccount, g.account()).text(", \"iban\": ").jstr(IBAN, g.iban()).text("},\n")
	b.text("    \"notes\": ").jstr("", "").text(",\n")
	b.text("    \"last_login_ip\": ").jstr(IPAddress, g.ipv4()).text("\n  },\n")
	b.text("  \"contacts_by_email\": {\n    ").jstr(Email, mail).text(": {\"role\": \"owner\", \"since\": ").miss("date_not_birth", `"`+g.date(2015, 2023)+`"`).text("},\n    ")
	b.jstr(Email, mail2).text(": {\"role\": \"billing\"}\n  },\n")
	b.text("  \"message\": \"Please call "+g.pick([]string{"Dr.", "Ms.", "Mr."})+" ").pii(Person, g.pick(surnames)).text(" at ").pii(Phone, g.phone()).text(" about order ").miss("order_number", "ORD-"+g.digits(6)).text(".\",\n")
	b.text("  \"order_id\": ").miss("order_number", "1"+g.digits(9)).text(",\n")
	b.text("  \"transaction_id\": ").miss("transaction_id", `"`+g.transactionID()+`"`).text(",\n")
	b.text("  \"created_at\": ").miss("timestamp", `"2024-02-11T09:41:00Z"`).text(",\n")
	b.text("  \"app_version\": ").miss("version", `"3.12.0.4"`).text(",\n")
	b.text("  \"isbn\": ").miss("isbn", `"978-0-306-40615-7"`).text(",\n")
	b.text("  \"amount\": 1234.56, \"active\": true, \"tags\": [\"vip\", null]\n}\n")
}

// csvDoc: a people table in a random dialect, with quoted multi-line
// address cells and a header that gives columns their meaning.
func csvDoc(g *gen, b *builder) {
	delim := g.pick([]string{",", ";", "\t"})
	eol := g.pick([]string{"\n", "\r\n"})
	if g.chance(0.5) {
		b.text("\uFEFF")
	}
	hdr := []string{"Name", "Email", "Phone", "SSN", "DOB", "Address", "Order ID", "Notes"}
	b.text(strings.Join(hdr, delim) + eol)
	for row := 0; row < 4; row++ {
		name := g.slot(b, Person, g.person())
		if row == 3 {
			name = g.pick(cjk)
		}
		cell := func(t, v string) {
			if strings.ContainsAny(v, delim+"\"\n") {
				b.text(`"`).pii(t, strings.ReplaceAll(v, `"`, `""`)).text(`"`)
			} else {
				b.pii(t, v)
			}
			b.text(delim)
		}
		cell(Person, name)
		cell(Email, g.email(name))
		cell(Phone, g.phone())
		ssn := g.ssn()
		if row == 1 {
			ssn = strings.ReplaceAll(ssn, "-", "")
		}
		cell(SSN, ssn)
		cell(DateOfBirth, g.date(1950, 2004))
		cell(StreetAddress, g.address(eol))
		b.miss("order_number", "A"+g.digits(7)).text(delim)
		b.text(`"said ""ok""; ref `).miss("order_number", g.digits(6)).text(`"` + eol)
	}
	b.text(fmt.Sprintf("%s%s%s%s%s%s%s%s%s", "", delim, "", delim, "", delim, "", delim, "total") + eol)
}
