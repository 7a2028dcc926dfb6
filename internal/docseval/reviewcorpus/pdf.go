package reviewcorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// PDFOptions say how a corpus is written as documents.
type PDFOptions struct {
	// Scans is how many of the contracts are also written as scans (the
	// first ones), beside their text PDFs.
	Scans int
	// Scan is how those pages are degraded; DPI 0 = 200.
	Scan testdocs.Scan
}

// WritePDFs writes each contract as <name>.pdf (a text PDF) and, for the
// first o.Scans, <name>-scan.pdf (image-only pages, degraded), each with
// its truth beside it as <stem>.truth.json. It returns the PDF paths.
func WritePDFs(dir string, cs []Contract, o PDFOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var out []string
	for i, c := range cs {
		var text bytes.Buffer
		if err := testdocs.WriteFlowPDF(&text, c.Flow, testdocs.PDFOptions{}); err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", c.Name, err)
		}
		p, err := WriteDoc(dir, c.Name, text.Bytes(), c.Truth)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if i >= o.Scans {
			continue
		}
		fixed, err := testdocs.LayoutFlow(c.Flow)
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", c.Name, err)
		}
		s := o.Scan
		s.Seed += int64(i)
		var scan bytes.Buffer
		if err := testdocs.WriteScan(&scan, fixed, s, testdocs.ScanPDF); err != nil {
			return nil, fmt.Errorf("corpus: %s scan: %w", c.Name, err)
		}
		t := c.Truth
		t.Contract = c.Name + "-scan"
		if p, err = WriteDoc(dir, c.Name+"-scan", scan.Bytes(), t); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// WriteDoc writes pdf as DIR/STEM.pdf with its truth beside it as
// STEM.truth.json (what ReadTruth reads), and returns the PDF's path.
func WriteDoc(dir, stem string, pdf []byte, truth Truth) (string, error) {
	p := filepath.Join(dir, stem+".pdf")
	if err := os.WriteFile(p, pdf, 0o644); err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	b, err := json.MarshalIndent(truth, "", "  ")
	if err != nil {
		return "", fmt.Errorf("corpus: %s truth: %w", stem, err)
	}
	if err := os.WriteFile(filepath.Join(dir, stem+".truth.json"), append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	return p, nil
}

// ReadTruth reads the truth written beside a corpus document.
func ReadTruth(docPath string) (Truth, error) {
	stem := docPath[:len(docPath)-len(filepath.Ext(docPath))]
	b, err := os.ReadFile(stem + ".truth.json")
	if err != nil {
		return Truth{}, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return Truth{}, fmt.Errorf("%s.truth.json: %w", stem, err)
	}
	return t, nil
}
