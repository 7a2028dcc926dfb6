package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

type redactLine struct {
	File        string         `json:"file"`
	OK          bool           `json:"ok"`
	Error       *lineError     `json:"error"`
	Output      string         `json:"output"`
	Held        bool           `json:"held"`
	HeldAt      string         `json:"held_at"`
	HoldReasons []string       `json:"hold_reasons"`
	Verified    bool           `json:"verified"`
	Counts      map[string]int `json:"counts"`
	Findings    []struct {
		Type  string `json:"type"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	} `json:"findings"`
}

const redactLetter = "Dear Grace Kim,\nYour card 4111 1111 1111 1111 is on file; call +1 (415) 555-0134 or write to grace.kim@example.com.\n"

// TestRedactBatch redacts text, JSON, CSV and a scanned page through real
// pii-redact sandboxes, each output verified in a second sandbox: clean
// outputs are released under their own names, one carrying a canary the
// redactor cannot know is held (and fails the batch), hostile inputs get
// classified errors, and no held or failed document leaves anything in
// the release directory.
func TestRedactBatch(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "pii-redact")
	in, out := t.TempDir(), t.TempDir()
	held := out + ".held"
	t.Cleanup(func() { os.RemoveAll(held) })
	files := map[string][]byte{
		"letter.txt":   []byte(redactLetter),
		"record.json":  []byte(`{"customer": {"name": "Grace Kim", "email": "grace.kim@example.com", "card": 4111111111111111}}`),
		"people.csv":   []byte("\ufeffname,email,note\r\n\"Kim, Grace\",grace.kim@example.com,\"line one\r\nline two\"\r\n"),
		"canary.txt":   []byte("Operator note: Zebulon Quartermaine approved the transfer.\n"),
		"nested.json":  []byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000)),
		"bad-utf8.txt": []byte("Dear Grace Kim, \xff\xfe\xfd broken"),
		"huge.txt":     bytes.Repeat([]byte("a"), 50<<20),
	}
	fx, err := testdocs.LayoutFlow(testdocs.Flow{Blocks: []testdocs.Block{{Kind: testdocs.Paragraph, Text: redactLetter}}})
	if err != nil {
		t.Fatal(err)
	}
	var scan bytes.Buffer
	if err := testdocs.WriteScan(&scan, fx, testdocs.Scan{DPI: 200, Skew: 0.4, Noise: 0.02}, testdocs.ScanPNG); err != nil {
		t.Fatal(err)
	}
	files["scan.png"] = scan.Bytes()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(in, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	canaries := filepath.Join(t.TempDir(), "canaries.json")
	os.WriteFile(canaries, []byte(`["Zebulon Quartermaine"]`), 0o644)
	stdout, stderr, code := e.cli(t, "redact", "--json", "--out", out, "--canaries", canaries,
		"--state-dir", e.stateDir, "--run-dir", shortRunDir(t), "--timeout", "4m", in)
	if code != 1 || !strings.Contains(stderr, "CANARY LEAK") {
		t.Errorf("exit %d, want 1 with a canary leak reported; stderr:\n%s", code, stderr)
	}
	lines := map[string]redactLine{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l redactLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line: %v: %.300s", err, sc.Text())
		}
		lines[filepath.Base(l.File)] = l
	}
	if len(lines) != len(files) {
		t.Fatalf("%d lines for %d files:\n%s", len(lines), len(files), stdout)
	}
	for _, n := range []string{"letter.txt", "record.json", "people.csv"} {
		l := lines[n]
		if !l.OK || l.Held || !l.Verified || l.Output != filepath.Join(out, n) {
			t.Errorf("%s: %+v; want released and verified", n, l)
			continue
		}
		b, _ := os.ReadFile(l.Output)
		for _, pii := range []string{"Grace", "4111", "555-0134", "grace.kim@example.com"} {
			if bytes.Contains(b, []byte(pii)) {
				t.Errorf("released %s still contains %q:\n%s", n, pii, b)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "people.csv")); !bytes.HasPrefix(b, []byte("\ufeffname,email,note\r\n")) {
		t.Errorf("CSV lost its BOM or CRLF dialect: %q", b)
	}
	if l := lines["letter.txt"]; l.Counts["CREDIT_CARD"] != 1 || l.Counts["EMAIL"] != 1 || l.Counts["PHONE"] != 1 || l.Counts["PERSON"] != 1 {
		t.Errorf("letter counts %v", l.Counts)
	}
	if l := lines["canary.txt"]; !l.Held || l.Output != "" || !strings.Contains(strings.Join(l.HoldReasons, ";"), "canary_found") {
		t.Errorf("canary.txt: %+v; want held for its canary", l)
	}
	if _, err := os.Stat(filepath.Join(out, "canary.txt")); err == nil {
		t.Errorf("a held output was written where released outputs go")
	}
	for name, want := range map[string]string{"nested.json": "too_large", "bad-utf8.txt": "unreadable", "huge.txt": "too_large"} {
		if l := lines[name]; l.OK || l.Error == nil || l.Error.Code != want || l.Output != "" {
			t.Errorf("%s: %+v; want error %s and no output", name, l, want)
		}
	}
	if l := lines["scan.png"]; !l.OK || l.Counts["CREDIT_CARD"] != 1 {
		t.Errorf("scan.png: %+v; want the card found by OCR and boxed", l)
	}
	ents, _ := os.ReadDir(out)
	for _, en := range ents {
		if l := lines[en.Name()]; l.Held || !l.OK {
			t.Errorf("%s is in the release directory but was not released", en.Name())
		}
	}
}

// lineError is a job line's classified error; it prints its message so a
// failing assertion says what went wrong in the guest.
type lineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *lineError) String() string { return e.Code + ": " + e.Message }
