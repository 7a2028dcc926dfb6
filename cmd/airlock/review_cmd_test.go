package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/jobs"
)

func TestSetFactsFlags(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "parties.csv")
	if err := os.WriteFile(list, []byte("adverse,Globex Industries Inc.,Globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("partner,Globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	job := &jobs.Review{}
	if err := setFactsFlags(job, list, "2026-12-01", 45, filepath.Join(dir, "o.csv"), filepath.Join(dir, "o.ics")); err != nil {
		t.Fatal(err)
	}
	if job.Conflicts == nil || len(job.Conflicts.Entries) != 1 || job.AsOf.Format("2006-01-02") != "2026-12-01" ||
		job.DueWithinDays != 45 || !job.Track {
		t.Errorf("job %+v", job)
	}
	for name, args := range map[string][5]any{
		"parties missing":    {filepath.Join(dir, "none.csv"), "", 30, "", ""},
		"parties bad kind":   {bad, "", 30, "", ""},
		"as-of not a date":   {"", "12/01/2026", 30, "", ""},
		"due-within too big": {"", "2026-12-01", 100000, "", ""},
		"csv unwritable":     {"", "", 30, filepath.Join(dir, "no", "o.csv"), ""},
		"ics unwritable":     {"", "", 30, "", filepath.Join(dir, "no", "o.ics")},
	} {
		err := setFactsFlags(&jobs.Review{}, args[0].(string), args[1].(string), args[2].(int), args[3].(string), args[4].(string))
		var ee exitError
		if !errors.As(err, &ee) || ee.code != exitUsageCode {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

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

func TestSetPublish(t *testing.T) {
	job := &jobs.Review{Metadata: map[string]string{"matter": "M-1"}}
	if err := setPublish(job, "http://dav.internal/reports", "unix:///run/airlock.sock"); err != nil {
		t.Fatal(err)
	}
	if p := job.Publish; p == nil || p.Target.Host != "dav.internal" || p.Target.Path != "/reports/" ||
		p.Template != jobs.ReviewTemplate || p.Metadata["matter"] != "M-1" {
		t.Errorf("publisher %+v", job.Publish)
	}
	for name, args := range map[string][2]string{
		"no daemon":   {"http://dav.internal/reports/", ""},
		"https":       {"https://dav.internal/reports/", "unix:///s"},
		"user info":   {"http://u:p@dav.internal/reports/", "unix:///s"},
		"ip address":  {"http://192.0.2.1/reports/", "unix:///s"},
		"not a url":   {"dav.internal/reports/", "unix:///s"},
		"with a port": {"http://dav.internal:8443/", "unix:///s"},
	} {
		err := setPublish(&jobs.Review{}, args[0], args[1])
		var ee exitError
		if !errors.As(err, &ee) || ee.code != exitUsageCode {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}
