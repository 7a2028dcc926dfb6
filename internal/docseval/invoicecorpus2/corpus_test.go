package invoicecorpus2

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	ic "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

func TestSameSeedSameCorpus(t *testing.T) {
	a, err := Generate(SplitTune, 7001, 30)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(SplitTune, 7001, 30)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Cases {
		if a.Cases[i].Digest() != b.Cases[i].Digest() {
			t.Fatalf("case %d differs between two runs of one seed", i)
		}
	}
}

// TestSplitsShareNoVendor: the held-out split's vendors, names and tax
// ids are not the tuning split's.
func TestSplitsShareNoVendor(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range tuneVendors() {
		seen[v.id], seen[v.name], seen[v.masterTaxID()] = true, true, true
	}
	for _, v := range heldOutVendors() {
		if seen[v.id] || seen[v.name] || seen[v.masterTaxID()] {
			t.Errorf("%s is in both splits", v.name)
		}
	}
}

// TestTruthIsConsistent: every case's printed amounts add up unless its
// trap says otherwise, numbers repeat only for the duplicate trap and the
// exact copies, and the mix holds clean cases, copies and every trap.
func TestTruthIsConsistent(t *testing.T) {
	cs, err := GenerateSplit(SplitHeldOut, Seeds(SplitHeldOut), 52)
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]string{}
	byID := map[string]string{} // case -> invoice number
	traps := map[ic.Trap]int{}
	clean, copies := 0, 0
	for _, c := range cs {
		f := c.Truth
		sum := dec(f.Subtotal).Add(dec(f.Tax)).Add(dec(f.Shipping))
		if !hasTrap(c.Traps, ic.TrapTotalMismatch) && !sum.Equal(dec(f.Total)) {
			t.Errorf("%s: %s + %s + %s != %s", c.ID, *f.Subtotal, *f.Tax, deref(f.Shipping), *f.Total)
		}
		k := *f.VendorName + "|" + *f.InvoiceNumber
		if prev, dup := numbers[k]; dup && !hasTrap(c.Traps, ic.TrapDuplicate) && c.CopyOf != prev {
			t.Errorf("%s repeats %s's number without being a duplicate", c.ID, prev)
		}
		if hasTrap(c.Traps, ic.TrapDuplicate) && (c.DuplicateOf == "" || numbers[k] == "" || byID[c.DuplicateOf] != *f.InvoiceNumber) {
			t.Errorf("%s: a duplicate of %q, which is not an earlier invoice with its number", c.ID, c.DuplicateOf)
		}
		numbers[k] = c.ID
		byID[c.ID] = *f.InvoiceNumber
		for _, tr := range c.Traps {
			traps[tr]++
		}
		switch {
		case c.CopyOf != "":
			copies++
		case len(c.Traps) == 0:
			clean++
		}
	}
	for _, tr := range ic.Traps() {
		if traps[tr] == 0 {
			t.Errorf("no case carries %s", tr)
		}
	}
	if clean < len(cs)/3 || copies == 0 {
		t.Errorf("%d clean cases and %d copies of %d", clean, copies, len(cs))
	}
}

func dec(p *string) decimal.Decimal {
	if p == nil {
		return decimal.Zero
	}
	return decimal.RequireFromString(*p)
}

func deref(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

// TestMasterIsAnERPExport: the master reads with warnings about the
// fields only the ERP uses, and is refused under --strict.
func TestMasterIsAnERPExport(t *testing.T) {
	m, err := invoicecheck.ParseMaster(bytes.NewReader(VendorMaster()))
	if err != nil {
		t.Fatal(err)
	}
	if m.TenantID != TenantID || len(m.Vendors) != 16 || len(m.Warnings) != 2 {
		t.Fatalf("tenant %q, %d vendors, warnings %v", m.TenantID, len(m.Vendors), m.Warnings)
	}
	if _, err := invoicecheck.ParseMasterWith(bytes.NewReader(VendorMaster()), invoicecheck.MasterOptions{Strict: true}); err == nil {
		t.Fatal("strict reading accepted the ERP's own fields")
	}
}

// TestTextPDFUsesCoreFonts: the text PDFs are set in the PDF core fonts
// where the text allows, and pdftotext reads back what was printed.
func TestTextPDFUsesCoreFonts(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed")
	}
	c, err := Generate(SplitHeldOut, 9001, 12)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range c.Cases {
		if cs.Mode != ic.ModeTextPDF || cs.doc.face == gosans {
			continue
		}
		var b bytes.Buffer
		if err := cs.WriteDocument(&b); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("pdftotext", "-", "-")
		cmd.Stdin = &b
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{*cs.Truth.InvoiceNumber, *cs.Truth.Total} {
			if !strings.Contains(strings.ReplaceAll(string(out), ",", ""), strings.Split(want, ".")[0]) {
				t.Errorf("%s (%s): %q not in the text layer", cs.ID, cs.doc.face, want)
			}
		}
		if !bytes.Contains(mustPDF(t, &cs), []byte("/BaseFont /"+string(cs.doc.face))) {
			t.Errorf("%s: not set in %s", cs.ID, cs.doc.face)
		}
		return
	}
	t.Fatal(fmt.Errorf("no core-font text PDF among the cases"))
}

func mustPDF(t *testing.T, cs *Case) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := cs.WriteDocument(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
