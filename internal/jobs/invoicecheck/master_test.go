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
		{"unknown key", `{"tenant_id":"t","vendors":[{"vendor_id":"a","name":"A","iban":"x"}]}`, `unknown field "iban"`},
		{"duplicate key", `{"tenant_id":"t","tenant_id":"u","vendors":[]}`, "duplicate key"},
		{"syntax error has position", "{\"tenant_id\":\"t\",\n\"vendors\":[,]}", "line 2 col"},
		{"wrong type has position", "{\"tenant_id\":\"t\",\n\"vendors\":[{\"vendor_id\":\"a\",\"name\":\"A\",\"payment_terms_days\":\"30\"}]}", "line 2 col"},
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
