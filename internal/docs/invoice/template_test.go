package invoice

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func TestShippedTemplatesLoad(t *testing.T) {
	ts, err := ShippedTemplates()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tp := range ts {
		names[tp.Name] = true
	}
	if !names["northwind"] || !names["globex"] {
		t.Fatalf("templates %v", names)
	}
}

func TestParseTemplateRejects(t *testing.T) {
	const head = "name: acme\nissuer: Acme Corp\nkeywords: [acme corp]\n"
	tests := []struct{ name, in, want string }{
		{"unknown key", head + "fields:\n  total: 'Total (\\S+)'\nregex: x\n", "t.yml:6: field regex not found"},
		{"misspelt field", head + "fields:\n  totl: 'Total (\\S+)'\n", `t.yml:5: unknown field "totl"`},
		{"line items are not a template field", head + "fields:\n  line_items: 'x(\\S+)'\n", `t.yml:5: unknown field "line_items"`},
		{"two groups", head + "fields:\n  total: '(Total) (\\S+)'\n", "t.yml:5: field total: regex has 2 capture groups"},
		{"no group", head + "fields:\n  total: 'Total \\S+'\n", "t.yml:5: field total: regex has 0 capture groups"},
		{"bad regex", head + "fields:\n  total: 'Total (\\S+'\n", "t.yml:5: field total: error parsing regexp"},
		{"bad date order", head + "options:\n  date_order: ymd\nfields:\n  total: 'T (\\S+)'\n", `t.yml:5: date_order "ymd"`},
		{"bad decimal", head + "options:\n  decimal_separator: \"'\"\nfields:\n  total: 'T (\\S+)'\n", "t.yml:5: decimal_separator"},
		{"bad currency", head + "options:\n  currency: euro\nfields:\n  total: 'T (\\S+)'\n", `t.yml:5: currency "euro"`},
		{"no keywords", "name: acme\nissuer: Acme\nkeywords: []\nfields:\n  total: 'T (\\S+)'\n", "t.yml:3: at least one keyword"},
		{"short keyword", "name: acme\nissuer: Acme\nkeywords: [ab]\nfields:\n  total: 'T (\\S+)'\n", `t.yml:3: keyword "ab" is too short`},
		{"bad name", "name: Acme Corp\nissuer: Acme\nkeywords: [acme]\nfields:\n  total: 'T (\\S+)'\n", "t.yml:1: name"},
		{"no issuer", "name: acme\nkeywords: [acme]\nfields:\n  total: 'T (\\S+)'\n", "issuer is required"},
		{"duplicate key", head + "fields:\n  total: 'T (\\S+)'\n  total: 'U (\\S+)'\n", `t.yml:6: mapping key "total" already defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTemplate("t.yml", []byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadTemplatesRefusesDuplicateNames(t *testing.T) {
	tpl := "name: acme\nissuer: Acme\nkeywords: [acme corp]\nfields:\n  total: 'T (\\S+)'\n"
	fsys := fstest.MapFS{"t/a.yml": {Data: []byte(tpl)}, "t/b.yml": {Data: []byte(tpl)}}
	if _, err := LoadTemplates(fsys, "t"); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("err = %v", err)
	}
}

func northwindPage(ref string) []tx {
	return []tx{
		{x: 72, y: 60, text: "Northwind Traders Inc.", size: 16},
		{x: 340, y: 110, text: "Ref. " + ref}, {x: 340, y: 125, text: "Issued 03-04-2026"},
		{x: 340, y: 140, text: "Settle by 04-03-2026"},
		{x: 360, y: 300, text: "Goods"}, {x: 540, y: 300, text: "$1,000.00", right: true},
		{x: 360, y: 315, text: "Sales tax"}, {x: 540, y: 315, text: "$82.50", right: true},
		{x: 360, y: 330, text: "Please remit"}, {x: 540, y: 330, text: "$1,082.50", right: true},
	}
}

func TestTemplateReadsVendorWording(t *testing.T) {
	res := mustExtract(t, textDoc(northwindPage("NWT/26/1042")), Options{})
	if res.Template != "northwind" {
		t.Fatalf("template %q", res.Template)
	}
	want := map[string]string{result.FieldInvoiceNumber: "NWT/26/1042", result.FieldInvoiceDate: "2026-03-04",
		result.FieldDueDate: "2026-04-03", result.FieldSubtotal: "1000.00", result.FieldTotal: "1082.50",
		result.FieldVendorName: "Northwind Traders Inc.", result.FieldCurrency: "USD"}
	for f, v := range want {
		if got := field(res, f); got != v || res.FieldSources[f].Method != result.MethodTemplate {
			t.Errorf("%s = %q by %s, want %q by template", f, got, res.FieldSources[f].Method, v)
		}
	}
	// Near miss: the vendor's name without its "NWT/" numbers is not its
	// template, and the generic reader does not know "Please remit".
	res = mustExtract(t, textDoc(northwindPage("7781")), Options{})
	if res.Template != "" || field(res, result.FieldTotal) != "<nil>" {
		t.Errorf("template %q total %q", res.Template, field(res, result.FieldTotal))
	}
}

func TestTenantTemplateComesFirst(t *testing.T) {
	tp, err := ParseTemplate("tenant.yml", []byte("name: nw-tenant\nissuer: Northwind (tenant)\nkeywords: [northwind]\nfields:\n  total: 'remit\\s*\\$?([0-9,.]+)'\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := mustExtract(t, textDoc(northwindPage("NWT/26/1042")), Options{Templates: []*Template{tp}})
	if res.Template != "nw-tenant" || field(res, result.FieldVendorName) != "Northwind (tenant)" || field(res, result.FieldTotal) != "1082.50" {
		t.Fatalf("template %q vendor %q total %q", res.Template, field(res, result.FieldVendorName), field(res, result.FieldTotal))
	}
}

func TestParseLexiconRejects(t *testing.T) {
	base := string(defaultLexicon)
	tests := []struct{ name, from, to, want string }{
		{"unknown field", "  invoice_date:\n", "  invoice_dat:\n", `unknown field "invoice_dat"`},
		{"unknown column", "  quantity: [qty,", "  qantity: [qty,", `unknown table column "qantity"`},
		{"month out of range", "  12: [december,", "  13: [december,", "month 13 out of range"},
		{"symbol to unknown code", `"€": EUR`, `"€": EURO`, `maps to "EURO"`},
		{"bad tax id format", "  - 'IT[0-9]{11}'", "  - 'IT[0-9{11}'", "missing closing ]"},
		{"unknown key", "titles:", "tittles:", "field tittles not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Replace(base, tt.from, tt.to, 1)
			if in == base {
				t.Fatalf("fixture: %q not in lexicon.yaml", tt.from)
			}
			_, err := parseLexicon("lexicon.yaml", []byte(in))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "lexicon.yaml:") {
				t.Fatalf("err = %v, want lexicon.yaml:<line>: ...%q", err, tt.want)
			}
		})
	}
}
