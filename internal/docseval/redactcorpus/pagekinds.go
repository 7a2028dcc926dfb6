package redactcorpus

import (
	"fmt"
	"strings"
)

// pageKinds are the page document templates: a labelled form with a
// table, a letter whose paragraphs wrap entities across lines, a memo
// with role labels and an employee table, and a bank statement.
var pageKinds = []func(*gen, *pageBuilder){pageForm, pageLetter, pageMemo, pageStatement}

// personRoles are the labels after which a person's name is written.
var personRoles = []string{"Patient", "Client", "Employee", "Tenant", "Borrower", "Applicant",
	"Beneficiary", "Claimant", "Insured", "Guarantor", "Account holder", "Cardholder", "Signed",
	"Witness", "Contact", "Attn"}

// pagePerson is a name for a page document: invented (findable only from
// context) or common, in the Latin script the renderer and OCR share.
func (g *gen) pagePerson() string {
	if g.chance(0.5) {
		return g.inventedName()
	}
	return g.person()
}

// cell is one table cell: parts, "\n" in them a forced line break.
type cell []part

// table sets a header row and rows of cells in columns starting at xs
// (the last column ends at right), wrapping a cell's text inside its
// column, with rules between rows. It returns the y below the table.
func (pb *pageBuilder) table(y float64, xs []float64, right float64, header []string, rows [][]cell) float64 {
	pb.rule(xs[0], y-12, right, y-12)
	for c, h := range header {
		pb.item(xs[c]+4, y, 9.5, true, txt(h))
	}
	y += 8
	for _, row := range rows {
		pb.rule(xs[0], y, right, y)
		top, bottom := y+13, y+13
		for c, parts := range row {
			end := right
			if c+1 < len(xs) {
				end = xs[c+1]
			}
			cy := top
			pb.para(xs[c]+4, &cy, end-xs[c]-8, 10, 12, parts...)
			bottom = max(bottom, cy)
		}
		y = bottom - 4
	}
	pb.rule(xs[0], y, right, y)
	return y + 24
}

// pageForm: an intake form with labelled fields (a role label before an
// often invented name), an address on two lines, a table whose narrow
// cells wrap SSNs, and signature lines.
func pageForm(g *gen, pb *pageBuilder) {
	b := pb.b
	name := g.slot(b, Person, g.pagePerson())
	y := 80.0
	pb.item(72, y, 16, true, txt(g.pick([]string{"Riverside Health", "Northgate Insurance", "Harbor Lending"})+" Intake Form"))
	role := g.pick([]string{"Patient", "Client", "Applicant", "Insured", "Claimant", "Borrower"})
	rows := [][]part{
		{txt(role + ": "), {Person, name}},
		{txt("Date of Birth: "), {DateOfBirth, g.date(1950, 2003)}},
		{txt("SSN: "), {SSN, g.slot(b, SSN, g.ssn())}},
		{txt("Phone: "), {Phone, g.phone()}},
		{txt("Email: "), {Email, g.email(name)}},
		{txt("Insurance card: "), {CreditCard, g.card()}},
		{txt("Visit date: "), txt(g.date(2022, 2024)), txt("  Claim no. " + g.digits(6))},
		{txt(fmt.Sprintf("Policy no. PLC-%s   Group %s   Copay $%d.00", g.digits(7), g.digits(5), g.n(10, 60)))},
	}
	b.near["date_not_birth"]++
	b.near["claim_number"]++
	b.near["policy_number"]++
	for _, r := range rows {
		y += 20
		pb.line(72, y, 11, r...)
	}
	y += 20
	addr := strings.Split(g.usAddressLines(), "\n")
	pb.line(72, y, 11, txt("Address: "), part{StreetAddress, addr[0]})
	y += 15
	pb.line(118, y, 11, part{StreetAddress, addr[1]})
	y += 22
	pb.line(72, y, 11, txt("Emergency contact: "), part{Person, g.pagePerson()}, txt(", "), part{Phone, g.phone()})
	y += 36
	var rows2 [][]cell
	for r := 0; r < 2; r++ {
		ssn := g.ssn()
		rows2 = append(rows2, []cell{{{Person, g.pick(firstNames[:30])}}, {{Person, g.pick(surnames[:20])}},
			{{SSN, ssn[:7] + "\n" + ssn[7:]}}, {{BankAccount, g.account()}}})
	}
	y = pb.table(y, []float64{72, 160, 250, 360}, 540, []string{"First name", "Last name", "SSN", "Account number"}, rows2)
	pb.line(72, y+10, 11, txt("Signed: "), part{Person, g.pagePerson()})
	pb.line(330, y+10, 11, txt("Witness: "), part{Person, g.pagePerson()})
}

// pageLetter: a letter whose paragraphs wrap names, phone numbers, e-mail
// addresses and account numbers across lines, sometimes over two pages.
func pageLetter(g *gen, pb *pageBuilder) {
	b := pb.b
	who := g.slot(b, Person, g.pagePerson())
	surname := who[strings.LastIndexByte(who, ' ')+1:]
	title := g.pick([]string{"Ms.", "Mr.", "Dr."})
	y := 78.0
	pb.item(72, y, 14, true, txt(g.pick([]string{"Northwind Legal Services LLP", "Cobalt Mutual Insurance", "Elm Street Credit Union"})))
	y += 30
	pb.line(72, y, 11, txt(g.pick(monthsEN)+fmt.Sprintf(" %d, 2024", g.n(1, 28))))
	b.near["date_not_birth"]++
	addr := strings.Split(g.usAddressLines(), "\n")
	for _, l := range [][]part{{txt(title + " "), {Person, who}}, {{StreetAddress, addr[0]}}, {{StreetAddress, addr[1]}}} {
		y += 15
		pb.line(72, y, 11, l...)
	}
	y += 28
	pb.line(72, y, 11, txt("Re: Claim "+g.digits(8)+", policy POL-"+g.digits(8)))
	b.near["claim_number"]++
	b.near["policy_number"]++
	y += 26
	pb.line(72, y, 11, txt("Dear "+title+" "), part{Person, surname}, txt(","))
	y += 22
	width := 440.0 + float64(g.n(0, 30))
	pb.para(72, &y, width, 11, 14, txt("Thank you for speaking with us on "+g.date(2023, 2024)+". As discussed, your case officer"),
		part{Person, g.pagePerson()}, txt("can be reached on"), part{Phone, g.phone()},
		txt("or by e-mail at"), part{Email, g.email(g.person())}, txt(". Our records list your date of birth as"),
		part{DateOfBirth, g.date(1948, 2001)}, txt("and your Social Security number as"), part{SSN, g.ssn()}, txt("."))
	y += 10
	pb.para(72, &y, width, 11, 14, txt("Settlement funds can be wired to IBAN"), part{IBAN, g.iban()},
		txt("or sent by ACH to routing number"), part{BankRouting, g.aba()}, txt("and account"), part{BankAccount, g.account()},
		txt(". The card ending in "+g.digits(4)+" will not be charged; quote reference "+g.transactionID()+" with any questions."))
	b.near["transaction_id"]++
	if g.chance(0.4) {
		pb.newPage()
		y = 90
	} else {
		y += 14
	}
	pb.line(72, y, 11, txt("Sincerely,"))
	y += 34
	pb.line(72, y, 11, part{Person, g.pagePerson()})
	pb.line(72, y+14, 11, txt("Claims Manager"))
	pb.line(72, y+40, 11, txt("cc: "), part{Person, g.pagePerson()})
}

// pageMemo: a memo header of role labels (or the departments that must
// stay), a paragraph and an employee table.
func pageMemo(g *gen, pb *pageBuilder) {
	b := pb.b
	y := 80.0
	pb.item(72, y, 16, true, txt("MEMORANDUM"))
	to := []part{txt("To: "), {Person, g.slot(b, Person, g.pagePerson())}}
	if g.chance(0.3) {
		to = []part{txt("To: All Staff")}
		b.near["department"]++
	}
	from := []part{txt("From: "), {Person, g.pagePerson()}}
	if g.chance(0.3) {
		from = []part{txt("From: Accounts Payable")}
		b.near["department"]++
	}
	for _, l := range [][]part{to, from, {txt("Attn: "), {Person, g.pagePerson()}},
		{txt("Date: " + g.date(2023, 2024))}, {txt("Re: Payroll corrections, batch " + g.digits(5))}} {
		y += 18
		pb.line(72, y, 11, l...)
	}
	b.near["date_not_birth"]++
	y += 28
	pb.para(72, &y, 460, 11, 14, txt("The deposits below went to the wrong accounts. Employee"), part{Person, g.pagePerson()},
		txt("(employee ID E-"+g.digits(6)+") was paid into account"), part{BankAccount, g.account()},
		txt("instead of the account on file. Please call"), part{Person, g.pagePerson()}, txt("at"), part{Phone, g.phone()},
		txt("before "+g.date(2024, 2025)+". Charge invoice INV-"+g.digits(6)+" to cost center "+g.digits(4)+"-"+g.digits(3)+"."))
	b.near["employee_id"]++
	b.near["invoice_number"]++
	y += 24
	var rows [][]cell
	for r := 0; r < 3; r++ {
		n := g.pagePerson()
		rows = append(rows, []cell{{{Person, strings.Replace(n, " ", "\n", 1)}}, {{SSN, g.ssn()}}, {{Phone, g.phone()}}, {{Email, g.email(n)}}})
	}
	pb.table(y, []float64{72, 180, 270, 390}, 560, []string{"Employee", "SSN", "Phone", "Email"}, rows)
}

// pageStatement: a bank statement with labelled holder and account
// fields in two columns and a transaction table of dates, amounts and
// references that must stay.
func pageStatement(g *gen, pb *pageBuilder) {
	b := pb.b
	holder := g.slot(b, Person, g.pagePerson())
	y := 78.0
	pb.item(72, y, 14, true, txt("First Harbor Bank - Account Statement"))
	y += 22
	pb.line(72, y, 10, txt(fmt.Sprintf("Statement period: 01/01/2024 - 01/31/2024   Page 1 of 1   Branch %d", g.n(100, 999))))
	b.near["date_not_birth"] += 2
	addr := strings.Split(g.usAddressLines(), "\n")
	for _, l := range [][]part{{txt("Account holder: "), {Person, holder}}, {txt("Mailing address: "), {StreetAddress, addr[0]}}} {
		y += 18
		pb.line(72, y, 11, l...)
	}
	y += 14
	pb.line(163, y, 11, part{StreetAddress, addr[1]})
	y += 20
	pb.line(72, y, 11, txt("Account number: "), part{BankAccount, g.account()})
	pb.line(330, y, 11, txt("Routing number: "), part{BankRouting, g.aba()})
	y += 18
	pb.line(72, y, 11, txt("IBAN: "), part{IBAN, g.iban()})
	y += 18
	pb.line(72, y, 11, txt("Cardholder: "), part{Person, g.pagePerson()})
	pb.line(330, y, 11, txt("Card: "), part{CreditCard, g.card()})
	y += 36
	var rows [][]cell
	for r := 0; r < 4; r++ {
		desc := cell{txt(g.pick([]string{"Payment to Acme Utilities", "Grocery Mart #" + g.digits(4), "Online transfer", "ATM withdrawal"}))}
		if r == 2 {
			desc = cell{txt("Transfer from "), {Person, g.pagePerson()}}
		}
		rows = append(rows, []cell{{txt(fmt.Sprintf("01/%02d/2024", g.n(1, 31)))}, desc,
			{txt("REF " + g.transactionID())}, {txt(fmt.Sprintf("$%d.%02d", g.n(5, 2400), g.n(0, 99)))}})
		b.near["transaction_id"]++
	}
	pb.table(y, []float64{72, 150, 330, 490}, 560, []string{"Date", "Description", "Reference", "Amount"}, rows)
}
