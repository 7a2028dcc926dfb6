package invoicecorpus2

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	ic "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Ext is the file extension the case is written with.
func (c *Case) Ext() string {
	sc := c.Scored()
	return sc.Ext()
}

// WriteDocument writes the case as its mode says: a text PDF in the
// corpus's own writer, or a scan, photo or fax drawn by testdocs.
func (c *Case) WriteDocument(w io.Writer) error {
	if c.Mode == ic.ModeTextPDF {
		return writePDF(w, c.doc)
	}
	s := testdocs.Scan{DPI: 200}
	if c.Scan != nil {
		s = *c.Scan
	}
	format := map[ic.Mode]testdocs.ScanFormat{ic.ModeScanPDF: testdocs.ScanPDF, ic.ModePhotoPNG: testdocs.ScanPNG,
		ic.ModePhotoJPEG: testdocs.ScanJPEG, ic.ModeFaxTIFF: testdocs.ScanTIFF}[c.Mode]
	return testdocs.WriteScan(w, c.doc.fixed(), s, format)
}

// Settings are how the corpus is judged, written as corpus.json beside
// it so that `airlock eval invoice` judges it the same way.
type Settings struct {
	Corpus   string            `json:"corpus"`
	Split    Split             `json:"split"`
	Seeds    []int64           `json:"seeds"`
	TenantID string            `json:"tenant_id"`
	AsOf     string            `json:"as_of"`
	Limits   map[string]string `json:"approve_limits"` // "" key: every other currency
}

// CorpusSettings are the settings of a split drawn from seeds.
func CorpusSettings(s Split, seeds []int64) Settings {
	lim := map[string]string{"": fmt.Sprint(AutoApproveLimit)}
	for k, v := range Limits() {
		lim[k] = v.String()
	}
	return Settings{Corpus: "invoicecorpus2", Split: s, Seeds: seeds, TenantID: TenantID, AsOf: AsOf().Format("2006-01-02"), Limits: lim}
}

// WriteFiles writes every case as <order>-<id><ext> with its truth beside
// it (invoicecorpus.CaseTruth, so `airlock eval invoice` scores it),
// vendors.json (the tenant's master as its ERP exports it) and
// corpus.json.
func WriteFiles(dir string, s Settings, cases []Case) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vendors.json"), VendorMaster(), 0o644); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	sj, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.json"), append(sj, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var out []string
	for i := range cases {
		cs := &cases[i]
		stem := filepath.Join(dir, fmt.Sprintf("%04d-%s", i, cs.ID))
		var b bytes.Buffer
		if err := cs.WriteDocument(&b); err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", cs.ID, err)
		}
		if err := os.WriteFile(stem+cs.Ext(), b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		t, err := json.MarshalIndent(ic.CaseTruth{ID: cs.ID, Mode: cs.Mode, Traps: cs.Traps, Fields: cs.Truth, Order: i}, "", "  ")
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

// GenerateSplit draws n invoices from each of the split's seeds, in
// order.
func GenerateSplit(s Split, seeds []int64, n int) ([]Case, error) {
	var out []Case
	used := map[string]bool{}
	for _, seed := range seeds {
		c, err := generate(s, seed, n, used)
		if err != nil {
			return nil, err
		}
		out = append(out, c.Cases...)
	}
	return out, nil
}

// Digest names what the case prints and how it is rendered (16 hex
// digits), for caches of its reading.
func (c *Case) Digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %v %+v %g %g %s\n", c.Mode, c.Scan != nil, c.Scan, c.doc.w, c.doc.h, c.doc.face)
	for _, p := range c.doc.pages {
		for _, t := range p.texts {
			fmt.Fprintf(h, "%+v\n", t)
		}
		for _, r := range p.rules {
			fmt.Fprintf(h, "%+v\n", r)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
