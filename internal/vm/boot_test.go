package vm_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

func run(t *testing.T, vm *avm.VM, opts guest.ExecOptions) (guest.ExecResult, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := vm.Agent.Exec(vmtest.Context(t), opts, &stdout, &stderr)
	if err != nil {
		t.Fatalf("exec %v %q: %v", opts.Argv, opts.Shell, err)
	}
	return res, stdout.String(), stderr.String()
}

func TestBootRunsGuestKernel(t *testing.T) {
	vm := vmtest.Boot(t, avm.BootOptions{})
	host := vmtest.Host(t)
	res, out, _ := run(t, vm, guest.ExecOptions{Argv: []string{"uname", "-r"}})
	got := strings.TrimSpace(out)
	if res.ExitCode != 0 || got != host.Kernel.Release {
		t.Fatalf("uname -r in guest = %q (exit %d), want guest kernel %q", got, res.ExitCode, host.Kernel.Release)
	}
	var uts syscall.Utsname
	syscall.Uname(&uts)
	hostRelease := strings.TrimRight(string(bytesOf(uts.Release[:])), "\x00")
	if got == hostRelease {
		t.Fatalf("guest reports the host's kernel %q: not a VM", got)
	}
	h, err := vm.Agent.Health(vmtest.Context(t))
	if err != nil || h.KernelRelease != host.Kernel.Release || h.SandboxId != vm.ID {
		t.Fatalf("health = %+v, %v", h, err)
	}
	// Under emulation a busy host delays timer interrupts; a guest that
	// judged its TSC by jiffies fell back to jiffies and its clock ran
	// slow, stretching every limit measured in the guest.
	if host.Accel.Accel == vmm.AccelTCG {
		_, cs, _ := run(t, vm, guest.ExecOptions{Argv: []string{"cat", "/sys/devices/system/clocksource/clocksource0/current_clocksource"}})
		if got := strings.TrimSpace(cs); got != "tsc" {
			t.Fatalf("guest clocksource under TCG = %q, want tsc", got)
		}
	}
}

func bytesOf(a []int8) []byte {
	b := make([]byte, len(a))
	for i, c := range a {
		b[i] = byte(c)
	}
	return b
}

func TestExec(t *testing.T) {
	vm := vmtest.Boot(t, avm.BootOptions{})
	for _, tc := range []struct {
		name       string
		opts       guest.ExecOptions
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"exit zero", guest.ExecOptions{Argv: []string{"true"}}, 0, "", ""},
		{"exit code", guest.ExecOptions{Shell: "exit 42"}, 42, "", ""},
		{"stdout vs stderr", guest.ExecOptions{Shell: "echo out; echo err >&2"}, 0, "out\n", "err\n"},
		{"stdin", guest.ExecOptions{Argv: []string{"cat"}, Stdin: strings.NewReader("from the host\n")}, 0, "from the host\n", ""},
		{"env", guest.ExecOptions{Shell: `echo "$MATTER"`, Env: []string{"MATTER=m-17"}}, 0, "m-17\n", ""},
		{"cwd", guest.ExecOptions{Argv: []string{"pwd"}, Cwd: "/tmp"}, 0, "/tmp\n", ""},
		{"command not found", guest.ExecOptions{Argv: []string{"no-such-tool"}}, 127, "", "airlock: no-such-tool: command not found\n"},
		{"path not found", guest.ExecOptions{Argv: []string{"/nonexistent"}}, 127, "", "airlock: /nonexistent: No such file or directory\n"},
		{"killed by signal", guest.ExecOptions{Shell: "kill -TERM $$"}, 128 + 15, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out, errOut := run(t, vm, tc.opts)
			if res.ExitCode != tc.wantCode || out != tc.wantStdout || errOut != tc.wantStderr {
				t.Fatalf("got exit %d stdout %q stderr %q; want %d %q %q", res.ExitCode, out, errOut, tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
			if res.TimedOut {
				t.Fatal("flagged as timed out")
			}
		})
	}

	t.Run("script without its interpreter", func(t *testing.T) {
		if res, _, errOut := run(t, vm, guest.ExecOptions{Shell: "printf '#!/no/such/sh\\necho hi\\n' > /tmp/s && chmod +x /tmp/s"}); res.ExitCode != 0 {
			t.Fatalf("write the script: %d %s", res.ExitCode, errOut)
		}
		res, _, errOut := run(t, vm, guest.ExecOptions{Argv: []string{"/tmp/s"}})
		if res.ExitCode != 126 || !strings.Contains(errOut, "interpreter /no/such/sh is not in this sandbox's template") {
			t.Fatalf("got exit %d stderr %q; want 126 naming the missing interpreter", res.ExitCode, errOut)
		}
	})

	t.Run("timeout kills the whole tree", func(t *testing.T) {
		// A child in the process group, and one that escapes it with setsid.
		res, _, _ := run(t, vm, guest.ExecOptions{
			Shell:   "sleep 300 & echo $! > /tmp/child; setsid sleep 301 & sleep 302",
			Timeout: 2 * time.Second,
		})
		if !res.TimedOut || res.ExitCode == 0 {
			t.Fatalf("result %+v: want timed out with a non-zero exit", res)
		}
		// Give the guest kernel a moment to finish tearing the tree down.
		time.Sleep(500 * time.Millisecond)
		_, out, _ := run(t, vm, guest.ExecOptions{Shell: "ps -o pid,args | grep 'sleep 30[0-2]' || true"})
		if strings.TrimSpace(out) != "" {
			t.Fatalf("processes outlived the timeout:\n%s", out)
		}
	})

	t.Run("output is capped and flagged", func(t *testing.T) {
		var stdout countWriter
		res, err := vm.Agent.Exec(vmtest.Context(t), guest.ExecOptions{Shell: "head -c 10000000 /dev/zero"}, &stdout, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if !res.StdoutTruncated || res.StdoutBytes != 10_000_000 || stdout.n >= 10_000_000 || stdout.n == 0 {
			t.Fatalf("result %+v, host received %d bytes: want truncated, 10000000 produced, fewer delivered", res, stdout.n)
		}
		res, err = vm.Agent.Exec(vmtest.Context(t), guest.ExecOptions{Shell: "head -c 1000 /dev/zero", MaxOutputBytes: 100}, &stdout, io.Discard)
		if err != nil || !res.StdoutTruncated || res.StdoutBytes != 1000 {
			t.Fatalf("explicit cap: %+v %v", res, err)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		ctx := vmtest.Context(t)
		for _, opts := range []guest.ExecOptions{
			{},                                  // nothing to run
			{Argv: []string{"ls"}, Shell: "ls"}, // both
			{Argv: []string{"ls"}, Cwd: "tmp"},  // relative cwd
			{Argv: []string{"ls"}, Env: []string{"NOEQUALS"}},
			{Argv: []string{"ls"}, Timeout: -time.Second},
		} {
			if _, err := vm.Agent.Exec(ctx, opts, nil, nil); !errdefs.IsInvalidArgument(err) {
				t.Errorf("%+v: got %v, want InvalidArgument", opts, err)
			}
		}
		// The agent is still serving after every refusal.
		if res, _, _ := run(t, vm, guest.ExecOptions{Argv: []string{"true"}}); res.ExitCode != 0 {
			t.Fatal("agent broken after bad requests")
		}
	})
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

func TestFiles(t *testing.T) {
	vm := vmtest.Boot(t, avm.BootOptions{})
	ctx := vmtest.Context(t)
	for _, size := range []int{0, 1, 50 << 20} {
		t.Run(fmt.Sprintf("round trip %d bytes", size), func(t *testing.T) {
			data := make([]byte, size)
			rand.Read(data)
			want := sha256.Sum256(data)
			path := fmt.Sprintf("/job/in/file-%d.bin", size)
			n, err := vm.Agent.WriteFile(ctx, path, bytes.NewReader(data), 0o600, true)
			if err != nil || n != int64(size) {
				t.Fatalf("write: %d, %v", n, err)
			}
			// The guest sees the same bytes.
			_, out, _ := run(t, vm, guest.ExecOptions{Argv: []string{"sha256sum", path}})
			if !strings.HasPrefix(out, fmt.Sprintf("%x", want)) {
				t.Fatalf("guest sha256 %q, want %x", out, want)
			}
			h := sha256.New()
			n, err = vm.Agent.ReadFile(ctx, path, h, 0)
			if err != nil || n != int64(size) || !bytes.Equal(h.Sum(nil), want[:]) {
				t.Fatalf("read back: %d bytes, %v, sha mismatch=%v", n, err, !bytes.Equal(h.Sum(nil), want[:]))
			}
			fi, err := vm.Agent.Stat(ctx, path)
			if err != nil || fi.Size != int64(size) || fi.Mode&0o777 != 0o600 {
				t.Fatalf("stat: %+v %v", fi, err)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		if _, err := vm.Agent.ReadFile(ctx, "/job/missing", io.Discard, 0); !errdefs.IsNotFound(err) {
			t.Errorf("read missing: %v, want NotFound", err)
		}
		if _, err := vm.Agent.Stat(ctx, "/nope"); !errdefs.IsNotFound(err) {
			t.Errorf("stat missing: %v, want NotFound", err)
		}
		for _, p := range []string{"job/x", "", "/job/../etc/passwd", "/job//x", "/job/x/", "/job/\x00x"} {
			if _, err := vm.Agent.WriteFile(ctx, p, strings.NewReader("x"), 0, true); !errdefs.IsInvalidArgument(err) {
				t.Errorf("write %q: %v, want InvalidArgument", p, err)
			}
			if _, err := vm.Agent.ReadFile(ctx, p, io.Discard, 0); !errdefs.IsInvalidArgument(err) {
				t.Errorf("read %q: %v, want InvalidArgument", p, err)
			}
		}
		if _, err := vm.Agent.ReadFile(ctx, "/dev/zero", io.Discard, 0); !errdefs.IsInvalidArgument(err) {
			t.Errorf("read /dev/zero: %v, want InvalidArgument", err)
		}
		if _, err := vm.Agent.WriteFile(ctx, "/no/such/dir/f", strings.NewReader("x"), 0, false); !errdefs.IsNotFound(err) {
			t.Errorf("write without parents: %v, want NotFound", err)
		}
		big := bytes.Repeat([]byte("a"), 2000)
		vm.Agent.WriteFile(ctx, "/job/big", bytes.NewReader(big), 0, true)
		if _, err := vm.Agent.ReadFile(ctx, "/job/big", io.Discard, 1000); errdefs.Class(err) != errdefs.ErrResourceExhausted {
			t.Errorf("read over limit: %v, want ResourceExhausted", err)
		}
	})
	t.Run("list mkdir remove", func(t *testing.T) {
		if err := vm.Agent.Mkdir(ctx, "/job/d/e", 0, true); err != nil {
			t.Fatal(err)
		}
		vm.Agent.WriteFile(ctx, "/job/d/e/f", strings.NewReader("x"), 0, false)
		ents, err := vm.Agent.List(ctx, "/job/d/e")
		if err != nil || len(ents) != 1 || ents[0].Name != "f" {
			t.Fatalf("list: %+v %v", ents, err)
		}
		if err := vm.Agent.Remove(ctx, "/job/d", false); errdefs.Class(err) != errdefs.ErrFailedPrecondition {
			t.Fatalf("non-recursive remove of a full dir: %v", err)
		}
		if err := vm.Agent.Remove(ctx, "/job/d", true); err != nil {
			t.Fatal(err)
		}
		if _, err := vm.Agent.Stat(ctx, "/job/d"); !errdefs.IsNotFound(err) {
			t.Fatalf("after remove: %v", err)
		}
	})
}

func TestDestroyLeavesNothing(t *testing.T) {
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	vm, err := host.Boot(ctx, avm.BootOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid, dir, sock := vm.Machine.PID(), vm.Machine.StateDir(), vm.Machine.AgentSocket()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("agent socket missing while running: %v", err)
	}
	if err := vm.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("QEMU pid %d still exists", pid)
	}
	for _, p := range []string{sock, dir} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	if out, _ := exec.Command("pgrep", "-f", dir).Output(); len(out) > 0 {
		t.Errorf("processes referring to %s remain: %s", dir, out)
	}
	if err := vm.Destroy(ctx); err != nil {
		t.Errorf("second destroy: %v", err)
	}
}

func TestDeadQEMUIsReported(t *testing.T) {
	vm := vmtest.Boot(t, avm.BootOptions{})
	if err := syscall.Kill(vm.Machine.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-vm.Machine.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("QEMU death not noticed")
	}
	if vm.Machine.ExitError() == nil {
		t.Fatal("no exit error for a QEMU that died")
	}
	start := time.Now()
	_, err := vm.Agent.Exec(vmtest.Context(t), guest.ExecOptions{Argv: []string{"true"}, Timeout: 5 * time.Second}, nil, nil)
	if err == nil {
		t.Fatal("exec on a dead VM succeeded")
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Fatalf("exec on a dead VM took %s to fail", d)
	}
}

func TestConcurrentVMsAreIsolated(t *testing.T) {
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	const n = 10
	vms := make([]*avm.VM, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range vms {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			vms[i], errs[i] = host.Boot(ctx, avm.BootOptions{MemoryMiB: 128, Timeout: 8 * time.Minute})
		}(i)
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, vm := range vms {
			if vm != nil {
				vm.Destroy(ctx)
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("vm %d: %v", i, err)
		}
	}
	for i, vm := range vms {
		if _, err := vm.Agent.WriteFile(ctx, "/job/owner", strings.NewReader(vm.ID), 0, true); err != nil {
			t.Fatalf("vm %d write: %v", i, err)
		}
	}
	for i, vm := range vms {
		var b bytes.Buffer
		if _, err := vm.Agent.ReadFile(ctx, "/job/owner", &b, 0); err != nil || b.String() != vm.ID {
			t.Fatalf("vm %d sees owner %q (%v), want its own id %s", i, b.String(), err, vm.ID)
		}
		ents, err := vm.Agent.List(ctx, "/job")
		if err != nil || len(ents) != 1 {
			t.Fatalf("vm %d /job has %d entries (%v), want only its own file", i, len(ents), err)
		}
	}
}
