package invoicecorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// TextPDF writes a case as a text PDF (hidden items as testdocs draws
// them), whatever its render mode: for runs that read every case from a
// text layer.
func TextPDF(c *Case) ([]byte, error) {
	var b bytes.Buffer
	if err := testdocs.WriteFixedPDF(&b, c.Doc, testdocs.PDFOptions{}); err != nil {
		return nil, fmt.Errorf("%s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// Ext is the file extension a case is written with.
func (c *Case) Ext() string {
	switch c.Render.Mode {
	case ModePhotoPNG:
		return ".png"
	case ModePhotoJPEG:
		return ".jpg"
	case ModeFaxTIFF:
		return ".tif"
	}
	return ".pdf"
}

// WriteDocument renders a case the way its Render says: a text PDF, an
// image-only scanned PDF, a photo (PNG or JPEG, first page) or a bilevel
// fax TIFF with every page.
func WriteDocument(w io.Writer, c *Case) error {
	if c.Render.Mode == ModeTextPDF {
		return testdocs.WriteFixedPDF(w, c.Doc, testdocs.PDFOptions{})
	}
	s := testdocs.Scan{DPI: 200}
	if c.Render.Scan != nil {
		s = *c.Render.Scan
	}
	format := map[Mode]testdocs.ScanFormat{ModeScanPDF: testdocs.ScanPDF, ModePhotoPNG: testdocs.ScanPNG,
		ModePhotoJPEG: testdocs.ScanJPEG, ModeFaxTIFF: testdocs.ScanTIFF}[c.Render.Mode]
	if c.Render.Mode == ModeFaxTIFF {
		s.Bilevel = true
	}
	return testdocs.WriteScan(w, c.Doc, s, format)
}

// CaseTruth is what is written beside a corpus document: the case's
// id, traps and printed fields, and its render mode.
type CaseTruth struct {
	ID     string        `json:"id"`
	Mode   Mode          `json:"mode"`
	Traps  []Trap        `json:"traps"`
	Fields result.Fields `json:"fields"`
	Order  int           `json:"order"` // position in the corpus: duplicates follow their originals
}

// WriteFiles writes every case as <order>-<id><ext> with <stem>.truth.json
// beside it, plus vendors.json (the corpus tenant's vendor master). File
// names sort in corpus order, so a batch over the directory checks
// duplicates after their originals.
func WriteFiles(dir string, c *Corpus) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vendors.json"), VendorMaster(), 0o644); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var out []string
	for i := range c.Cases {
		cs := &c.Cases[i]
		stem := filepath.Join(dir, fmt.Sprintf("%04d-%s", i, cs.ID))
		var b bytes.Buffer
		if err := WriteDocument(&b, cs); err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", cs.ID, err)
		}
		if err := os.WriteFile(stem+cs.Ext(), b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		t, err := json.MarshalIndent(CaseTruth{ID: cs.ID, Mode: cs.Render.Mode, Traps: cs.Traps, Fields: cs.Truth, Order: i}, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(stem+".truth.json", append(t, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		out = append(out, stem+cs.Ext())
	}
	return out, nil
}

// ReadCaseTruth reads the truth written beside a corpus document.
func ReadCaseTruth(docPath string) (CaseTruth, error) {
	stem := docPath[:len(docPath)-len(filepath.Ext(docPath))]
	b, err := os.ReadFile(stem + ".truth.json")
	if err != nil {
		return CaseTruth{}, err
	}
	var t CaseTruth
	if err := json.Unmarshal(b, &t); err != nil {
		return CaseTruth{}, fmt.Errorf("%s.truth.json: %w", stem, err)
	}
	return t, nil
}
