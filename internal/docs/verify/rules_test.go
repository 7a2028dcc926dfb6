package verify

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/verify/result"
)

// Each case: text, and the type the verifier must report ("" = clean).
var ruleCases = []struct{ name, text, typ string }{
	{"ssn dashed", "ref 372-81-4410", "US_SSN"},
	{"ssn bare with word", "SSN: 372814410", "US_SSN"},
	{"ssn invalid area", "000-12-3456 666-12-3456 912-34-5678", ""},
	{"ssn invalid group serial", "123-00-4567 345-67-0000", ""},
	{"ssn advertising", "078-05-1120 219-09-9999", ""},
	{"ssn bare no word", "order 372814410", ""},
	{"card", "4111 1111 1111 1111", "CREDIT_CARD"},
	{"card bare", "4012888888881881", "CREDIT_CARD"},
	{"card wrapped", "4111 1111\n1111 1111", "CREDIT_CARD"},
	{"card luhn fails", "4111 1111 1111 1112", ""},
	{"card industry 7", "7000123412341238", ""},
	{"log line digits", "build 8.16.5.24\n2024-05-02 08:15:00", ""},
	{"routing", "Routing number: 021000021", "US_BANK_ROUTING"},
	{"routing checksum", "Routing number: 021000022", ""},
	{"account", "Account number: 12345678", "US_BANK_ACCOUNT"},
	{"account masked", "Account number: ****5678", ""},
	{"iban", "IBAN GB82 WEST 1234 5698 7654 32 ok", "IBAN"},
	{"iban then word", "DE89 3704 0044 0532 0130 00 WIRE", "IBAN"},
	{"iban bad", "IBAN GB83 WEST 1234 5698 7654 32 was rejected", ""},
	{"email", "write to grace.kim@example.com", "EMAIL"},
	{"email masked", "write to *****.***@*******.***", ""},
	{"email file", "icon@2x.png", ""},
	{"phone nanp", "(202) 555-0143", "PHONE"},
	{"phone e164", "+44 20 7946 0958", "PHONE"},
	{"phone bare with word", "Phone: 2025550143", "PHONE"},
	{"phone bare", "epoch 1700000000 id 2025550143", ""},
	{"phone masked", "(***) ***-0143", ""},
	{"ipv4", "from 192.168.10.20", "IP_ADDRESS"},
	{"ipv6", "client 2001:db8::8a2e:370:7334", "IP_ADDRESS"},
	{"version quad", "version 1.2.3.4, build 10.2.0.1", ""},
	{"dob", "Date of birth: 14 March 1982", "DATE_OF_BIRTH"},
	{"not dob", "Invoice date: 03/14/2023", ""},
	{"honorific", "ask Dr. Okafor", "PERSON"},
	{"name label", "Name: Grace Kim", "PERSON"},
	{"name json", `{"first_name": "Will"}`, "PERSON"},
	{"name cjk", "姓名：王伟", "PERSON"},
	{"name cyrillic", "Имя: Иван", "PERSON"},
	{"dear", "Dear Priya,", "PERSON"},
	{"dear sir", "Dear Sir,", ""},
	{"words as words", "I will mark the rose garden in April.", ""},
	{"street", "at 12 Main Street today", "STREET_ADDRESS"},
	{"city state zip", "Springfield, IL 62704", "STREET_ADDRESS"},
	{"uk", "London SW1A 2AA", "STREET_ADDRESS"},
	{"de", "Hauptstraße 5, 10115 Berlin", "STREET_ADDRESS"},
	{"fr", "12 rue de la Paix, 75002 Paris", "STREET_ADDRESS"},
	{"placeholders", "Name: <PERSON>\nSSN: <US_SSN> card <CREDIT_CARD> <EMAIL_2> <PERSON:9f86d081884c7d65>", ""},
	{"masks", "SSN ***-**-6789 card **** **** **** 1111 Name: ***** ***", ""},
	{"isbn", "ISBN 978-0-306-40615-7", ""},
	{"timestamp", "2024-03-15T12:30:45Z 12:30:45", ""},
	// Phones, birth dates and addresses as other countries write them
	// (issue 33), and what must stay.
	{"phone trunk", "Tel +44 (0)20 7946 0958", "PHONE"},
	{"phone national de", "erreichen Sie uns unter 01512 3457861.", "PHONE"},
	{"phone national fr", "au 06 12 34 56 78 ou", "PHONE"},
	{"ssn shape is no phone", "invalid: 078-05-1120, 345-67-0000", ""},
	{"dob dashed", "Date of birth: 03-Jan-1980", "DATE_OF_BIRTH"},
	{"dob json key", `{"birthDate": "04-Jul-1989"}`, "DATE_OF_BIRTH"},
	{"dob german", "geboren am 7. Oktober 1945", "DATE_OF_BIRTH"},
	{"dob b dot", "Ms Kim (b. 12 May 1960) said", "DATE_OF_BIRTH"},
	{"jp latin", "2-21-1 Shibuya, Shibuya-ku, Tokyo 150-0002", "STREET_ADDRESS"},
	{"jp native", "住所: 〒150-0002", "STREET_ADDRESS"},
	{"ca", "Vancouver, BC V6C 1T1", "STREET_ADDRESS"},
	{"au", "Surry Hills NSW 2010", "STREET_ADDRESS"},
	{"nl", "Damrak 1, 1012 LG Amsterdam", "STREET_ADDRESS"},
	{"de no suffix", "Zeil 31\n60311 Frankfurt am Main", "STREET_ADDRESS"},
	{"json address parts", `{"address": {"street": "<STREET_ADDRESS>", "city": "Amsterdam", "country": "NL"}}`, "STREET_ADDRESS"},
	{"json office city", `{"office": {"city": "Rotterdam", "country": "NL"}}`, ""},
	{"csv address parts", "Street,City,Country\n<STREET_ADDRESS>,Amsterdam,NL\n", "STREET_ADDRESS"},
	{"csv cities", "City,Country\nRotterdam,NL\n", ""},
	// Names the label rules would not see.
	{"particle", "Aino da Silva signed", "PERSON"},
	{"hyphen particle", "a letter from Makena al-Hakim", "PERSON"},
	{"family first", "signed for by Nguyễn Thị Mai", "PERSON"},
	{"word name said", "Hope noted that the lift is out", "PERSON"},
	{"chat speaker", "[09:41] Sabbren Luquiswyldra: hi", "PERSON"},
	{"party in capitals", "(1) EIRIK ZU LYNAR of 12 Main St", "PERSON"},
	{"name field", `{"given": "Gurpreet"}`, "PERSON"},
	{"last first", "Horvath, Çağla\t+44 20 7946", "PERSON"},
	{"places and firms", "Rio de Janeiro, Place de la République, Philip Morris, Park Avenue, Ernst & Young", ""},
	{"words", "We hope to mark the date; Will you come?", ""},
	// Role labels: a name must follow, not a unit, an estate, a department.
	{"role name", "Patient: Zebulon Quartermaine, born <DATE_OF_BIRTH>", "PERSON"},
	{"role name then sentence", "Patient: Tavi Rennick presented with a cough", "PERSON"},
	{"role name caps", "CARDHOLDER: TAVI RENNICK", "PERSON"},
	{"role json", `{"contact": "Tavi Rennick"}`, "PERSON"},
	{"role unit", "Tenant: Unit 4B, Building C", ""},
	{"role estate", "Beneficiary: Estate of the Insured", ""},
	{"role see attached", "Employee: see attached list", ""},
	{"role department", "Attn: Billing Department", ""},
	{"role title before placeholder", "Applicant: Mr. <PERSON>\nClient: Dr <PERSON>", ""},
	{"role then next label", "Cardholder: Cad: <CREDIT_CARD>", ""},
	{"memo header", "To: Tavi Rennick\nFrom: Accounts Payable", "PERSON"},
	{"memo departments", "To: All Staff\nFrom: Accounts Payable\nRe: Q3", ""},
	{"to mid-line", "Ship to: Chicago Warehouse", ""},
	// Salutations: a title before a removed name, or OCR's reading of one.
	{"dear title placeholder", "Dear Ms. <PERSON>,", ""},
	{"dear ocr title", "Dear Mw.\nThank you for your letter.", ""},
	// Cues in running text.
	{"cue wrapped name", "Contact Grace\nPatel for details.", "PERSON"},
	{"cue department", "please contact Customer Service today", ""},
	{"cue title", "call Human Resources Benefits Desk", ""},
	// Birth dates: on the birth word's line, or under a bare label.
	{"dob next field", "Date of Birth:\nVisit date: July 11, 2022", ""},
	{"dob under label", "Date of Birth:\n07/11/1980", "DATE_OF_BIRTH"},
	{"dob wrapped", "date of birth as October 16,\n1959 and", "DATE_OF_BIRTH"},
	{"dob json key", `{"date_of_birth": "1990-01-02"}`, "DATE_OF_BIRTH"},
	{"dob inside a word", "a stubborn bug since 12/01/2020", ""},
	// Numbers: a bad IBAN whose digits pass Luhn is no card; a keyword
	// lines away is not the number's label.
	{"bad iban no card", "IBAN DE94 3653 8528 9777 7569 40 was rejected", ""},
	{"account far up", "paid into account\nES : crore 25012025.", ""},
	{"account under label", "Account number:\n12345678", "US_BANK_ACCOUNT"},
	// JSON escapes are read as the characters they stand for.
	{"json de address", `{"address": "Lindenallee 42\n14740 München"}`, "STREET_ADDRESS"},
	{"json fr address", `{"address": "42 avenue des Champs-Élysées\n75010 Paris"}`, "STREET_ADDRESS"},
	{"json escaped backslash", `{"path": "C:\\n12345 Dir"}`, ""},
	// Identity documents.
	{"passport", "Passport No: A12345678", "US_PASSPORT"},
	{"passport digits", "passport number 912345678", "US_PASSPORT"},
	{"license", "Driver's License: D1234567", "US_DRIVER_LICENSE"},
	{"license far", "License terms apply.\nOrder 55512345 shipped", ""},
	{"passport photo count", "Passport photos: 2", ""},
	// Tables: a header gives its column's meaning.
	{"csv dob column", "Name,DOB\n<PERSON>,1990-01-02\n", "DATE_OF_BIRTH"},
	{"csv name column", "Name;Email\nGrace Kim;<EMAIL>\n", "PERSON"},
	{"tsv quoted name", "id\tfull_name\n1\t\"Tavi Rennick\"\n", "PERSON"},
	{"csv redacted", "Name,DOB\n<PERSON>,<DATE_OF_BIRTH>\n", ""},
	{"csv other columns", "Order,Date,Status\nA123,2024-01-02,Shipped\n", ""},
}

func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		rep := Check(c.text)
		if err := rep.Validate(); err != nil {
			t.Fatalf("%s: invalid report: %v", c.name, err)
		}
		if c.typ == "" {
			if rep.Verdict != result.Clean {
				t.Errorf("%s: want clean, got %v", c.name, rep.Reasons)
			}
			continue
		}
		found := false
		for _, f := range rep.Findings {
			found = found || f.Type == c.typ
		}
		if !found {
			t.Errorf("%s: want %s, got %v", c.name, c.typ, rep.Reasons)
		}
	}
}

// TestFindingsHaveNoValues: offsets and rule names only, and offsets
// are code points.
func TestFindingsHaveNoValues(t *testing.T) {
	text := "Ünïcödé — SSN 372-81-4410"
	rep := Check(text)
	if len(rep.Findings) != 1 {
		t.Fatalf("%+v", rep)
	}
	f := rep.Findings[0]
	if got := string([]rune(text)[f.Start:f.End]); got != "372-81-4410" {
		t.Fatalf("offsets point at %q", got)
	}
	for _, r := range rep.Reasons {
		if strings.Contains(r, "4410") {
			t.Fatal("a reason carries the value")
		}
	}
}

// TestLongText: a finding past the first piece and one across a piece
// boundary are both reported once.
func TestLongText(t *testing.T) {
	pad := strings.Repeat("x ", pieceBytes/2-10)
	text := pad + "SSN 372-81-4410 " + strings.Repeat("y ", pieceBytes/2) + "mail grace@example.com"
	rep := Check(text)
	if len(rep.Findings) != 2 {
		t.Fatalf("%d findings: %+v", len(rep.Findings), rep.Findings)
	}
}

// TestUTF16: the redactor writes UTF-16 input back as UTF-16; the
// verifier must read the text, not the bytes.
func TestUTF16(t *testing.T) {
	for _, be := range []bool{false, true} {
		b := []byte{0xFF, 0xFE}
		if be {
			b = []byte{0xFE, 0xFF}
		}
		for _, r := range "SSN: 372-81-4410, Grace Kim" {
			if be {
				b = append(b, byte(r>>8), byte(r))
			} else {
				b = append(b, byte(r), byte(r>>8))
			}
		}
		rep := Check(string(b))
		if len(rep.Findings) == 0 || rep.Findings[0].Type != "US_SSN" || rep.Findings[0].Start != 6 {
			t.Errorf("big endian %v: %+v", be, rep.Findings)
		}
		if got := FindCanaries(string(b), []string{"Grace Kim"}); len(got) != 1 {
			t.Errorf("big endian %v: canary not found", be)
		}
	}
}
