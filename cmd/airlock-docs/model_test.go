package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

func ptr(s string) *string { return &s }

// TestAskModelMerges: the rules stay the default; the model fills what they
// left empty at a confidence the host will not approve on, and a field it
// reads differently is marked; an answer out of protocol changes nothing.
func TestAskModelMerges(t *testing.T) {
	answer := `{"vendor_name":"Northwind Traders","invoice_number":"INV-42","invoice_date":null,"due_date":"2026-04-01",
"currency":"USD","subtotal":null,"tax":null,"shipping":null,"total":"999.00","po_number":"PO-7","iban":null,"bic":null,
"account_number":null,"routing_number":null,"sort_code":null,"vendor_tax_id":null,"line_items":null}`
	var sawText string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		sawText = req.Messages[1].Content
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"content": answer}, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	res := &invoice.Result{Fields: result.Fields{VendorName: ptr("Northwind Traders"), Total: ptr("108.00"), Currency: ptr("USD")},
		FieldSources: map[string]result.FieldSource{
			result.FieldVendorName: {Method: result.MethodLabel, Confidence: 0.9},
			result.FieldTotal:      {Method: result.MethodLabel, Confidence: 0.95},
			result.FieldCurrency:   {Method: result.MethodInferred, Confidence: 0.9},
		}}
	if !askModel(context.Background(), newModelClient(srv.URL+"/v1", "m"), "INVOICE INV-42 Total $108.00", res) {
		t.Fatal("the model's answer was not used")
	}
	if !strings.Contains(sawText, "INV-42") {
		t.Errorf("the model was not shown the visible text: %q", sawText)
	}
	if *res.Fields.Total != "108.00" || !contains(res.FieldSources[result.FieldTotal].Issues, result.IssueModelDisagrees) ||
		res.FieldSources[result.FieldTotal].Confidence >= 0.6 {
		t.Errorf("a disagreeing total must keep the rules' value and be marked: %v %+v", *res.Fields.Total, res.FieldSources[result.FieldTotal])
	}
	if *res.Fields.InvoiceNumber != "INV-42" || res.FieldSources[result.FieldInvoiceNumber].Method != result.MethodModel ||
		res.FieldSources[result.FieldInvoiceNumber].Confidence >= 0.6 {
		t.Errorf("a field only the model read: %v %+v", res.Fields.InvoiceNumber, res.FieldSources[result.FieldInvoiceNumber])
	}
	if len(res.FieldSources[result.FieldVendorName].Issues) != 0 || res.FieldSources[result.FieldVendorName].Confidence != 0.9 {
		t.Errorf("an agreeing field changed: %+v", res.FieldSources[result.FieldVendorName])
	}

	answer = "I cannot help with that."
	before := *res
	if askModel(context.Background(), newModelClient(srv.URL+"/v1", "m"), "x", res) {
		t.Error("an out-of-protocol answer was used")
	}
	if res.Fields.PONumber != before.Fields.PONumber {
		t.Error("an out-of-protocol answer changed the fields")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
