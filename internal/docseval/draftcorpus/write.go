package draftcorpus

import (
	"bytes"
	"fmt"
	"os"

	"github.com/airlock-dev/airlock/internal/docseval/reviewcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// PDFOptions say how contracts are written as documents.
type PDFOptions struct {
	// Scans is how many of the contracts (the first ones) are also written
	// as scans, beside their text PDFs.
	Scans int
	// Scan is how those pages are degraded (DPI 0 = 200); each contract's
	// scan adds its index to Scan.Seed.
	Scan testdocs.Scan
}

// WritePDFs writes each contract as NAME.pdf (a text PDF) and, for the
// first o.Scans, NAME-scan.pdf (image-only pages), each with its truth
// beside it as STEM.truth.json in reviewcorpus's format, so airlock eval
// review and reviewcorpus.ReadTruth read it. It returns the PDF paths.
func WritePDFs(dir string, cs []Contract, o PDFOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("draft corpus: %w", err)
	}
	var out []string
	for i, c := range cs {
		var text bytes.Buffer
		if err := testdocs.WriteFixedPDF(&text, c.Pages, testdocs.PDFOptions{}); err != nil {
			return nil, fmt.Errorf("draft corpus: %s: %w", c.Name, err)
		}
		p, err := reviewcorpus.WriteDoc(dir, c.Name, text.Bytes(), c.Truth)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if i >= o.Scans {
			continue
		}
		s := o.Scan
		s.Seed += int64(i)
		var scan bytes.Buffer
		if err := testdocs.WriteScan(&scan, c.Pages, s, testdocs.ScanPDF); err != nil {
			return nil, fmt.Errorf("draft corpus: %s scan: %w", c.Name, err)
		}
		t := c.Truth
		t.Contract = c.Name + "-scan"
		if p, err = reviewcorpus.WriteDoc(dir, t.Contract, scan.Bytes(), t); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
