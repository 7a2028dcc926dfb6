package raster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// CheckPDF re-reads a redacted PDF with poppler and qpdf and reports
// every way an original value could have survived: text that pdftotext
// can extract containing one of originals (compared without case, spaces
// or punctuation), any Info or XMP metadata, embedded files, fonts, and
// annotation, form, JavaScript, action or attachment objects in the
// decompressed file. It is for tests and audits (it runs external tools);
// the job itself needs none of it, because RebuildPDF writes only images.
func CheckPDF(ctx context.Context, path string, originals []string) error {
	var problems []string
	text, err := run(ctx, "pdftotext", "-enc", "UTF-8", path, "-")
	if err != nil {
		return err
	}
	flat := squash(text)
	for i, o := range originals {
		if so := squash(o); len(so) >= 3 && strings.Contains(flat, so) {
			problems = append(problems, fmt.Sprintf("original value #%d is in the extracted text", i))
		}
	}
	if strings.TrimSpace(text) != "" {
		problems = append(problems, "the PDF has extractable text")
	}
	problems = append(problems, checkInfo(ctx, path)...)
	if out, err := run(ctx, "pdfdetach", "-list", path); err != nil {
		return err
	} else if !strings.Contains(out, "0 embedded files") {
		problems = append(problems, "embedded files: "+strings.TrimSpace(out))
	}
	if out, err := run(ctx, "pdffonts", path); err != nil {
		return err
	} else if n := len(strings.Split(strings.TrimSpace(out), "\n")); n > 2 {
		problems = append(problems, "the PDF has fonts")
	}
	raw, err := qdf(ctx, path)
	if err != nil {
		return err
	}
	for _, key := range []string{"/Annots", "/AcroForm", "/JavaScript", "/JS", "/OpenAction", "/AA",
		"/EmbeddedFile", "/Metadata", "/Outlines", "/Names", "/Font", "/URI", "/Launch"} {
		if regexp.MustCompile(regexp.QuoteMeta(key) + `\b`).Match(raw) {
			problems = append(problems, "the PDF has "+key)
		}
	}
	flatRaw := squash(string(raw))
	for i, o := range originals {
		if so := squash(o); len(so) >= 6 && strings.Contains(flatRaw, so) {
			problems = append(problems, fmt.Sprintf("original value #%d is in the file's bytes", i))
		}
	}
	if len(problems) > 0 {
		return errors.New("redacted PDF check failed: " + strings.Join(problems, "; "))
	}
	return nil
}

// checkInfo: pdfinfo must show no document metadata at all.
func checkInfo(ctx context.Context, path string) []string {
	out, err := run(ctx, "pdfinfo", path)
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch strings.TrimSpace(k) {
		case "Title", "Subject", "Keywords", "Author", "Creator", "Producer", "CreationDate", "ModDate", "Custom Metadata":
			if v = strings.TrimSpace(v); v != "" && v != "no" {
				p = append(p, "pdfinfo shows "+strings.TrimSpace(k))
			}
		case "Metadata Stream", "Form", "JavaScript":
			if v = strings.TrimSpace(v); v != "no" && v != "none" {
				p = append(p, "pdfinfo shows "+strings.TrimSpace(k)+": "+v)
			}
		}
	}
	return p
}

// qdf returns the file with streams decompressed (qpdf --qdf), so keys
// and strings inside object streams are visible.
func qdf(ctx context.Context, path string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "pdfcheck")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "qdf.pdf")
	cmd := exec.CommandContext(ctx, "qpdf", "--qdf", "--object-streams=disable", path, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 3 { // 3 = warnings
			return nil, fmt.Errorf("qpdf: %v: %s", err, bytes.TrimSpace(b))
		}
	}
	return os.ReadFile(out)
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}

// squash lower-cases and keeps only letters and digits, so "123-45-6789"
// and "123 45 6789" compare equal.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
