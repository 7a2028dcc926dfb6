package analyzer

import (
	"strings"
	"testing"
)

// Names no list knows, after the labels and cues that introduce a
// person; and the same labels before what is not a person.
func TestDetectRoleLabels(t *testing.T) {
	runDetect(t, []detectCase{
		{"patient", "Patient: Zebulon Quartermaine, born 04/07/1981.", "Zebulon Quartermaine", Person},
		{"client", "Client: Tavi Rennick", "Tavi Rennick", Person},
		{"tenant hyphen", "Tenant: Ilse Varga-Brandtova", "Ilse Varga-Brandtova", Person},
		{"borrower caps", "BORROWER: QUILLON MARSDEVIK", "QUILLON MARSDEVIK", Person},
		{"account holder last first", "Account holder: Rennickov, Tavi\nIBAN: none", "Rennickov, Tavi", Person},
		{"cardholder initial", "Cardholder: J. Quartermaine", "J. Quartermaine", Person},
		{"witness", "Witness: Zothsel Pasriarkstad", "Zothsel Pasriarkstad", Person},
		{"signed", "Signed: Zothsel Pasriarkstad (03/02/2024)", "Zothsel Pasriarkstad", Person},
		{"attn", "Attn: Brelisai Namqueimsen", "Brelisai Namqueimsen", Person},
		{"memo to", "To: Teilquiath Feinquumaine\nFrom: Accounts Payable", "Teilquiath Feinquumaine", Person},
		{"memo from", "From: Oriel Vantanenko\nRe: renewal", "Oriel Vantanenko", Person},
		{"two on a line", "Signed: Zasmur Griandzumsen Witness: Isairkor Aliamshathley", "Isairkor Aliamshathley", Person},
		{"wrapped in a cell", "Employee: Zungre\nOrairkalethwick\n739-72-2838", "Zungre\nOrairkalethwick", Person},
		{"all staff", "To: All Staff", "All Staff", ""},
		{"accounts payable", "From: Accounts Payable", "Accounts Payable", ""},
		{"company", "Client: Northwind Holdings LLC", "Northwind Holdings LLC", ""},
		{"customer service", "Contact: Customer Service", "Customer Service", ""},
		{"not applicable", "Witness: N/A", "N/A", ""},
		{"department", "Attn: Billing Department", "Billing Department", ""},
		{"unit", "Tenant: Unit 4B, Building C", "Unit 4B, Building C", ""},
		{"estate", "Beneficiary: Estate of the Insured", "Estate of the Insured", ""},
		{"see attached", "Employee: see attached list", "see attached list", ""},
		{"plural role", "To: Regional Managers", "Regional Managers", ""},
	})
}

func TestDetectCuesAndSignatures(t *testing.T) {
	runDetect(t, []detectCase{
		{"case officer", "your case officer Krurpaith Polthombury can be reached", "Krurpaith Polthombury", Person},
		{"case officer wrapped", "your case officer Krurpaith\nPolthombury can be reached", "Krurpaith\nPolthombury", Person},
		{"cue ends line", "As discussed, your case officer\nRalam Iseislondley can help.", "Ralam Iseislondley", Person},
		{"please contact", "Please contact Grosbo Oreivasen or Priya Patel.", "Grosbo Oreivasen", Person},
		{"transfer from", "01/18/2024 Transfer from Lemelous Eleskrulsen REF 7792080187259769", "Lemelous Eleskrulsen", Person},
		{"prepared by", "Report prepared by Ilse Vargova on Monday.", "Ilse Vargova", Person},
		{"role noun", "Employee Grarkgou Drailvamquist (employee ID E-156808)", "Grarkgou Drailvamquist", Person},
		{"signature", "Sincerely,\nKrairsias Miamdrourkwick\nClaims Manager", "Krairsias Miamdrourkwick", Person},
		{"signature after blank line", "Kind regards,\n\nTavi Rennick", "Tavi Rennick", Person},
		{"plan title", "Join the Employee Stock Purchase Plan today.", "Stock Purchase Plan", ""},
		{"contact department", "please contact Customer Service today", "Customer Service", ""},
		{"transfer between accounts", "Transfer from Savings to Checking", "Savings", ""},
		{"signature team", "Sincerely,\nThe Billing Team", "The Billing Team", ""},
		{"signature company", "Thanks,\nAcme Holdings", "Acme Holdings", ""},
	})
}

func TestDetectWrappedAndSpaced(t *testing.T) {
	runDetect(t, []detectCase{
		{"dob month wrapped", "date of birth as October 16,\n1959 and", "October 16,\n1959", DateOfBirth},
		{"dob day wrapped", "born on 7 March\n1981 in Leeds", "7 March\n1981", DateOfBirth},
		{"label wraps", "your Social\nSecurity number is 372814410", "372814410", SSN},
		{"email space before at", "write to jo.kim @example.com", "jo.kim @example.com", Email},
		{"email space after at", "write to jo.kim@ example.com today", "jo.kim@ example.com", Email},
		{"date after another field", "Patient: Grace Kim, born 1990.\nCardholder: Tavi Rennick (02/22/2024)", "02/22/2024", ""},
		{"phone extension is no street", "call (617) 487-0218 ext. 261 today", "(617) 487-0218 ext. 261", Phone},
		{"broadway", "meet at 12 Broadway tomorrow", "12 Broadway", StreetAddress},
	})
}

// ocrDetect is runDetect through the OCR page analysis.
func ocrDetect(t *testing.T, cases []detectCase) {
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
			for _, f := range a.AnalyzeOCR(c.text) {
				overlap := f.Start < hi && lo < f.End
				if c.typ == "" && overlap {
					t.Fatalf("near miss found as %s by %s", f.Type, f.Detector)
				}
				if c.typ != "" && Type(f.Type) == c.typ && f.Start <= lo && f.End >= hi {
					return
				}
			}
			if c.typ != "" {
				t.Fatalf("%s not found", c.typ)
			}
		})
	}
}

// OCR misreads: a look-alike for a digit, a digit lost or added, the "@"
// read as a symbol. Checks that would confirm the value fail; the
// reading with look-alikes as digits, the label, or the address's shape
// still say what it is. The same misreads on a text layer stay as they
// are (TestOCRRulesNeedOCR).
var ocrCases = []detectCase{
	{"ssn letter o", "SSN: 5O4-22-2846", "5O4-22-2846", SSN},
	{"routing two for one", "routing number Q@52229800 and account", "Q@52229800", BankRouting},
	{"iban head", "wired to IBAN CH3@ 3037 6539 7550 9499 2 or sent", "CH3@ 3037 6539 7550 9499 2", IBAN},
	{"iban digit lost", "IBAN: AT52 701 2337 0914 8013", "AT52 701 2337 0914 8013", IBAN},
	{"phone short group", "reached on +49 3@ 72927918 or", "+49 3@ 72927918", Phone},
	{"dob year", "date of birth as January 7, 199@ and", "January 7, 199@", DateOfBirth},
	{"ssn digit added", "Social Security number as\n832-200-4864.", "832-200-4864", SSN},
	{"ssn wrapped short", "SSN: 798-05-\n172", "798-05-\n172", SSN},
	{"email guillemet", "hiroshi_lopez98 « clinic.health", "hiroshi_lopez98 « clinic.health", Email},
	{"email four", "grondgrund_chutheiwick04 4 gmail.com", "grondgrund_chutheiwick04 4 gmail.com", Email},
	{"card five as dollar", "Card: $579-4811-8387-1815", "579-4811-8387-1815", CreditCard},
	{"card last four", "The card ending in 2118 will not be charged", "2118", ""},
	{"page number", "Page lof1l Branch 816", "lof1l", ""},
	{"company and domain", "Acme Ltd & example.com", "Ltd & example.com", ""},
	{"reference", "REF 7797891223421822 $726.68", "7797891223421822", ""},
	{"claim", "Claim no. 339155", "339155", ""},
	{"call name", "Please call Sarah Miller at once", "Sarah Miller", Person},
}

func TestOCRRules(t *testing.T) { ocrDetect(t, ocrCases) }

// TestOCRRulesNeedOCR: on a text layer the characters are what the file
// says, so a value that fails its checks is no such value.
func TestOCRRulesNeedOCR(t *testing.T) {
	var cases []detectCase
	for _, c := range ocrCases {
		switch c.name {
		case "ssn letter o", "routing two for one", "iban digit lost", "phone short group", "dob year":
			cases = append(cases, detectCase{c.name, c.text, c.want, ""})
		}
	}
	runDetect(t, cases)
}

// Labels that vouch for misread dates and addresses on OCR pages.
func TestOCRLabelledShapes(t *testing.T) {
	ocrDetect(t, []detectCase{
		{"dob impossible day", "date of birth as 99.12.1970 and", "99.12.1970", DateOfBirth},
		{"email at lost", "Email: tholath+billing outlook.com", "tholath+billing outlook.com", Email},
		{"email at doubled", "Email: sofia_smith@@ @clinic.health", "sofia_smith@@ @clinic.health", Email},
		{"phone digit lost", "can be reached on 206-951-939 or by e-mail", "206-951-939", Phone},
		{"visit date stays", "Visit date: 23.04.2022 Claim no. 021443", "23.04.2022", ""},
		{"email label, no address", "Email: none on file", "none on file", ""},
	})
}
