package verify

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Postal addresses written outside the US and UK, by the verifier's own
// patterns: Japan (Latin and Japanese), Canada and Australia by their
// postal codes after a province or state, the Netherlands by its
// postcode, and a street line with its number above or before a
// five-digit postal code and a town (Germany, France).
var (
	jpLatin   = regexp.MustCompile(`\b\d{1,2}-\d{1,3}(?:-\d{1,4})?[ \t]+\p{Lu}[\p{L}\p{M}]+(?:[ \t]\p{Lu}[\p{L}\p{M}]+)?,?[ \t\n]+\p{Lu}[\p{L}\p{M}]+-(?:ku|shi|cho|machi)\b|\b\p{Lu}\p{Ll}+-(?:to|fu|ken)[ \t]+\p{Lu}\p{Ll}+-(?:ku|shi)\b|\b\p{Lu}\p{Ll}+-(?:ku|shi),?[ \t]+\p{Lu}\p{Ll}+[ \t]+\d{3}-\d{4}\b`)
	jpNative  = regexp.MustCompile(`〒[ \t]?\d{3}-?\d{4}|\p{Han}[都道府県][\p{Han}\p{Hiragana}\p{Katakana}ー]{1,20}\d{1,4}(?:[-－丁目番地号]+\d{0,4})+`)
	caPost    = regexp.MustCompile(`\b(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT|\((?:Québec|Quebec|Ontario)\))\.?,?[ \t\n]+[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z][ \t]?\d[ABCEGHJ-NPRSTV-Z]\d\b`)
	auPost    = regexp.MustCompile(`\p{Lu}[\p{L}'’-]+,?[ \t\n]+(?:NSW|VIC|QLD|WA|SA|TAS|ACT|NT)[ \t]+\d{4}\b`)
	nlPost    = regexp.MustCompile(`\b\d{1,5}(?:[A-Za-z]|-[A-Z0-9]{1,4})?,?[ \t]*\n?[ \t]*\d{4}[ \t]?[A-Z]{2}[ \t\n]+\p{Lu}\p{Ll}+`)
	euPost    = regexp.MustCompile(`\p{Lu}[\p{L}\p{M}.'’-]*[ \t\n]+\d{1,4}[a-zA-Z]?(?:[ \t]*[-/][ \t]*\d{1,4})?[ \t]*[,\n][ \t]*\n?[ \t]*\d{5}[ \t\n]+\p{Lu}[\p{Ll}\p{M}]+`)
	frStreet  = regexp.MustCompile(`(?i)\b\d{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]+(?:rue|avenue|boulevard|place|chemin|allée|impasse|quai|cours)[ \t]`)
	moreLines = regexp.MustCompile(`\b\d{1,5}(?:/\d{1,5})?[ \t]+(?:\p{Lu}[\p{L}'’.-]*[ \t]+){1,3}(?:Parade|Quay|Mews|Esplanade|Promenade|Rise|Walk|Row|Crescent|Terrace|Close|Grove|Gardens|Road|Street|Avenue|Lane|Drive)\b`)
)

// worldAddresses applies those patterns.
func worldAddresses(sub *subject) []hit {
	var out []hit
	for _, re := range []*regexp.Regexp{jpLatin, jpNative, caPost, auPost, nlPost, euPost, frStreet, moreLines} {
		for _, l := range re.FindAllStringIndex(sub.s, -1) {
			out = append(out, hit{"STREET_ADDRESS", "postal", l[0], l[1]})
		}
	}
	return out
}

// Address parts in separate fields of a JSON document: an object with a
// street field, or under an address key, holds its address's parts in
// these fields (the verifier's own lists; a country is no part).
var (
	streetKeys  = keySet(`street streetname streetaddress addressline1 address1 line1 housenumber straat strasse straße rue calle`)
	addressKeys = keySet(`address homeaddress mailingaddress postaladdress billingaddress shippingaddress billing shipping residence adresse anschrift`)
	partKeys    = keySet(`street streetname streetaddress streetnumber addressline1 addressline2 address1 address2 line1 line2
housenumber housename building block unit flat apartment suite city town locality suburb district ward county state
province region prefecture postcode postalcode zip zipcode plz ort plaats woonplaats ville straat strasse straße`)
)

// keySet normalises keys as normKey does.
func keySet(s string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(s) {
		m[normKey(k)] = true
	}
	return m
}

// normKey drops case, separators and a qualifying first word ("home",
// "billing"): "addressLine1", "address_line_1" and "Home Street" become
// "addressline1", "addressline1" and "street".
func normKey(k string) string {
	k = strings.ToLower(k)
	for _, q := range []string{"home ", "home_", "work ", "business ", "billing_", "shipping_", "billing ", "shipping "} {
		if rest := strings.TrimPrefix(k, q); rest != k && rest != "address" {
			k = rest
		}
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' || r == '.' {
			return -1
		}
		return r
	}, k)
}

// jsonField matches `"key": "value"` or `"key": 123` anywhere.
var jsonField = regexp.MustCompile(`"([^"\\]{1,40})"[ \t]*:[ \t]*("(?:[^"\\]|\\.)*"|-?\d+)`)

// jsonAddressParts finds, in a JSON document, values of address-part
// fields of address objects that are still there (not a placeholder).
func jsonAddressParts(sub *subject) []hit {
	t := strings.TrimLeft(sub.orig, "\uFEFF \t\r\n")
	if t == "" || t[0] != '{' && t[0] != '[' {
		return nil
	}
	var doc any
	if json.Unmarshal([]byte(t), &doc) != nil {
		return nil
	}
	want := map[string]bool{} // "key\x00value" of parts of address objects
	collectParts(doc, "", want)
	if len(want) == 0 {
		return nil
	}
	var out []hit
	for _, m := range jsonField.FindAllStringSubmatchIndex(sub.s, -1) {
		var v any
		if json.Unmarshal([]byte(sub.orig[m[4]:m[5]]), &v) != nil {
			continue
		}
		if want[normKey(sub.orig[m[2]:m[3]])+"\x00"+jsonScalar(v)] && hasAlnum(sub.s[m[4]:m[5]]) {
			out = append(out, hit{"STREET_ADDRESS", "address-field", m[4], m[5]})
		}
	}
	return out
}

// collectParts walks a decoded document and records the part fields of
// every address object.
func collectParts(v any, parent string, want map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		isAddr := addressKeys[normKey(parent)]
		for k := range x {
			isAddr = isAddr || streetKeys[normKey(k)]
		}
		for k, val := range x {
			if s := jsonScalar(val); isAddr && partKeys[normKey(k)] && s != "" {
				want[normKey(k)+"\x00"+s] = true
			}
			collectParts(val, k, want)
		}
	case []any:
		for _, e := range x {
			collectParts(e, parent, want)
		}
	}
}

// jsonScalar renders a string or number value ("" for anything else).
func jsonScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return ""
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80 && r != 0xFFFD {
			return true
		}
	}
	return false
}
