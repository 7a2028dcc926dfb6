package vm_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// TestForkMemory forks a restored VM, then forks the child (whose base is
// a fork's memfd, not a template's), and checks that each generation
// starts from exactly its parent's RAM at the fork: what the parent wrote
// before is there, what it wrote after is not, and the fork copied the
// written pages, not the whole of guest RAM.
func TestForkMemory(t *testing.T) {
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	shape, state := bakeByHand(t, nil)
	sh := func(v *avm.VM, script string) string {
		t.Helper()
		res, out, errOut := run(t, v, guest.ExecOptions{Shell: script})
		if res.ExitCode != 0 {
			t.Fatalf("%s: %q exited %d: %s%s", v.ID, script, res.ExitCode, out, errOut)
		}
		return out
	}
	fork := func(parent *avm.VM) (*avm.VM, avm.ForkMemoryStats) {
		t.Helper()
		began := time.Now()
		files, err := host.SnapshotForFork(ctx, parent, shape, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		snap := time.Since(began)
		defer files.Mem.Close()
		child := restoreForTest(t, files.ChildOptions(shape, avm.NewID("vm-")), files.State)
		t.Logf("fork %s -> %s: snapshot %s (base %d MiB, written %d MiB), child restored after %s",
			parent.ID, child.ID, snap, files.Stats.BaseBytes>>20, files.Stats.WrittenBytes>>20, time.Since(began))
		return child, files.Stats
	}

	opts := shape
	opts.MemoryPrivate = true
	parent := restoreForTest(t, opts, state)
	// 32 MiB the template never held, in guest RAM (/job is a tmpfs).
	sh(parent, "head -c 33554432 /dev/urandom > /job/blob && sha256sum /job/blob > /job/blob.sum")
	child, stats := fork(parent)
	if stats.WrittenBytes < 32<<20 || stats.WrittenBytes >= int64(shape.MemoryMiB)<<20 {
		t.Errorf("fork copied %d bytes the parent wrote; want at least its 32 MiB blob and less than all of RAM", stats.WrittenBytes)
	}
	sh(parent, "echo after > /job/after")
	sh(child, "sha256sum -c -s /job/blob.sum && test ! -e /job/after && echo gen2 > /job/gen")
	grandchild, _ := fork(child)
	if got := sh(grandchild, "sha256sum -c -s /job/blob.sum && cat /job/gen"); got != "gen2\n" {
		t.Errorf("grandchild reads %q, want its parent's gen2", got)
	}
	sh(child, "echo changed > /job/gen")
	if got := sh(grandchild, "cat /job/gen; test ! -e /job/after && echo none-after"); got != "gen2\nnone-after\n" {
		t.Errorf("grandchild sees %q after its parent wrote on", got)
	}
	sh(parent, "sha256sum -c -s /job/blob.sum && test -e /job/after")
}
