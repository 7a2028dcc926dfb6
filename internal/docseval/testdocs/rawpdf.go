package testdocs

import (
	"bytes"
	"fmt"
	"strings"
)

// rawPDF writes small hand-made PDFs (object by object, with a correct
// xref), for inputs fpdf cannot express: thousands of pages sharing one
// content stream, absurd page boxes, an OpenAction script.
type rawPDF struct {
	objs []string // object n is objs[n-1]
}

// add appends an object and returns its number.
func (p *rawPDF) add(body string) int {
	p.objs = append(p.objs, body)
	return len(p.objs)
}

// set replaces object n (for objects that refer forward).
func (p *rawPDF) set(n int, body string) { p.objs[n-1] = body }

// stream is a stream object's body.
func stream(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
}

// bytes serialises the objects with root as the catalog.
func (p *rawPDF) bytes(root int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n")
	offsets := make([]int, len(p.objs))
	for i, o := range p.objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(p.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(p.objs)+1, root, xref)
	return b.Bytes()
}

// pdfString is a literal string with the delimiters escaped.
func pdfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`, "\r", `\r`, "\n", `\n`)
	return "(" + r.Replace(s) + ")"
}

// helveticaText is a content stream showing lines of ASCII text in the
// standard Helvetica font (no embedding needed), from the top left.
func helveticaText(lines []string, pageH float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BT /F1 12 Tf 14 TL 72 %.0f Td\n", pageH-72)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s Tj T*\n", pdfString(l))
	}
	b.WriteString("ET")
	return b.String()
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
