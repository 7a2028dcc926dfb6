package analyzer

import (
	"strings"
	"testing"
)

// detectCase: in text, want (a substring) found as typ, or, with typ "",
// nothing of any type overlapping want.
type detectCase struct {
	name, text, want string
	typ              Type
}

func runDetect(t *testing.T, cases []detectCase) {
	t.Helper()
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			i := strings.Index(c.text, c.want)
			if i < 0 {
				t.Fatalf("bad case: %q not in text", c.want)
			}
			lo, hi := len([]rune(c.text[:i])), len([]rune(c.text[:i+len(c.want)]))
			fs := a.Analyze(c.text)
			for _, f := range fs {
				overlap := f.Start < hi && lo < f.End
				if c.typ == "" && overlap {
					t.Fatalf("near miss found as %s by %s", f.Type, f.Detector)
				}
				if c.typ != "" && Type(f.Type) == c.typ && f.Start <= lo && f.End >= hi {
					return
				}
			}
			if c.typ != "" {
				t.Fatalf("%s not found; got %+v", c.typ, fs)
			}
		})
	}
}

func TestDetectNumbers(t *testing.T) {
	runDetect(t, []detectCase{
		{"ssn dashed", "SSN 219-45-6789 on file", "219-45-6789", SSN},
		{"ssn no context", "ref 372-81-4410 noted", "372-81-4410", SSN},
		{"ssn bare with label", "Social Security Number: 372814410", "372814410", SSN},
		{"ssn wrapped", "SSN 372-81-\n4410 on file", "372-81-\n4410", SSN},
		{"ssn area 000", "SSN 000-12-3456", "000-12-3456", ""},
		{"ssn area 666", "SSN 666-12-3456", "666-12-3456", ""},
		{"ssn area 9xx", "SSN 912-34-5678", "912-34-5678", ""},
		{"ssn group 00", "SSN 123-00-4567", "123-00-4567", ""},
		{"ssn serial 0000", "SSN 345-67-0000", "345-67-0000", ""},
		{"ssn woolworth", "SSN 078-05-1120", "078-05-1120", ""},
		{"ssn bare without label", "order 372814410 shipped", "372814410", ""},
		{"card spaced", "Card 4111 1111 1111 1111 exp", "4111 1111 1111 1111", CreditCard},
		{"card dashed", "paid 5500-0000-0000-0004.", "5500-0000-0000-0004", CreditCard},
		{"card bare", "cc=4012888888881881", "4012888888881881", CreditCard},
		{"card amex", "Amex 3782 822463 10005", "3782 822463 10005", CreditCard},
		{"card wrapped", "card 4111 1111\n1111 1111 ok", "4111 1111\n1111 1111", CreditCard},
		{"card after qty", "Qty 2 4111 1111 1111 1111", "4111 1111 1111 1111", CreditCard},
		{"card luhn invalid", "Card 4111 1111 1111 1112", "4111 1111 1111 1112", ""},
		{"transaction id", "Transaction ID: 7000123412341238", "7000123412341238", ""},
		{"luhn valid no iin", "ID 1234567812345670", "1234567812345670", ""},
		{"isbn", "ISBN 978-0-306-40615-7", "978-0-306-40615-7", ""},
		{"routing", "Routing number: 021000021", "021000021", BankRouting},
		{"routing bad checksum", "Routing number: 021000022", "021000022", ""},
		{"routing without label", "code 021000021 here", "021000021", ""},
		{"account", "Account number: 123456789012", "123456789012", BankAccount},
		{"account without label", "Reference 123456789012", "123456789012", ""},
		{"passport", "Passport No: 912345678", "912345678", Passport},
		{"driver license", "Driver's License: D1234567", "D1234567", DriverLicense},
		{"license without label", "Model D1234567", "D1234567", ""},
	})
}

func TestDetectIBAN(t *testing.T) {
	runDetect(t, []detectCase{
		{"gb grouped", "IBAN GB82 WEST 1234 5698 7654 32.", "GB82 WEST 1234 5698 7654 32", IBAN},
		{"de bare", "to DE89370400440532013000 today", "DE89370400440532013000", IBAN},
		{"be national check", "BE68 5390 0754 7034", "BE68 5390 0754 7034", IBAN},
		{"fr", "FR14 2004 1010 0505 0001 3M02 606", "FR14 2004 1010 0505 0001 3M02 606", IBAN},
		{"wrapped", "IBAN GB82 WEST 1234\n5698 7654 32 ok", "GB82 WEST 1234\n5698 7654 32", IBAN},
		{"after tracking", "Tracking 1Z999AA10123456784\nRefund to IBAN GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32", IBAN},
		{"bad check digits", "IBAN GB83 WEST 1234 5698 7654 32", "GB83 WEST 1234 5698 7654 32", ""},
		{"wrong length", "IBAN DE8937040044053201300 ok", "DE8937040044053201300", ""},
		{"unknown country", "XX82 WEST 1234 5698 7654 32", "XX82 WEST 1234 5698 7654 32", ""},
	})
}

func TestDetectContactAndNetwork(t *testing.T) {
	runDetect(t, []detectCase{
		{"email", "mail grace.kim@example.com now", "grace.kim@example.com", Email},
		{"email unicode", "écrire à chloé.dubois@exemple.fr", "chloé.dubois@exemple.fr", Email},
		{"email new tld", "x@studio.photography", "x@studio.photography", Email},
		{"email wrapped after @", "grace@\nexample.com", "grace@\nexample.com", Email},
		{"not email file", "logo icon@2x.png", "icon@2x.png", ""},
		{"not email local", "admin@localhost", "admin@localhost", ""},
		{"not email handle", "follow @grace_kim", "@grace_kim", ""},
		{"phone parens", "call (202) 555-0143 today", "(202) 555-0143", Phone},
		{"phone ext", "(202) 555-0143 ext. 1234", "(202) 555-0143 ext. 1234", Phone},
		{"phone intl uk", "Tel +44 20 7946 0958", "+44 20 7946 0958", Phone},
		{"phone intl de", "+49 30 901820", "+49 30 901820", Phone},
		{"phone dots", "415.555.0199", "415.555.0199", Phone},
		{"phone bare with label", "Mobile: 2025550143", "2025550143", Phone},
		{"phone national uk with label", "Tel: 020 7946 0958", "020 7946 0958", Phone},
		{"not phone bare", "ref 2025550143", "2025550143", ""},
		{"not phone date", "on 2023-01-15", "2023-01-15", ""},
		{"not phone epoch", "epoch 1700000000", "1700000000", ""},
		{"not phone order", "Order #4155550199", "4155550199", ""},
		{"ipv4", "from 192.168.10.20 at", "192.168.10.20", IPAddress},
		{"ipv6", "client 2001:db8::8a2e:370:7334 ok", "2001:db8::8a2e:370:7334", IPAddress},
		{"version quad", "version 1.2.3.4", "1.2.3.4", ""},
		{"v prefixed", "v10.0.0.1", "10.0.0.1", ""},
		{"build quad", "build 10.2.0.1", "10.2.0.1", ""},
		{"bad octet", "10.0.19045.1", "10.0.19045.1", ""},
		{"time", "12:30:45", "12:30:45", ""},
		{"mac", "00:1A:2B:3C:4D:5E", "00:1A:2B:3C:4D:5E", ""},
	})
}

func TestDetectDates(t *testing.T) {
	runDetect(t, []detectCase{
		{"dob label", "DOB: 03/14/1982", "03/14/1982", DateOfBirth},
		{"date of birth iso", "Date of birth: 1982-03-14", "1982-03-14", DateOfBirth},
		{"born spelled", "She was born on 2 March 1975 in Lyon", "2 March 1975", DateOfBirth},
		{"geboren", "geboren am 14.03.1982", "14.03.1982", DateOfBirth},
		{"invoice date", "Invoice date: 03/14/2023", "03/14/2023", ""},
		{"signed 1980", "Signed on January 5, 1980", "January 5, 1980", ""},
		{"future birth", "DOB: 03/14/2999", "03/14/2999", ""},
		{"impossible date", "DOB: 02/30/1982", "02/30/1982", ""},
		{"timestamp", "created 2023-01-15T12:30:45Z", "2023-01-15", ""},
	})
}
