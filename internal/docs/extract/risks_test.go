package extract

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// Active content and polyglots are reported, each by its own name; a
// plain PDF carries none. Nothing in them runs.
func TestRisks(t *testing.T) {
	needTools(t, "pdfinfo", "pdfdetach")
	lines := []string{"MASTER SERVICES AGREEMENT", "1. Term. This agreement runs for one year."}
	zipTail := append([]byte("PK\x03\x04"), bytes.Repeat([]byte("zipdata"), 200)...)
	for _, tc := range []struct {
		name string
		pdf  []byte
		want []string
	}{
		{"javascript", testdocs.JavaScriptPDF(lines, "app.alert('hi')"), []string{docs.RiskPDFJavaScript}},
		{"attachment", testdocs.AttachmentPDF(lines, "invoice.exe", []byte("MZ\\x90 not really")), []string{docs.RiskPDFEmbeddedFiles}},
		{"html before", testdocs.Polyglot([]byte("<html><script>x()</script>\n"), testdocs.AttachmentPDF(lines, "a.txt", []byte("a")), nil),
			[]string{docs.RiskPDFDataBeforeStart, docs.RiskPDFEmbeddedFiles}},
		{"zip after", testdocs.Polyglot(nil, testdocs.ManyPagesPDF(1), zipTail), []string{docs.RiskPDFDataAfterEnd}},
		{"trailing newlines only", testdocs.Polyglot(nil, testdocs.ManyPagesPDF(1), []byte("\r\n\n")), nil},
		{"plain", testdocs.ManyPagesPDF(2), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Risks(context.Background(), writeFile(t, "in.pdf", tc.pdf), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("risks %v, want %v", got, tc.want)
			}
		})
	}
	if got, err := Risks(context.Background(), writeFile(t, "in.png", testdocs.BombPNG(10, 10)), Options{}); err != nil || got != nil {
		t.Errorf("a PNG: %v %v, want none", got, err)
	}
	// Text, CSV and JSON documents (redaction's) carry none and are no error.
	for name, b := range map[string]string{"in.txt": "Dear Grace,\n", "in.csv": "a,b\r\n1,2\r\n", "in.json": `{"a": 1}`} {
		if got, err := Risks(context.Background(), writeFile(t, name, []byte(b)), Options{}); err != nil || got != nil {
			t.Errorf("%s: %v %v, want none", name, got, err)
		}
	}
}
