package invoicecheck

import (
	"strings"
	"testing"
)

func TestParseMaster(t *testing.T) {
	m, err := ParseMaster(strings.NewReader(testMaster))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Vendors[1].Bank.IBAN; got != "DE89370400440532013000" {
		t.Fatalf("IBAN not normalised: %q", got)
	}
	tests := []struct{ name, in, want string }{
		{"bank detail beside the name is still checked", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","iban":"x"}]}`, "vendors[0].bank.iban: not shaped like an IBAN"},
		{"bank detail given twice, differently", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","routing_number":"021000021","bank":{"routing_number":"011000015"}}]}`, "vendors[0].routing_number: differs"},
		{"bank number as a JSON number", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","bank":{"routing_number":21000021}}]}`, "leading zeros"},
		{"duplicate key", `{"tenant_id":"t","tenant_id":"u","vendors":[]}`, "duplicate key"},
		{"syntax error has position", "{\"tenant_id\":\"t\",\n\"vendors\":[,]}", "line 2 col"},
		{"wrong type names the field", "{\"tenant_id\":\"t\",\n\"vendors\":[{\"vendor_id\":\"a\",\"name\":\"A\",\"payment_terms_days\":true}]}", "vendors[0].payment_terms_days: want a whole number of days"},
		{"terms that are not whole days", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","payment_terms_days":"30 days"}]}`, "vendors[0].payment_terms_days"},
		{"name of the wrong type", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":["A"]}]}`, "vendors[0].name: want a string, got a list"},
		{"bad tenant", `{"tenant_id":"../x","vendors":[]}`, "tenant_id"},
		{"duplicate vendor id", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A"},{"vendor_id":"a","name":"B"}]}`, `vendors[1].vendor_id: "a" already used`},
		{"duplicate tax id", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","tax_id":"DE 123"},{"vendor_id":"b","name":"B","tax_id":"de123"}]}`, "vendors[1].tax_id: same as vendors[0]"},
		{"bad IBAN", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","bank":{"iban":"DE89370400440532013001"}}]}`, "vendors[0].bank.iban: fails the mod-97 check"},
		{"IBAN wrong length", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","bank":{"iban":"DE8937040044053201300"}}]}`, "wrong length"},
		{"bad routing", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","bank":{"routing_number":"021000022"}}]}`, "vendors[0].bank.routing_number: fails the ABA checksum"},
		{"missing name", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":" "}]}`, "vendors[0].name"},
		{"bad currency", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","currency":"EURO"}]}`, "vendors[0].currency"},
		{"trailing data", `{"tenant_id":"t","vendors":[]} {}`, "more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMaster(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestParseMasterShapes: an ERP's export of the same data is read (a
// tenant_name, an address as lines or parts, aliases as one string,
// numeric ids and terms, bank details beside the name), and fields this
// package does not know are warnings, or errors with Strict.
func TestParseMasterShapes(t *testing.T) {
	const erp = `{"tenant_id": "t", "tenant_name": "T Holdings LLP", "exported_at": "2026-03-01",
	  "vendors": [
	    {"vendor_id": 10042, "erp_ref": "K1", "name": "Acme Corporation", "aliases": "ACME Corp",
	     "address": ["1 Main St", "Springfield, IL"], "phone": "+1 555 0100", "payment_terms_days": "30",
	     "country": "us", "currency": "usd", "iban": "", "routing_number": "021000021", "account_number": "123456789",
	     "bank": {"bank_name": "First Bank", "swift_note": "n/a"}},
	    {"vendor_id": "v2", "erp_ref": "K2", "name": "Globex GmbH",
	     "address": {"country": "DE", "street": "Hauptstr. 5", "city": "Berlin", "postcode": "10115"}}]}`
	m, err := ParseMaster(strings.NewReader(erp))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Vendors[0]
	if v.VendorID != "10042" || v.Aliases[0] != "ACME Corp" || v.Address != "1 Main St, Springfield, IL" || v.PaymentTermsDays != 30 ||
		v.Country != "US" || v.Currency != "USD" || v.Bank.RoutingNumber != "021000021" || v.Bank.BankName != "First Bank" {
		t.Fatalf("vendor 0 read as %+v", v)
	}
	if got := m.Vendors[1].Address; got != "Hauptstr. 5, Berlin, 10115, DE" {
		t.Errorf("address object read as %q", got)
	}
	want := []string{
		"exported_at: unknown field, ignored",
		"vendors[0].bank.swift_note: unknown field, ignored",
		"vendors[].erp_ref: unknown field, ignored (2 times, first at vendors[0].erp_ref)",
	}
	if strings.Join(m.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(m.Warnings, "\n"), strings.Join(want, "\n"))
	}
	_, err = ParseMasterWith(strings.NewReader(erp), MasterOptions{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "(strict)") || !strings.Contains(err.Error(), "exported_at: unknown field") {
		t.Fatalf("strict: err = %v", err)
	}
	if m, err := ParseMasterWith(strings.NewReader(testMaster), MasterOptions{Strict: true}); err != nil || len(m.Warnings) != 0 {
		t.Fatalf("a master of documented fields only: %v, warnings %v", err, m.Warnings)
	}
}

func TestSwissUIDSuffix(t *testing.T) {
	if !sameTaxID("CHE-114.927.538 MWST", "CH", "CHE-114.927.538") || !sameTaxID("CHE114927538TVA", "CH", "che 114 927 538") {
		t.Error("a Swiss UID with and without its VAT suffix are one number")
	}
	if sameTaxID("CHE-114.927.538 MWST", "CH", "CHE-114.927.539") {
		t.Error("another Swiss UID matched")
	}
}

func TestNormName(t *testing.T) {
	ref, err := loadRefData()
	if err != nil {
		t.Fatal(err)
	}
	same := [][2]string{
		{"Acme Corporation", "ACME Corp."},
		{"Globex GmbH", "globex"},
		{"Société Générale S.A.", "Societe Generale"},
		{"Smith & Sons Ltd", "Smith and Sons Limited"},
		{"The Widget Company, Inc.", "Widget"},
		{"Initech B.V.", "Initech BV"},
		{"Blue Sky Logistics LLC", "Blue SkyLogistics LLC"}, // OCR lost a space
		{"Globex GmbH", "GlobexGmbH"},
	}
	diff := [][2]string{
		{"Acme Widgets", "Acme"},
		{"Globex Holdings GmbH", "Globex GmbH"},
		{"Inc", "Ltd"}, // a name that is only a legal form stays itself
		{"Blue Sky", "Blue Skye"},
	}
	for _, p := range same {
		if a, b := ref.normName(p[0]), ref.normName(p[1]); a != b {
			t.Errorf("%q -> %q and %q -> %q should match", p[0], a, p[1], b)
		}
	}
	for _, p := range diff {
		if ref.normName(p[0]) == ref.normName(p[1]) {
			t.Errorf("%q and %q should not match", p[0], p[1])
		}
	}
}

func TestBankChecks(t *testing.T) {
	ref, err := loadRefData()
	if err != nil {
		t.Fatal(err)
	}
	ibans := []struct {
		in, want string
	}{
		{"GB29NWBK60161331926819", ""},
		{"DE89370400440532013000", ""},
		{"NL91ABNA0417164300", ""},
		{"GB29NWBK60161331926818", "mod-97"},
		{"GB29NWBK6016133192681", "wrong length"},
		{"US29NWBK60161331926819", "does not use IBANs"},
		{"de89370400440532013000", "not shaped"},
	}
	for _, tt := range ibans {
		got := ref.ibanProblem(tt.in)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("ibanProblem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for s, want := range map[string]bool{"021000021": true, "011000015": true, "121000358": true, "021000022": false, "000000000": false, "02100002": false} {
		if abaValid(s) != want {
			t.Errorf("abaValid(%q) != %v", s, want)
		}
	}
	if !sameBIC("COBADEFF", "COBADEFFXXX") || sameBIC("COBADEFF", "COBADEFF100") {
		t.Error("sameBIC: XXX is the primary office, other branches differ")
	}
}
