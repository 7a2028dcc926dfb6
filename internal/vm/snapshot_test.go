package vm_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// TestSnapshotRestore bakes a tiny snapshot by hand and restores clones of
// it: the mechanics templates and forks are built on.
func TestSnapshotRestore(t *testing.T) {
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	shape, state := bakeByHand(t, func(base *avm.VM) {
		if _, err := base.Agent.WriteFile(ctx, "/etc/baked", strings.NewReader("in the template"), 0, false); err != nil {
			t.Fatal(err)
		}
	})
	memSum := sum(t, shape.MemoryFile)

	clone := func() *avm.VM {
		t.Helper()
		opts := shape
		opts.MemoryPrivate = true
		start := time.Now()
		p, err := host.StartPending(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		v, err := p.RestorePrepared(ctx, state, true, avm.NewID("sbx-"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("clone %s: process start %s, restore+prepare %s", v.ID, started.Sub(start), time.Since(started))
		t.Cleanup(func() { v.Destroy(ctx) })
		return v
	}
	a, b := clone(), clone()
	for _, v := range []*avm.VM{a, b} {
		var got bytes.Buffer
		if _, err := v.Agent.ReadFile(ctx, "/etc/baked", &got, 0); err != nil || got.String() != "in the template" {
			t.Fatalf("clone %s: baked file = %q, %v", v.ID, got.String(), err)
		}
	}
	if _, err := a.Agent.WriteFile(ctx, "/job/a-only", strings.NewReader("secret of a"), 0, true); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if res, err := b.Agent.Exec(ctx, guest.ExecOptions{Shell: "test -e /job/a-only && echo LEAK || echo clean"}, &out, nil); err != nil || res.ExitCode != 0 || out.String() != "clean\n" {
		t.Fatalf("clone b sees clone a's write: %q %v", out.String(), err)
	}
	if after := sum(t, shape.MemoryFile); after != memSum {
		t.Fatal("template memory file changed while clones ran")
	}
}

// restoreForTest restores a VM shaped opts from state, destroyed when the
// test ends.
func restoreForTest(t *testing.T, opts avm.BootOptions, state string) *avm.VM {
	t.Helper()
	ctx := vmtest.Context(t)
	p, err := vmtest.Host(t).StartPending(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.RestorePrepared(ctx, state, true, avm.NewID("sbx-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Destroy(ctx) })
	return v
}

func sum(t *testing.T, path string) string {
	t.Helper()
	s, err := avm.ImageSum(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bakeByHand cold-boots the minimal root with RAM in a shared file, runs
// prepare on it, and saves it like a template: the shape clones must use
// and the device state to load.
func bakeByHand(t *testing.T, prepare func(*avm.VM)) (avm.BootOptions, string) {
	t.Helper()
	return bakeShaped(t, avm.BootOptions{MemoryMiB: 256}, prepare)
}

// bakeShaped is bakeByHand for a machine of the given shape (its RAM goes
// to a file of the test's own).
func bakeShaped(t *testing.T, shape avm.BootOptions, prepare func(*avm.VM)) (avm.BootOptions, string) {
	t.Helper()
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	dir := t.TempDir()
	shape.MemoryFile = filepath.Join(dir, "mem")
	base, err := host.Boot(ctx, shape)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(base)
	}
	state := filepath.Join(dir, "state")
	t0 := time.Now()
	if err := base.SaveTemplate(ctx, state); err != nil {
		t.Fatal(err)
	}
	t.Logf("save template %s", time.Since(t0))
	if err := base.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	return shape, state
}

// TestSMPClonePrewarm: on a guest with a spare vCPU the agent runs `true`
// at every session start, to translate the exec path before the host's
// first exec (see the agent's prewarm). Baking (whose Quiesce must not
// save one in flight) and restoring such a guest work, the clone's first
// exec races the prewarm and is unaffected, and the prewarm leaves no
// process or exec cgroup behind.
func TestSMPClonePrewarm(t *testing.T) {
	shape, state := bakeShaped(t, avm.BootOptions{MemoryMiB: 256, VCPUs: 2}, nil)
	opts := shape
	opts.MemoryPrivate = true
	v := restoreForTest(t, opts, state)
	res, out, errOut := run(t, v, guest.ExecOptions{Shell: "read -r cpus < /sys/devices/system/cpu/online; echo $cpus"})
	if res.ExitCode != 0 || out != "0-1\n" {
		t.Fatalf("first exec: exit %d, stdout %q, stderr %q; want the clone's two vCPUs", res.ExitCode, out, errOut)
	}
	// What else runs in the guest: exec cgroups other than this command's
	// own, and `true` processes. The prewarm ends within milliseconds; the
	// loop only bounds a slow host.
	const census = `n=0; for d in /sys/fs/cgroup/jobs/exec-*; do [ -d "$d" ] && n=$((n+1)); done
t=0; for c in /proc/[0-9]*/comm; do read -r x < "$c" 2>/dev/null && [ "$x" = true ] && t=$((t+1)); done
echo "$((n-1)) $t"`
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, out, errOut := run(t, v, guest.ExecOptions{Shell: census})
		if res.ExitCode != 0 {
			t.Fatalf("census: exit %d, stderr %q", res.ExitCode, errOut)
		}
		if out == "0 0\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("other exec cgroups and `true` processes left in the clone: %q, want \"0 0\"", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
