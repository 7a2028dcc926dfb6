package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestInvoiceVendorsStrict: a vendor master exported with fields airlock
// does not know is accepted (with warnings) unless --strict is given,
// which refuses it as a usage error.
func TestInvoiceVendorsStrict(t *testing.T) {
	dir := t.TempDir()
	vendors := filepath.Join(dir, "vendors.json")
	if err := os.WriteFile(vendors, []byte(`{"tenant_id": "acme", "tenant_name": "Acme Inc.", "exported_at": "2026-03-01",
	  "vendors": [{"vendor_id": 42, "name": "Globex GmbH", "erp_ref": "K-1001", "address": ["Hauptstr. 1", "10115 Berlin"],
	    "country": "DE", "currency": "EUR", "iban": "DE89370400440532013000"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	jf := &jobFlags{tenant: "acme", host: hostFlags{stateDir: dir}}
	for _, strict := range []bool{false, true} {
		f := &invoiceFlags{vendors: vendors, strict: strict, approveLimit: []string{"10000"}}
		job, done, err := f.job(jf)
		if !strict {
			if err != nil || job == nil {
				t.Fatalf("tolerant: job %v, err %v", job, err)
			}
			done()
			continue
		}
		var ee exitError
		if !errors.As(err, &ee) || ee.code != exitUsageCode {
			t.Fatalf("--strict: err = %v, want a usage error", err)
		}
	}
}
