package verify

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/verify/report"
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
}

func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		rep := Check(c.text)
		if err := rep.Validate(); err != nil {
			t.Fatalf("%s: invalid report: %v", c.name, err)
		}
		if c.typ == "" {
			if rep.Verdict != report.Clean {
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
