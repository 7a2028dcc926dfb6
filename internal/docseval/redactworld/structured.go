package redactworld

import (
	"fmt"
	"strings"
)

// js appends a JSON string literal; with typ set its content is an
// entity (JSON-escaped; the span covers the escaped text).
func (d *doc) js(typ, s string) *doc {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s)
	d.t(`"`)
	if typ == "" {
		d.t(esc)
	} else {
		d.pii(typ, esc)
	}
	return d.t(`"`)
}

// field appends `"key": "value"` (value an entity when typ is set).
func (d *doc) field(indent, key, typ, value string, last bool) *doc {
	d.t(indent+`"`+key+`": `).js(typ, value)
	if !last {
		d.t(",")
	}
	return d.t("\n")
}

var jsonKinds = []func(*gen, *doc){customerProfile, shopOrder, employeeList, auditEvents}

// addressFields writes an address as separate fields, the way a
// country's forms split it; every part but the country is personal.
func (g *gen) addressFields(d *doc, ind, country string, camel bool) {
	k := func(snake, cam string) string {
		if camel {
			return cam
		}
		return snake
	}
	no := fmt.Sprint(g.n(1, 240))
	type kv struct{ key, typ, val string }
	var fs []kv
	switch country {
	case "JP":
		p := jpPlaces[g.pickIndex(len(jpPlaces))]
		fs = []kv{{k("postal_code", "postalCode"), tAddress, p[3]}, {"prefecture", tAddress, p[1]}, {"city", tAddress, p[0]},
			{"district", tAddress, p[2]}, {"block", tAddress, fmt.Sprintf("%d-%d-%d", g.n(1, 6), g.n(1, 30), g.n(1, 20))},
			{"building", tAddress, g.pick(jpBuildings)}}
	case "AU":
		town := strings.Fields(g.pick(auTowns))
		fs = []kv{{"unit", tAddress, fmt.Sprint(g.n(1, 20))}, {k("street_number", "streetNumber"), tAddress, no},
			{k("street_name", "streetName"), tAddress, g.pick(auStreets)}, {"suburb", tAddress, strings.Join(town[:len(town)-2], " ")},
			{"state", tAddress, town[len(town)-2]}, {"postcode", tAddress, town[len(town)-1]}}
	case "GB":
		town, pc, _ := strings.Cut(g.pick(ukTowns), "|")
		fs = []kv{{"line1", tAddress, no + " " + g.pick(ukStreets)}, {"line2", tAddress, "Flat " + fmt.Sprint(g.n(1, 9))},
			{"town", tAddress, town}, {"postcode", tAddress, pc}}
	case "CA", "US":
		line1, city, region, zip := g.addressParts(country)
		fs = []kv{{k("address_line_1", "addressLine1"), tAddress, line1}, {"locality", tAddress, city},
			{"region", tAddress, region}, {k("postal_code", "postalCode"), tAddress, zip}}
	default: // DE, FR, NL: street and number apart
		street, num, zip, city := g.euParts(country)
		fs = []kv{{"street", tAddress, street}, {k("house_number", "houseNumber"), tAddress, num},
			{k("postal_code", "zip"), tAddress, zip}, {"city", tAddress, city}}
	}
	fs = append(fs, kv{k("country", "countryCode"), "", country})
	for i, f := range fs {
		d.field(ind, f.key, f.typ, f.val, i == len(fs)-1)
	}
}

func customerProfile(g *gen, d *doc) {
	c := g.country()
	p := g.nextPerson()
	camel := g.chance(0.5)
	d.t("{\n").field("  ", "customerId", "", "C-"+g.digits(6), false)
	d.near["customer_id"]++
	d.t("  \"name\": {\n").field("    ", "given", tPerson, p.given, false).field("    ", "family", tPerson, p.family, true).t("  },\n")
	dob, _ := g.birth()
	d.field("  ", map[bool]string{true: "birthDate", false: "date_of_birth"}[camel], tDOB, dob, false)
	d.t("  \"contact\": {\n").field("    ", "email", tEmail, g.email(p), false).field("    ", "phone", tPhone, g.phone(c), true).t("  },\n")
	d.t("  \"address\": {\n")
	g.addressFields(d, "    ", c, camel)
	d.t("  },\n  \"office\": {\"city\": ").js("", g.any([]string{"Rotterdam", "San Francisco", "Victoria", "Florence", "Charlotte"})).t(", \"country\": \"NL\"},\n")
	d.near["office_city"]++
	d.t("  \"created\": ").miss("timestamp", `"2024-11-02T10:15:00Z"`).t(",\n  \"newsletter\": true\n}\n")
}

func shopOrder(g *gen, d *doc) {
	c := g.country()
	buyer, giftee := g.nextPerson(), g.person()
	d.t("{\n  \"order\": ").miss("order_number", `"#`+g.digits(5)+`"`).t(",\n  \"email\": ").js(tEmail, g.email(buyer)).t(",\n")
	for i, who := range []person{buyer, giftee} {
		d.t("  \"" + []string{"billing_address", "shipping_address"}[i] + "\": {\n")
		d.field("    ", "first_name", tPerson, who.given, false).field("    ", "last_name", tPerson, who.family, false)
		d.field("    ", "company", "", "", false)
		g.addressFields(d, "    ", c, false)
		d.t("  },\n")
	}
	d.t("  \"phone\": ").js(tPhone, g.phone(c)).t(",\n")
	d.t("  \"note\": \"Gift for ").pii(tPerson, giftee.given).t(" - happy birthday!\"")
	d.t(",\n  \"line_items\": [{\"sku\": ").miss("sku", `"SKU-`+g.digits(5)+`"`).t(", \"title\": \"Ceramic mug - Victoria\", \"qty\": 2}],\n")
	d.t("  \"total\": 42.50\n}\n")
}

func employeeList(g *gen, d *doc) {
	d.t("[\n")
	for i := 0; i < 3; i++ {
		c := g.country()
		p, kin := g.nextPerson(), g.person()
		d.t("  {\n    \"employee_id\": ").miss("employee_id", fmt.Sprint(10000+g.n(0, 9999))).t(",\n")
		d.field("    ", "full_name", tPerson, p.full(), false)
		dob, _ := g.birth()
		d.field("    ", g.any([]string{"date_of_birth", "dob", "DateOfBirth", "birthday"}), tDOB, dob, false)
		d.field("    ", "home_address", tAddress, strings.Join(g.address(c), "\n"), false)
		d.t("    \"emergency_contact\": {").js("", "name").t(": ").js(tPerson, kin.full()).t(", ").js("", "phone").t(": ").js(tPhone, g.phone(c)).t("},\n")
		d.field("    ", "notes", "", g.any([]string{"Works from the Florence office.", "Transferred from Victoria, BC.", "Hope to confirm by Friday.", "Badge reissued."}), true)
		d.near["note"]++
		d.t("  }")
		if i < 2 {
			d.t(",")
		}
		d.t("\n")
	}
	d.t("]\n")
}

func auditEvents(g *gen, d *doc) {
	d.t("{\"events\": [\n")
	for i := 0; i < 3; i++ {
		p := g.nextPerson()
		d.t("  {\"actor\": {\"displayName\": ").js(tPerson, p.full()).t(", \"email\": ").js(tEmail, g.email(p)).t("}, ")
		d.t("\"ip\": ").js(tIP, g.ipv4()).t(", \"action\": \"login\", \"at\": ").miss("timestamp", `"2025-01-0`+fmt.Sprint(g.n(1, 9))+`T08:00:00Z"`).t("}")
		if i < 2 {
			d.t(",")
		}
		d.t("\n")
	}
	d.t("]}\n")
}

var csvKinds = []func(*gen, *doc){rosterCSV, contactsCSV, payrollCSV}

// csvCell appends a cell, quoted when it must be.
func (d *doc) cell(typ, v, delim string, last bool, eol string) {
	if strings.ContainsAny(v, delim+"\"\n") {
		d.t(`"`)
		if typ == "" {
			d.t(strings.ReplaceAll(v, `"`, `""`))
		} else {
			d.pii(typ, strings.ReplaceAll(v, `"`, `""`))
		}
		d.t(`"`)
	} else if typ == "" {
		d.t(v)
	} else {
		d.pii(typ, v)
	}
	if last {
		d.t(eol)
	} else {
		d.t(delim)
	}
}

func rosterCSV(g *gen, d *doc) {
	delim, eol := ";", "\r\n"
	hdr := []string{"Given name", "Family name", "Street", "House no.", "Postcode", "Town", "Phone", "Date of birth"}
	if g.variant(2) == 1 {
		hdr = []string{"Voornaam", "Achternaam", "Straat", "Huisnummer", "Postcode", "Plaats", "Telefoon", "Geboortedatum"}
	}
	d.t(strings.Join(hdr, delim) + eol)
	for i := 0; i < 4; i++ {
		c := g.any([]string{"NL", "DE", "FR"})
		p := g.nextPerson()
		street, num, zip, town := g.euParts(c)
		d.cell(tPerson, p.given, delim, false, eol)
		d.cell(tPerson, p.family, delim, false, eol)
		d.cell(tAddress, street, delim, false, eol)
		d.cell(tAddress, num, delim, false, eol)
		d.cell(tAddress, zip, delim, false, eol)
		d.cell(tAddress, town, delim, false, eol)
		d.cell(tPhone, g.phone(c), delim, false, eol)
		d.cell(tDOB, g.birthIn(map[string]string{"NL": "nl", "DE": "de", "FR": "fr"}[c]), delim, true, eol)
	}
}

func contactsCSV(g *gen, d *doc) {
	delim, eol := ",", "\n"
	d.t("First Name,Last Name,E-mail Address,Mobile Phone,Home Street,Home City,Home State,Home Postal Code,Home Country,Birthday,Company" + eol)
	for i := 0; i < 4; i++ {
		c := g.any([]string{"CA", "AU", "US", "GB"})
		p := g.nextPerson()
		street, city, state, zip := g.addressParts(c)
		d.cell(tPerson, p.given, delim, false, eol)
		d.cell(tPerson, p.family, delim, false, eol)
		d.cell(tEmail, g.email(p), delim, false, eol)
		d.cell(tPhone, g.phone(c), delim, false, eol)
		d.cell(tAddress, street, delim, false, eol)
		d.cell(tAddress, city, delim, false, eol)
		if state == "" {
			d.cell("", "", delim, false, eol)
		} else {
			d.cell(tAddress, state, delim, false, eol)
		}
		d.cell(tAddress, zip, delim, false, eol)
		d.cell("", c, delim, false, eol)
		dob, _ := g.birth()
		d.cell(tDOB, dob, delim, false, eol)
		d.cell("", g.any(orgNames), delim, true, eol)
		d.near["org"]++
	}
}

func payrollCSV(g *gen, d *doc) {
	delim, eol := "\t", "\n"
	d.t("Employee\tSSN\tRouting\tAccount\tMailing address\tPay date" + eol)
	for i := 0; i < 3; i++ {
		p := g.nextPerson()
		d.cell(tPerson, p.formal(), delim, false, eol)
		d.cell(tSSN, g.ssn(), delim, false, eol)
		d.cell(tRouting, g.aba(), delim, false, eol)
		d.cell(tAccount, g.digits(g.n(8, 12)), delim, false, eol)
		d.cell(tAddress, strings.Join(g.address("US"), "\n"), delim, false, eol)
		d.cell("", "2025-01-31", delim, true, eol)
		d.near["date_not_birth"]++
	}
}

// addressParts draws an address of CA, US, AU or GB as street line,
// town, region (may be "") and postcode.
func (g *gen) addressParts(country string) (street, city, region, zip string) {
	no := fmt.Sprint(g.n(1, 240))
	switch country {
	case "AU":
		f := strings.Fields(g.pick(auTowns))
		return no + " " + g.pick(auStreets), strings.Join(f[:len(f)-2], " "), f[len(f)-2], f[len(f)-1]
	case "GB":
		town, pc, _ := strings.Cut(g.pick(ukTowns), "|")
		return no + " " + g.pick(ukStreets), town, "", pc
	case "CA":
		city, rest, _ := strings.Cut(g.pick(caTowns), ", ")
		region, zip, _ = strings.Cut(rest, " ")
		return no + " " + g.pick(caStreets), city, region, zip
	}
	city, rest, _ := strings.Cut(g.pick(usTowns), ", ")
	region, zip, _ = strings.Cut(rest, " ")
	return no + " " + g.pick(usStreets), city, region, zip
}

// euParts draws a German, French or Dutch address as street, house
// number, postcode and town.
func (g *gen) euParts(country string) (street, num, zip, town string) {
	num = fmt.Sprint(g.n(1, 240))
	var t string
	switch country {
	case "DE":
		street, t = g.pick(deStreets), g.pick(deTowns)
	case "FR":
		street, t = g.pick(frStreets), g.pick(frTowns)
		num += g.any([]string{"", "", " bis"})
	default:
		street, t = g.pick(nlStreets), g.pick(nlTowns)
		return street, num, t[:7], t[8:]
	}
	zip, town, _ = strings.Cut(t, " ")
	return street, num, zip, town
}
