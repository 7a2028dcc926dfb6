package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/store"
)

// TestFullStateDisk: with the state directory's filesystem full (a small
// tmpfs of the test's own), new work is refused with resource_exhausted
// naming the cause, nothing half-made is left and the daemon keeps
// serving; once space is back everything works and the audit chain,
// whose every record was written, verifies.
func TestFullStateDisk(t *testing.T) {
	e := getEnv(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700"); err != nil {
		t.Skipf("mount a tmpfs for the state directory: %v", err)
	}
	t.Cleanup(func() {
		store.UnsealAuditAnchor(filepath.Join(dir, "airlock.db"))
		unix.Unmount(dir, unix.MNT_DETACH)
	})
	own := e.withStateIn(t, dir)
	d := startDaemon(t, own)
	c := d.client(t, tenantA)
	s := createSandbox(t, c, 300, map[string]string{"disk": "full"})
	mustExec(t, s, "echo before > /job/a.txt")

	// Fill the filesystem.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for {
		if _, err := fill.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	fill.Close()
	if _, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 60}); !errors.Is(err, client.ErrResourceExhausted) {
		t.Errorf("create on a full state disk: %v, want resource_exhausted", err)
	}
	if _, err := s.Exec(ctx(t), "true"); !errors.Is(err, client.ErrResourceExhausted) {
		t.Errorf("exec on a full state disk: %v, want resource_exhausted", err)
	}
	if !d.running() {
		t.Fatal("the daemon died of a full state disk")
	}

	os.Remove(filepath.Join(dir, "fill"))
	if out := mustExec(t, s, "cat /job/a.txt"); out != "before\n" {
		t.Errorf("the sandbox after space came back: %q", out)
	}
	fresh := createSandbox(t, c, 60, nil)
	mustExec(t, fresh, "true")
	if out, stderr, code := e.cli(t, "audit", "verify", "--state-dir", dir); code != 0 {
		t.Errorf("audit verify after a full disk: %s %s", out, stderr)
	}
}
