package extract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs"
)

// pdfInfo is what pdfinfo says about a PDF before anything is rendered.
type pdfInfo struct {
	pages int
	sizes []pageSize // the first min(pages, MaxPages) pages
}

// pageSize is a page's box in points (MediaBox; rotation does not change
// the pixel count, so it is not needed for limits).
type pageSize struct{ w, h float64 }

const maxInfoOutput = 1 << 20

// eofWindow: a complete PDF ends with %%EOF; some writers append a little
// padding after it, so look in the last few KiB rather than the last line.
const eofWindow = 4096

// probePDF runs pdfinfo and refuses, before any rendering, what extraction
// must not attempt: encrypted, unreadable, truncated or too many pages.
func probePDF(ctx context.Context, in input, o Options) (pdfInfo, error) {
	out, err := runTool(ctx, toolRun{
		name:      "pdfinfo",
		args:      []string{"-f", "1", "-l", strconv.Itoa(o.MaxPages), in.path},
		timeout:   o.ToolTimeout,
		maxStdout: maxInfoOutput,
	})
	if err != nil {
		return pdfInfo{}, classifyPoppler(err)
	}
	info, err := parsePDFInfo(out)
	if err != nil {
		return pdfInfo{}, err
	}
	switch {
	case info.pages <= 0:
		return pdfInfo{}, unreadable("the PDF has no pages")
	case info.pages > o.MaxPages:
		return pdfInfo{}, tooLarge("the PDF has %d pages, over the limit of %d", info.pages, o.MaxPages)
	case len(info.sizes) != info.pages:
		return pdfInfo{}, unreadable("pdfinfo reported %d page sizes for %d pages", len(info.sizes), info.pages)
	}
	if err := checkComplete(in); err != nil {
		return pdfInfo{}, err
	}
	return info, nil
}

// classifyPoppler maps a poppler tool's failure to a job error code.
func classifyPoppler(err error) error {
	var ee *exitError
	if !errors.As(err, &ee) {
		return err
	}
	if strings.Contains(ee.stderr, "Incorrect password") {
		return docs.Errorf(docs.CodeEncrypted, "the PDF needs a password")
	}
	return unreadable("%s could not read the PDF (status %d)", ee.what, ee.code)
}

// parsePDFInfo reads "Pages:" and the "Page N size: W x H pts" lines.
func parsePDFInfo(out []byte) (pdfInfo, error) {
	var info pdfInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch f := strings.Fields(key); {
		case len(f) == 1 && f[0] == "Pages":
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil {
				return pdfInfo{}, unreadable("pdfinfo gave no page count")
			}
			info.pages = n
		case len(f) == 3 && f[0] == "Page" && f[2] == "size":
			s, err := parseSize(val)
			if err != nil {
				return pdfInfo{}, err
			}
			info.sizes = append(info.sizes, s)
		}
	}
	if err := sc.Err(); err != nil {
		return pdfInfo{}, fmt.Errorf("read pdfinfo output: %w", err)
	}
	return info, nil
}

// parseSize reads " 612 x 792 pts (letter)".
func parseSize(val string) (pageSize, error) {
	f := strings.Fields(val)
	if len(f) < 4 || f[1] != "x" || f[3] != "pts" {
		return pageSize{}, unreadable("pdfinfo gave an unexpected page size")
	}
	w, err1 := strconv.ParseFloat(f[0], 64)
	h, err2 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return pageSize{}, unreadable("the PDF has an invalid page size")
	}
	return pageSize{w, h}, nil
}

// checkComplete refuses a PDF without a final %%EOF: poppler repairs a
// truncated file when the objects it needs survived, and extraction would
// then quietly return part of a document.
func checkComplete(in input) error {
	f, err := os.Open(in.path)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	defer f.Close()
	off := max(0, in.size-eofWindow)
	tail := make([]byte, in.size-off)
	if _, err := f.ReadAt(tail, off); err != nil && err != io.EOF {
		return fmt.Errorf("read input tail: %w", err)
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return unreadable("the PDF is truncated (no %%%%EOF at its end)")
	}
	return nil
}
