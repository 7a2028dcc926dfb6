package extract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// needTools skips t unless every named tool is installed.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not on PATH", n)
		}
	}
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func flowPDF(t *testing.T, f testdocs.Flow, o testdocs.PDFOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := testdocs.WriteFlowPDF(&b, f, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fixedPDF(t *testing.T, f testdocs.Fixed) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := testdocs.WriteFixedPDF(&b, f, testdocs.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func scan(t *testing.T, f testdocs.Fixed, s testdocs.Scan, format testdocs.ScanFormat) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := testdocs.WriteScan(&b, f, s, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// code is err's job error code ("" for nil).
func code(err error) string {
	if err == nil {
		return ""
	}
	var e *docs.Error
	if !errors.As(err, &e) {
		return "unclassified: " + err.Error()
	}
	return e.Code
}

// invoicePage is a small page (4 x 2 in) that OCRs in about a second.
func invoicePage() testdocs.Fixed {
	return testdocs.Fixed{Width: 288, Height: 144, Pages: []testdocs.FixedPage{{Items: []testdocs.Item{
		{X: 18, Y: 36, Text: "Invoice INV-2041", Size: 14, Bold: true},
		{X: 18, Y: 66, Text: "Bill to: Northwind Traders", Size: 12},
		{X: 18, Y: 92, Text: "Total due: 1,234.56 EUR", Size: 12},
	}}}}
}

// contractFlow is a three-page-or-so contract with furniture on every
// page and hyphenation; it is all text layer, so tests on it are fast.
func contractFlow(footer string) testdocs.Flow {
	f := testdocs.Flow{
		Header:    "Northwind / Contoso — Master Services Agreement — CONFIDENTIAL",
		Footer:    footer,
		Hyphenate: true,
		Blocks: []testdocs.Block{
			{Kind: testdocs.Title, Text: "Master Services Agreement"},
			{Text: "This Master Services Agreement is entered into between Northwind Traders Limited and Contoso Data Services Limited, each a party and together the parties."},
			{Kind: testdocs.Heading, Text: "1. Definitions"},
		},
	}
	clauses := []string{
		"The Supplier shall provide the Services in accordance with the Specification, with reasonable skill and care, and in compliance with all applicable legislation and regulatory requirements.",
		"Notwithstanding any other provision of this Agreement, the aggregate liability of either party for all claims arising under or in connection with this Agreement shall not exceed the charges paid in the twelve months preceding the claim.",
		"Each party shall keep confidential all information disclosed by the other party, shall use it only for the purposes of this Agreement, and shall disclose it only to its employees, contractors and professional advisers who need to know it.",
		"The Customer may terminate this Agreement immediately by written notice if the Supplier commits a material breach which is irremediable or which is not remedied within thirty days of notification.",
	}
	for i := range 14 {
		if i%4 == 0 {
			f.Blocks = append(f.Blocks, testdocs.Block{Kind: testdocs.Heading, Text: []string{"2. Services", "3. Liability", "4. Confidentiality", "5. Termination"}[i/4%4]})
		}
		b := testdocs.Block{Text: clauses[i%len(clauses)]}
		if i%5 == 2 {
			b.RunIn = "Indemnification."
		}
		f.Blocks = append(f.Blocks, b)
	}
	return f
}

func extract(t *testing.T, path string, o Options) (*Document, error) {
	t.Helper()
	return Extract(context.Background(), path, o)
}
