package extract

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs"
)

// Risks reports what a PDF carries that a person should know before
// opening the original: scripts, an XFA form, attachments, and bytes of
// another format before its header or after its end (a polyglot: one file
// that is also a ZIP, an HTML page, an executable). Nothing is run or
// unpacked: pdfinfo and pdfdetach only list, and the rest is a byte scan.
// Other inputs carry none. The result is sorted (docs.Risk* names).
func Risks(ctx context.Context, path string, opts Options) ([]string, error) {
	o := opts.withDefaults()
	in, err := sniffInput(path, o)
	if err != nil || in.kind != kindPDF {
		return nil, err
	}
	var risks []string
	out, err := runTool(ctx, toolRun{name: "pdfinfo", args: []string{"-f", "1", "-l", "1", path},
		timeout: o.ToolTimeout, maxStdout: maxInfoOutput})
	if err != nil {
		return nil, classifyPoppler(err)
	}
	risks = append(risks, infoRisks(out)...)
	out, err = runTool(ctx, toolRun{name: "pdfdetach", args: []string{"-list", path},
		timeout: o.ToolTimeout, maxStdout: maxInfoOutput})
	if err != nil {
		return nil, classifyPoppler(err)
	}
	if n := attachmentCount(out); n > 0 {
		risks = append(risks, docs.RiskPDFEmbeddedFiles)
	}
	bytesRisks, err := polyglotRisks(in)
	if err != nil {
		return nil, err
	}
	risks = append(risks, bytesRisks...)
	slices.Sort(risks)
	return slices.Compact(risks), nil
}

// infoRisks reads pdfinfo's "JavaScript: yes" and "Form: XFA" lines.
func infoRisks(out []byte) []string {
	var risks []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch val = strings.TrimSpace(val); strings.TrimSpace(key) {
		case "JavaScript":
			if val == "yes" {
				risks = append(risks, docs.RiskPDFJavaScript)
			}
		case "Form":
			if val == "XFA" {
				risks = append(risks, docs.RiskPDFXFAForm)
			}
		}
	}
	return risks
}

// attachmentCount reads pdfdetach -list's first line, "N embedded files".
func attachmentCount(out []byte) int {
	first, _, _ := bytes.Cut(out, []byte("\n"))
	f := strings.Fields(string(first))
	if len(f) < 1 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// trailerSlack is what may follow the last %%EOF without being another
// file: line ends, padding some writers add.
const trailerSlack = 64

// polyglotRisks scans the bytes around the PDF's start and end.
func polyglotRisks(in input) ([]string, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	var risks []string
	head := make([]byte, min(in.size, pdfHeaderWindow))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, fmt.Errorf("read input head: %w", err)
	}
	if i := bytes.Index(head, []byte("%PDF-")); i > 0 {
		risks = append(risks, docs.RiskPDFDataBeforeStart)
	}
	off := max(0, in.size-eofWindow)
	tail := make([]byte, in.size-off)
	if _, err := f.ReadAt(tail, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read input tail: %w", err)
	}
	if i := bytes.LastIndex(tail, []byte("%%EOF")); i >= 0 {
		rest := bytes.TrimRight(tail[i+len("%%EOF"):], "\x00\r\n\t ")
		if len(rest) > trailerSlack {
			risks = append(risks, docs.RiskPDFDataAfterEnd)
		}
	} else if in.size > eofWindow {
		// The last %%EOF is further back than the window: a file was
		// appended after the PDF (checkComplete refuses a PDF with none).
		risks = append(risks, docs.RiskPDFDataAfterEnd)
	}
	return risks, nil
}
