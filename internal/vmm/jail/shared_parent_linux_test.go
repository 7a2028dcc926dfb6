//go:build linux

package jail

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// newTestJailer makes a real jailer (real cgroups) for an instance unique
// to this test process, removed when the test ends.
func newTestJailer(t *testing.T, instance string) *Jailer {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes real cgroups")
	}
	j, err := New(Config{Helper: "/bin/true", Instance: instance})
	if err != nil {
		t.Skipf("no jail on this host: %v", err)
	}
	t.Cleanup(func() { RemoveInstance(instance) })
	return j
}

// TestShortLivedProcessKeepsTheDaemonsParent: a daemon and a short-lived
// command (`template build`, `run`) on the same run directory share one
// cgroup parent. The command's exit used to remove it when it was empty,
// and every later create of the live daemon then failed with ENOENT.
func TestShortLivedProcessKeepsTheDaemonsParent(t *testing.T) {
	instance := fmt.Sprintf("test-shared-%d", os.Getpid())
	daemon := newTestJailer(t, instance)
	oneShot := newTestJailer(t, instance)
	if err := oneShot.Close(); err != nil {
		t.Fatal(err)
	}
	dirs, err := daemon.cg.create("sbx-after-close", Limits{MemoryBytes: 64 << 20, CPUs: 1, Pids: 16})
	if err != nil {
		t.Fatalf("the daemon's create after another process closed its jailer: %v", err)
	}
	if err := daemon.cg.remove(dirs); err != nil {
		t.Fatal(err)
	}
}

// TestMissingParentIsMadeAgain: a parent removed from outside (an older
// airlock, an operator) is made again by the next create instead of
// failing every create until the daemon restarts.
func TestMissingParentIsMadeAgain(t *testing.T) {
	instance := fmt.Sprintf("test-remade-%d", os.Getpid())
	j := newTestJailer(t, instance)
	for _, h := range j.cg.hs {
		if err := syscall.Rmdir(j.cg.parent(h)); err != nil {
			t.Fatalf("rmdir %s: %v", j.cg.parent(h), err)
		}
	}
	dirs, err := j.cg.create("sbx-remade", Limits{MemoryBytes: 64 << 20, CPUs: 1, Pids: 16})
	if err != nil {
		t.Fatalf("create with the parent gone: %v", err)
	}
	if err := j.cg.remove(dirs); err != nil {
		t.Fatal(err)
	}
}
