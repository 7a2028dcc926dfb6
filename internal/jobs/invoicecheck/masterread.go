package invoicecheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A vendor master comes from somebody's ERP or spreadsheet export, not
// from a guest: it is read for what it means. The same data arrives in a
// few common shapes (an address as one string or as lines, aliases as a
// list or one name, a vendor id or payment terms as a number, bank details
// inside "bank" or beside the name), descriptive fields (tenant_name,
// phone, website, notes, contact) are accepted and not judged, and a field
// this package does not know is reported as a warning and ignored
// (MasterOptions.Strict makes it an error). What is checked strictly is
// the data the decision rests on: ids, names, tax ids, currencies and bank
// numbers (see Vendor.validate).

// MasterOptions configure ParseMasterWith.
type MasterOptions struct {
	// Strict refuses a master with fields this package does not know.
	Strict bool
}

// descriptive are fields accepted and ignored, by level.
var (
	descriptiveTop    = []string{"tenant_name", "description", "version"}
	descriptiveVendor = []string{"phone", "website", "notes", "contact", "contact_name", "legal_name_note"}
	bankKeys          = []string{"iban", "bic", "bank_name", "account_number", "routing_number", "sort_code", "account_name"}
)

// masterReader turns a decoded JSON tree into a Master, collecting
// errors (by path) and unknown fields.
type masterReader struct {
	errs    []string
	unknown map[string][]string // field path pattern ("vendors[].erp_ref") -> where
}

func (mr *masterReader) bad(path, format string, args ...any) {
	if len(mr.errs) < 20 {
		mr.errs = append(mr.errs, path+": "+fmt.Sprintf(format, args...))
	}
}

func (mr *masterReader) unknownField(pattern, path string) {
	mr.unknown[pattern] = append(mr.unknown[pattern], path)
}

// warnings lists the unknown fields, one line per field name.
func (mr *masterReader) warnings() []string {
	var out []string
	for pat, where := range mr.unknown {
		if len(where) == 1 {
			out = append(out, fmt.Sprintf("%s: unknown field, ignored", where[0]))
			continue
		}
		out = append(out, fmt.Sprintf("%s: unknown field, ignored (%d times, first at %s)", pat, len(where), where[0]))
	}
	sort.Strings(out)
	return out
}

func (mr *masterReader) master(tree any) *Master {
	top, ok := tree.(map[string]any)
	if !ok {
		mr.bad("(top)", "want a JSON object")
		return &Master{}
	}
	m := &Master{}
	for _, k := range sortedKeys(top) {
		v := top[k]
		switch {
		case k == "tenant_id":
			m.TenantID = mr.str(k, v, true)
		case k == "vendors":
			list, ok := v.([]any)
			if !ok {
				mr.bad(k, "want a list of vendors")
				continue
			}
			for i, item := range list {
				m.Vendors = append(m.Vendors, mr.vendor(fmt.Sprintf("vendors[%d]", i), item))
			}
		case slices.Contains(descriptiveTop, k):
			mr.str(k, v, true)
		default:
			mr.unknownField(k, k)
		}
	}
	return m
}

func (mr *masterReader) vendor(at string, item any) Vendor {
	obj, ok := item.(map[string]any)
	if !ok {
		mr.bad(at, "want an object")
		return Vendor{}
	}
	var v Vendor
	nested := map[string]bool{}
	for _, k := range sortedKeys(obj) {
		val, path := obj[k], at+"."+k
		switch k {
		case "vendor_id":
			v.VendorID = mr.str(path, val, true)
		case "name":
			v.Name = mr.str(path, val, false)
		case "aliases":
			v.Aliases = mr.strs(path, val)
		case "tax_id":
			v.TaxID = mr.str(path, val, false)
		case "country":
			v.Country = strings.ToUpper(strings.TrimSpace(mr.str(path, val, false)))
		case "currency":
			v.Currency = strings.ToUpper(strings.TrimSpace(mr.str(path, val, false)))
		case "address":
			v.Address = mr.address(path, val)
		case "email":
			v.Email = mr.str(path, val, false)
		case "payment_terms_days":
			v.PaymentTermsDays = mr.days(path, val)
		case "bank":
			mr.bank(path, val, &v.Bank, nested)
		default:
			switch {
			case slices.Contains(bankKeys, k):
				mr.bankField(path, k, val, &v.Bank, nested, false)
			case slices.Contains(descriptiveVendor, k):
			default:
				mr.unknownField("vendors[]."+k, path)
			}
		}
	}
	return v
}

// bank reads the bank object; fields given both inside it and beside the
// vendor's name must agree.
func (mr *masterReader) bank(at string, val any, b *Bank, seen map[string]bool) {
	if val == nil {
		return
	}
	obj, ok := val.(map[string]any)
	if !ok {
		mr.bad(at, "want an object")
		return
	}
	for _, k := range sortedKeys(obj) {
		if slices.Contains(bankKeys, k) {
			mr.bankField(at+"."+k, k, obj[k], b, seen, true)
			continue
		}
		mr.unknownField("vendors[].bank."+k, at+"."+k)
	}
}

func (mr *masterReader) bankField(path, k string, val any, b *Bank, seen map[string]bool, inBank bool) {
	if _, isNum := val.(json.Number); isNum {
		mr.bad(path, "write bank numbers as strings: a JSON number loses leading zeros")
		return
	}
	s := mr.str(path, val, false)
	ptr := map[string]*string{"iban": &b.IBAN, "bic": &b.BIC, "bank_name": &b.BankName, "account_number": &b.AccountNumber,
		"routing_number": &b.RoutingNumber, "sort_code": &b.SortCode, "account_name": &b.AccountName}[k]
	if seen[k] && s != "" && *ptr != "" && s != *ptr {
		mr.bad(path, "differs from the same field given %s", map[bool]string{true: "beside the vendor", false: "in bank"}[inBank])
		return
	}
	if s != "" {
		*ptr, seen[k] = s, true
	}
}

// str reads a string; number says a JSON number is taken as its digits
// (ids exported as numbers). null reads as "".
func (mr *masterReader) str(path string, v any, number bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		if number {
			return x.String()
		}
	}
	mr.bad(path, "want a string, got %s", kind(v))
	return ""
}

// strs reads a list of strings, or one string as a list of one.
func (mr *masterReader) strs(path string, v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if strings.TrimSpace(x) == "" {
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for i, e := range x {
			out = append(out, mr.str(fmt.Sprintf("%s[%d]", path, i), e, false))
		}
		return out
	}
	mr.bad(path, "want a list of strings, got %s", kind(v))
	return nil
}

// address reads one string, a list of lines, or an object of parts.
func (mr *masterReader) address(path string, v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range addressOrder(x) {
			if s := strings.TrimSpace(mr.str(path+"."+k, x[k], true)); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	case []any:
		return strings.Join(mr.strs(path, x), ", ")
	}
	return mr.str(path, v, false)
}

// addressOrder lists an address object's keys the way an address is
// written: street lines, city, postcode, region, country, then the rest.
func addressOrder(m map[string]any) []string {
	order := []string{"street", "street1", "line1", "address1", "street2", "line2", "address2", "line3",
		"city", "town", "postcode", "postal_code", "zip", "state", "region", "country"}
	var out []string
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(order, k) {
			out = append(out, k)
		}
	}
	return out
}

// days reads whole days as a number or a numeric string ("30").
func (mr *masterReader) days(path string, v any) int {
	var s string
	switch x := v.(type) {
	case nil:
		return 0
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		mr.bad(path, "want a whole number of days, got %s", kind(v))
		return 0
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || fmt.Sprint(n) != s {
		mr.bad(path, "want a whole number of days, got %q", truncate(s, 20))
		return 0
	}
	return n
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "true/false"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
