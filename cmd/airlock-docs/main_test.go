package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not on PATH", n)
		}
	}
}

func contractPDF(t *testing.T, dir string) string {
	t.Helper()
	f := testdocs.Flow{
		Header: "Contoso — Statement of Work",
		Footer: "Page {page} of {pages}",
		Blocks: []testdocs.Block{
			{Kind: testdocs.Title, Text: "Statement of Work"},
			{Text: "The Supplier shall migrate the Customer's archive to the new platform by 30 June, with reasonable skill and care."},
		},
	}
	var b bytes.Buffer
	if err := testdocs.WriteFlowPDF(&b, f, testdocs.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sow.pdf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readEnvelope(t *testing.T, path string) docs.Envelope {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env docs.Envelope
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestRunUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, exitUsage},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"extract without --in", []string{"extract", "--out", filepath.Join(dir, "r.json")}, exitUsage},
		{"unknown flag", []string{"extract", "--in", "x.pdf", "--bogus"}, exitUsage},
		{"bad timeout", []string{"extract", "--in", "x.pdf", "--timeout", "-1s"}, exitUsage},
		{"stray argument", []string{"extract", "--in", "x.pdf", "extra"}, exitUsage},
		{"help", []string{"help"}, exitResult},
		{"command help", []string{"extract", "-h"}, exitResult},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := run(context.Background(), tc.args, &bytes.Buffer{}, &stderr); got != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, tc.want, stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a usage error wrote a result")
	}
}

func TestRunExtract(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	dir := t.TempDir()
	pdf := contractPDF(t, dir)
	notPDF := filepath.Join(dir, "page.pdf")
	if err := os.WriteFile(notPDF, testdocs.NotPDF(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantExit int
		wantCode string // "" for ok
	}{
		{"text pdf", []string{"--in", pdf}, exitResult, ""},
		{"not a pdf", []string{"--in", notPDF}, exitResult, docs.CodeUnreadable},
		{"missing file", []string{"--in", filepath.Join(dir, "nope.pdf")}, exitResult, docs.CodeInternal},
		{"max pages", []string{"--in", pdf, "--max-pages", "0"}, exitResult, ""},
		{"max bytes", []string{"--in", pdf, "--max-bytes", "100"}, exitResult, docs.CodeTooLarge},
		{"deadline", []string{"--in", pdf, "--timeout", "1ns"}, exitResult, docs.CodeTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out", "result.json")
			var stderr bytes.Buffer
			args := append([]string{"extract", "--out", out}, tc.args...)
			if got := run(context.Background(), args, &bytes.Buffer{}, &stderr); got != tc.wantExit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, tc.wantExit, stderr.String())
			}
			env := readEnvelope(t, out)
			if env.Version != docs.EnvelopeVersion || env.Job != "extract" || env.OK != (tc.wantCode == "") {
				t.Errorf("envelope %+v", env)
			}
			if tc.wantCode != "" && (env.Error == nil || env.Error.Code != tc.wantCode || string(env.Result) != "null") {
				t.Errorf("error %+v result %s, want code %s and no result", env.Error, env.Result, tc.wantCode)
			}
			if _, ok := env.TimingsMS["total"]; !ok {
				t.Errorf("timings %v", env.TimingsMS)
			}
		})
	}
}

func TestRunCannotWriteResult(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The result's directory would have to be created inside a file.
	args := []string{"extract", "--in", contractPDF(t, dir), "--out", filepath.Join(blocker, "out", "result.json")}
	if got := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); got != exitNoResult {
		t.Errorf("exit %d, want %d", got, exitNoResult)
	}
}

func TestRunRecoversFromAPanickingJob(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := command{name: "boom", common: true, run: func(context.Context, *invocation) *docs.Envelope { panic("bug") }}
	inv, err := parseFlags(cmd, []string{"--in", "x", "--out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := execute(context.Background(), cmd, inv, &bytes.Buffer{}); got != exitResult {
		t.Fatalf("exit %d", got)
	}
	if env := readEnvelope(t, out); env.OK || env.Error == nil || env.Error.Code != docs.CodeInternal || env.Job != "boom" {
		t.Errorf("envelope %+v", env)
	}
}

// binary builds the static binary as the template does.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	needTools(t, "go")
	bin := filepath.Join(t.TempDir(), "airlock-docs")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version=test-1", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryExtract builds the static binary and runs extract on a
// generated PDF, as the guest does.
func TestBinaryExtract(t *testing.T) {
	needTools(t, "pdfinfo", "pdftotext")
	bin := binary(t)
	if f, err := elf.Open(bin); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("binary is dynamically linked")
			}
		}
		f.Close()
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out", "result.json")
	cmd := exec.Command(bin, "extract", "--in", contractPDF(t, dir), "--out", out, "--timeout", "1m")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("extract: %v\n%s", err, b)
	}
	env := readEnvelope(t, out)
	if !env.OK || env.Pages != 1 || env.OCRPages != 0 || env.TimingsMS["extract"] < 0 {
		t.Fatalf("envelope %+v", env)
	}
	var doc extract.Document
	if err := json.Unmarshal(env.Result, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Pages) != 1 || !strings.Contains(doc.Pages[0].Text(), "migrate the Customer's archive") || doc.Pages[0].Method != extract.MethodText {
		t.Errorf("result %+v", doc)
	}
	version, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(version), `"version":"test-1"`) {
		t.Errorf("version: %s %v", version, err)
	}
}
