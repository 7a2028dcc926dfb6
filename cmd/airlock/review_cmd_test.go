package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// exportedPlaybook is a playbook as another system exports it: notes
// airlock documents, and a field of its own.
const exportedPlaybook = "name: exported\nnotes: from the firm's system\nexported_by: clm-tool\nclauses:\n" +
	"  a:\n    title: Term\n    description: how long\n    standard_text: This Agreement lasts thirty (30) days.\n"

func writeReviewInputs(t *testing.T) (pb, pdf, out string) {
	t.Helper()
	dir := t.TempDir()
	pb, pdf, out = filepath.Join(dir, "exported.yaml"), filepath.Join(dir, "contract.pdf"), filepath.Join(dir, "out")
	if err := os.WriteFile(pb, []byte(exportedPlaybook), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdf, []byte("%PDF-1.4\n%%EOF\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pb, pdf, out
}

// TestReviewStrictPlaybook: --strict refuses a field airlock does not
// know, as a usage error naming file, line and field, before anything
// runs.
func TestReviewStrictPlaybook(t *testing.T) {
	pb, pdf, out := writeReviewInputs(t)
	_, stderr, code := runCLI(t, nil, "review", "--strict", "--playbook", pb, "--out", out, pdf)
	if code != exitUsage || strings.Contains(stderr, "reports: ") {
		t.Fatalf("exit %d, stderr %q; want %d (the message goes to the process's stderr)", code, stderr, exitUsage)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); !os.IsNotExist(err) {
		t.Errorf("index.html written for a refused review (stat: %v)", err)
	}
}

// TestReviewRefusedWritesNoIndex: without --strict the unknown field is a
// warning; a batch refused before any document was tried (a daemon holds
// the state directory; on a machine without the VM binaries, setting up
// the host fails first, the same way) exits 125 and leaves no
// index.html, nor says "reports:".
func TestReviewRefusedWritesNoIndex(t *testing.T) {
	pb, pdf, out := writeReviewInputs(t)
	state, run := t.TempDir(), t.TempDir()
	lock, err := os.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil { // as a running daemon holds it
		t.Fatal(err)
	}
	env := map[string]string{"AIRLOCK_URL": "", "AIRLOCK_SOCKET": "", "AIRLOCK_API_KEY": ""}
	_, stderr, code := runCLI(t, env, "review", "--state-dir", state, "--run-dir", run, "--cache-dir", t.TempDir(),
		"--playbook", pb, "--out", out, pdf)
	if code != exitAirlock {
		t.Errorf("exit %d, stderr %q; want %d", code, stderr, exitAirlock)
	}
	if !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "exported.yaml:3: exported_by: unknown field, ignored") {
		t.Errorf("stderr %q, want a warning naming exported.yaml:3 exported_by", stderr)
	}
	if strings.Contains(stderr, "description") || strings.Contains(stderr, "notes") {
		t.Errorf("stderr %q warns about a documented field", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); !os.IsNotExist(err) {
		t.Errorf("index.html written although the batch never ran (stat: %v)", err)
	}
	if strings.Contains(stderr, "reports: ") {
		t.Errorf("stderr %q points at reports of a batch that never ran", stderr)
	}
}
