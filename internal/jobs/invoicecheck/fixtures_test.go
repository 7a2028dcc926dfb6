package invoicecheck

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

const testMaster = `{
  "tenant_id": "t1",
  "vendors": [
    {"vendor_id": "v-acme", "name": "Acme Corporation", "aliases": ["ACME Supplies"],
     "tax_id": "12-3456789", "country": "US", "currency": "USD", "address": "1 Main St",
     "email": "ar@acme.example", "payment_terms_days": 30,
     "bank": {"iban": "", "bic": "", "bank_name": "First Bank", "account_number": "123456789",
              "routing_number": "021000021", "sort_code": "", "account_name": "Acme Corporation"}},
    {"vendor_id": "v-globex", "name": "Globex GmbH", "aliases": [],
     "tax_id": "DE123456789", "country": "DE", "currency": "EUR", "address": "", "email": "",
     "payment_terms_days": 14,
     "bank": {"iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX", "bank_name": "", "account_number": "",
              "routing_number": "", "sort_code": "", "account_name": ""}}
  ]
}`

func sp(s string) *string { return &s }

func testChecker(t *testing.T, h History) *Checker {
	t.Helper()
	m, err := ParseMaster(strings.NewReader(testMaster))
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = NewMemoryHistory()
	}
	c, err := NewChecker(m, Policy{
		AsOf:             time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC),
		AutoApproveLimit: map[string]decimal.Decimal{"USD": decimal.NewFromInt(10000), "EUR": decimal.NewFromInt(10000)},
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func src(conf float64) result.FieldSource {
	return result.FieldSource{Method: result.MethodLabel, Confidence: conf, Page: 1, Issues: []string{}}
}

// cleanResult is an invoice from Acme that passes every check.
func cleanResult() *result.Result {
	r := &result.Result{
		Fields: result.Fields{
			VendorName: sp("Acme Corp."), InvoiceNumber: sp("INV-0042"),
			InvoiceDate: sp("2026-03-10"), DueDate: sp("2026-04-09"), Currency: sp("USD"),
			Subtotal: sp("1000.00"), Tax: sp("82.50"), Shipping: sp("17.50"), Total: sp("1100.00"),
			AccountNumber: sp("123456789"), RoutingNumber: sp("021000021"), VendorTaxID: sp("12-3456789"),
			LineItems: []result.LineItem{
				{Description: "Widgets", Quantity: sp("10"), UnitPrice: sp("60.00"), Amount: sp("600.00")},
				{Description: "Gadgets", Quantity: sp("4"), UnitPrice: sp("100.00"), Amount: sp("400.00")},
			},
		},
		FieldSources: map[string]result.FieldSource{},
		HiddenText:   []result.HiddenText{},
		Injection:    []result.Injection{},
		Pages:        []result.PageInfo{{Number: 1, Method: "text", OCRConfidence: -1, InkChecked: true}},
	}
	for _, f := range append(result.ScalarFields(), result.FieldLineItems) {
		if f == result.FieldLineItems || *r.Fields.Ptr(f) != nil {
			r.FieldSources[f] = src(0.95)
		}
	}
	return r
}

func marshal(t *testing.T, r *result.Result) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkRaw(t *testing.T, c *Checker, raw []byte) *Report {
	t.Helper()
	rep, err := c.CheckResult(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// bankNumbers are every bank number in the fixtures; no flag detail may
// carry one in full.
var bankNumbers = []string{"123456789", "021000021", "DE89370400440532013000", "GB29NWBK60161331926819",
	"987654321", "DE62370400440532013001", "12-3456789", "123456780"}

func assertMasked(t *testing.T, rep *Report) {
	t.Helper()
	for _, f := range rep.Flags {
		for _, n := range bankNumbers {
			if strings.Contains(f.Detail, n) || strings.Contains(f.Detail, digitsOnly(n)) && len(digitsOnly(n)) > 4 {
				t.Errorf("flag %s detail carries %q in full: %q", f.Code, n, f.Detail)
			}
		}
	}
}
