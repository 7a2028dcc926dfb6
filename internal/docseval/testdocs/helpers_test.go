package testdocs

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// needTool skips t when a poppler tool is not installed.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not on PATH", name)
	}
}

// writeTemp writes b to a file named name in a fresh temp dir.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs a tool and returns its stdout; stderr goes into the error.
func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &toolError{err: err, stderr: errb.String()}
	}
	return out.String(), nil
}

type toolError struct {
	err    error
	stderr string
}

func (e *toolError) Error() string { return e.err.Error() + ": " + e.stderr }

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := run(t, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

func flowPDF(t *testing.T, f Flow, o PDFOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFlowPDF(&b, f, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fixedPDF(t *testing.T, f Fixed) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFixedPDF(&b, f, PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
