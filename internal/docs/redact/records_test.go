package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRecordsJSON: an address split into fields, and a name split into
// given and family names, go whole by their keys, whatever the values
// look like; a city outside an address (an office) and a country stay.
func TestRecordsJSON(t *testing.T) {
	r := newTestRedactor(t)
	in := `{"name": {"given": "Makena", "family": "al-Hakim"},
 "address": {"street": "Damrak", "houseNumber": 1, "postalCode": "1012 LG", "city": "Amsterdam", "countryCode": "NL"},
 "shipping_address": {"address_line_1": "12 Yonge St", "locality": "Toronto", "region": "ON", "postal_code": "M4W 3L4"},
 "office": {"city": "Rotterdam", "country": "NL"}}`
	out, err := r.JSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]map[string]any
	if err := json.Unmarshal(out.Data, &v); err != nil {
		t.Fatalf("%v: %s", err, out.Data)
	}
	for obj, keys := range map[string][]string{"name": {"given", "family"}, "address": {"street", "houseNumber", "postalCode", "city"},
		"shipping_address": {"address_line_1", "locality", "region", "postal_code"}} {
		for _, k := range keys {
			if s, _ := v[obj][k].(string); !strings.HasPrefix(s, "<") {
				t.Errorf("%s.%s = %v, want a placeholder", obj, k, v[obj][k])
			}
		}
	}
	if v["address"]["countryCode"] != "NL" || v["office"]["city"] != "Rotterdam" {
		t.Errorf("country or office redacted: %s", out.Data)
	}
}

// TestRecordsCSV: columns of an address export are address parts once a
// street column says the rows are addresses.
func TestRecordsCSV(t *testing.T) {
	r := newTestRedactor(t)
	in := "First Name,Last Name,Home Street,Home City,Home Postal Code,Home Country\r\n" +
		"Dilnoza,al-Hakim,86 Jetty Road,Glenelg,5045,AU\r\n"
	out, err := r.CSV([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "First Name,Last Name,Home Street,Home City,Home Postal Code,Home Country\r\n" +
		"<PERSON>,<PERSON>,<STREET_ADDRESS>,<STREET_ADDRESS>,<STREET_ADDRESS>,AU\r\n"
	if string(out.Data) != want {
		t.Fatalf("got  %q\nwant %q", out.Data, want)
	}
}
