package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// stateDir is a state directory whose sealed audit anchor is unsealed
// before it is removed.
func stateDir(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() { store.UnsealAuditAnchor(filepath.Join(dir, "airlock.db")) })
	return dir
}

// options opens a daemon over its own state and run directories.
func options(t *testing.T, stateDir string) daemon.Options {
	t.Helper()
	runDir, err := os.MkdirTemp("/run", "alk-daemon-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir) })
	return daemon.Options{StateDir: stateDir, Exclusive: true,
		Host: vm.Config{RunDir: runDir, Agent: vmtest.AgentBinary(t), Accel: os.Getenv("AIRLOCK_ACCEL"), Jail: "off"}}
}

// One process owns a state directory at a time; Close gives it back.
func TestOpenOwnsTheStateDirectory(t *testing.T) {
	vmtest.RequireVMs(t)
	ctx := context.Background()
	state := stateDir(t)
	o := options(t, state)
	d, err := daemon.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if d.Manager == nil || d.Store == nil || d.Templates == nil || d.Host == nil {
		t.Fatalf("opened %+v", d)
	}
	o2 := options(t, state)
	o2.LockHint = "use the daemon"
	if _, err := daemon.Open(ctx, o2); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "use the daemon") {
		t.Fatalf("second owner of %s: %v, want failed_precondition with the hint", state, err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d, err = daemon.Open(ctx, o2)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	d.Close(ctx)
}

// A store whose audit log lost records its anchor saw is refused, and
// nothing Open made is left open (the directory can be owned again).
func TestOpenRefusesATamperedAuditLog(t *testing.T) {
	vmtest.RequireVMs(t)
	ctx := context.Background()
	state := stateDir(t)
	st, err := store.Open(filepath.Join(state, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := st.AppendAudit(ctx, store.AuditRecord{Tenant: "acme", Event: "create", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	// Deleting the database leaves its anchor, which saw two records.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(state, "airlock.db"+suffix))
	}
	o := options(t, state)
	if _, err := daemon.Open(ctx, o); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("open over a tampered log: %v, want failed_precondition", err)
	}
	store.UnsealAuditAnchor(filepath.Join(state, "airlock.db"))
	os.Remove(filepath.Join(state, "airlock.db.audit-anchor"))
	d, err := daemon.Open(ctx, o)
	if err != nil {
		t.Fatalf("a refused Open left something behind: %v", err)
	}
	d.Close(ctx)
}
