package jobs

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// TestInvoiceBatchRunTwice: running the same batch again judges every
// invoice as before, noted as resubmitted, instead of flagging each as a
// duplicate of itself; another file with a number already seen is still a
// duplicate.
func TestInvoiceBatchRunTwice(t *testing.T) {
	m, err := invoicecheck.ParseMaster(strings.NewReader(`{"tenant_id": "t1", "vendors": [{"vendor_id": "v1", "name": "Acme Corporation",
	  "tax_id": "12-3456789", "country": "US", "bank": {"account_number": "123456789", "routing_number": "021000021"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lim := decimal.NewFromInt(10000)
	h := invoicecheck.NewMemoryHistory()
	newRun := func() *Invoice {
		t.Helper()
		chk, err := invoicecheck.NewChecker(m, invoicecheck.Policy{AsOf: time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC), DefaultLimit: &lim}, h)
		if err != nil {
			t.Fatal(err)
		}
		return &Invoice{Checker: chk}
	}
	var job *Invoice
	judge := func(id, number string) InvoiceLine {
		t.Helper()
		o := Outcome{Fields: pendingInvoice{result: invoiceResult(t, number)}}
		doc := Doc{Path: id + ".pdf", ID: id}
		job.Finalize(context.Background(), doc, &o)
		l := o.Fields.(InvoiceLine)
		if strings.Contains(job.Human(doc, o), "(resubmitted") != slices.ContainsFunc(l.Notes, func(n invoicecheck.Note) bool {
			return n.Code == invoicecheck.NoteResubmitted
		}) {
			t.Errorf("human line %q, notes %+v", job.Human(doc, o), l.Notes)
		}
		return l
	}
	for run := 0; run < 2; run++ {
		job = newRun()
		for _, d := range [][2]string{{"00aa11bb22cc33dd", "INV-1"}, {"44ee55ff66aa77bb", "INV-2"}} {
			l := judge(d[0], d[1])
			if l.Decision != invoicecheck.DecisionApprove || len(l.Notes) != run {
				t.Fatalf("run %d, %s: %s flags %+v notes %+v", run+1, d[1], l.Decision, l.Flags, l.Notes)
			}
		}
	}
	if l := judge("9999888877776666", "INV-1"); l.Decision != invoicecheck.DecisionReview || len(l.Flags) != 1 ||
		l.Flags[0].Code != invoicecheck.FlagDuplicate {
		t.Fatalf("another file with INV-1: %s %+v", l.Decision, l.Flags)
	}
}

func invoiceResult(t *testing.T, number string) json.RawMessage {
	t.Helper()
	s := func(v string) *string { return &v }
	src := result.FieldSource{Method: result.MethodLabel, Confidence: 0.95, Page: 1, Issues: []string{}}
	r := result.Result{
		Fields: result.Fields{VendorName: s("Acme Corporation"), InvoiceNumber: s(number), InvoiceDate: s("2026-03-10"),
			DueDate: s("2026-04-09"), Currency: s("USD"), Subtotal: s("100.00"), Tax: s("0.00"), Total: s("100.00"),
			VendorTaxID: s("12-3456789"), AccountNumber: s("123456789"), RoutingNumber: s("021000021"), LineItems: []result.LineItem{}},
		FieldSources: map[string]result.FieldSource{}, HiddenText: []result.HiddenText{}, Injection: []result.Injection{},
		Pages: []result.PageInfo{{Number: 1, Method: "text", OCRConfidence: -1, InkChecked: true}},
	}
	for _, f := range result.ScalarFields() {
		if *r.Fields.Ptr(f) != nil {
			r.FieldSources[f] = src
		}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
