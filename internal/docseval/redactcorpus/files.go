package redactcorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// CanariesFile is the name of the canary list WriteFiles writes beside
// the documents (a JSON list of strings, as the verifier's --canaries
// flag reads it).
const CanariesFile = "canaries.json"

// File formats of written documents.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatPDF  = "pdf"
	FormatPNG  = "png"
)

// Truth is what WriteFiles puts beside a document as <stem>.truth.json.
type Truth struct {
	Name    string `json:"name"`
	Format  string `json:"format"`            // FormatText, FormatJSON, FormatCSV, FormatPDF or FormatPNG
	Scanned bool   `json:"scanned,omitempty"` // an image-only page document
	// Spans (text formats) are code-point ranges of the file's exact
	// content.
	Spans []Span `json:"spans,omitempty"`
	// Words (page formats) are every word on the pages, PII or not, with
	// its page, box in points (origin top left) and entity type.
	Words      []Word         `json:"words,omitempty"`
	NearMisses map[string]int `json:"near_misses,omitempty"`
	Canaries   []string       `json:"canaries,omitempty"` // canary strings planted in the document

	// text is the document's content (text formats), for telling
	// whitespace from characters when scoring; "" counts every code point.
	text string
}

// Kind names the document's class for per-format reports: "text",
// "json", "csv", "pdf-text", "pdf-scan" or "png-scan".
func (t Truth) Kind() string {
	switch {
	case t.Format == FormatPDF && t.Scanned:
		return "pdf-scan"
	case t.Format == FormatPDF:
		return "pdf-text"
	case t.Format == FormatPNG:
		return "png-scan"
	}
	return t.Format
}

func (t Truth) pages() bool { return t.Format == FormatPDF || t.Format == FormatPNG }

// ext is the file extension of a format.
func ext(format string) string {
	return map[string]string{FormatText: ".txt", FormatJSON: ".json", FormatCSV: ".csv", FormatPDF: ".pdf", FormatPNG: ".png"}[format]
}

// Truths returns each document's truth as WriteFiles writes it, in the
// same order: text formats as they are; page documents as text PDFs, or
// as scans: one-page scans alternately PNGs and image-only PDFs (the
// first a PNG), longer ones image-only PDFs.
func Truths(docs []Doc) []Truth {
	out := make([]Truth, len(docs))
	scans := 0
	for i, d := range docs {
		t := Truth{Name: d.Name, Format: d.Format, NearMisses: d.NearMisses, Canaries: d.Canaries}
		if d.Page == nil {
			t.Spans, t.text = d.Spans, d.Text
			out[i] = t
			continue
		}
		t.Words, t.Format = d.Page.Words, FormatPDF
		if d.Page.Scan != nil {
			t.Scanned = true
			if len(d.Page.Fixed.Pages) == 1 {
				if scans%2 == 0 {
					t.Format = FormatPNG
				}
				scans++
			}
		}
		out[i] = t
	}
	return out
}

// WriteFiles writes every document into dir as <name>.txt, .json, .csv,
// .pdf or .png (see Truths for which), with <name>.truth.json beside it,
// and the canaries planted anywhere in docs as CanariesFile. Text formats
// are written byte for byte; page documents are rendered by testdocs. It
// returns the document paths in docs' order.
func WriteFiles(dir string, docs []Doc) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	truths := Truths(docs)
	out := make([]string, 0, len(docs))
	canaries := map[string]bool{}
	for i, d := range docs {
		t := truths[i]
		data, err := render(d, t)
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", d.Name, err)
		}
		path := filepath.Join(dir, d.Name+ext(t.Format))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		if err := writeJSON(filepath.Join(dir, d.Name+".truth.json"), t); err != nil {
			return nil, err
		}
		for _, c := range d.Canaries {
			canaries[c] = true
		}
		out = append(out, path)
	}
	list := make([]string, 0, len(canaries))
	for c := range canaries {
		list = append(list, c)
	}
	sort.Strings(list)
	return out, writeJSON(filepath.Join(dir, CanariesFile), list)
}

// render returns a document's file content in its truth's format.
func render(d Doc, t Truth) ([]byte, error) {
	if d.Page == nil {
		return []byte(d.Text), nil
	}
	var b bytes.Buffer
	var err error
	switch {
	case !t.Scanned:
		err = testdocs.WriteFixedPDF(&b, d.Page.Fixed, testdocs.PDFOptions{})
	case t.Format == FormatPNG:
		err = testdocs.WriteScan(&b, d.Page.Fixed, *d.Page.Scan, testdocs.ScanPNG)
	default:
		err = testdocs.WriteScan(&b, d.Page.Fixed, *d.Page.Scan, testdocs.ScanPDF)
	}
	return b.Bytes(), err
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("corpus: %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return nil
}

// ReadTruth reads the truth written beside a corpus document (and, for
// text formats, the document itself, which scoring needs to tell
// whitespace from characters).
func ReadTruth(docPath string) (Truth, error) {
	stem := docPath[:len(docPath)-len(filepath.Ext(docPath))]
	b, err := os.ReadFile(stem + ".truth.json")
	if err != nil {
		return Truth{}, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return Truth{}, fmt.Errorf("%s.truth.json: %w", filepath.Base(stem), err)
	}
	if !t.pages() {
		doc, err := os.ReadFile(docPath)
		if err != nil {
			return Truth{}, err
		}
		t.text = string(doc)
	}
	return t, nil
}

// DocPaths lists the documents WriteFiles wrote into dir (every file with
// a truth beside it), sorted by name.
func DocPaths(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if e.IsDir() || strings.HasSuffix(name, ".truth.json") || name == CanariesFile {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, stem+".truth.json")); err == nil {
			out = append(out, filepath.Join(dir, name))
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadCanaries reads the canary list WriteFiles wrote into dir.
func ReadCanaries(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, CanariesFile))
	if err != nil {
		return nil, err
	}
	var cs []string
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", CanariesFile, err)
	}
	return cs, nil
}
