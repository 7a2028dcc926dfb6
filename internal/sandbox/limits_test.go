package sandbox_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// TestJobsCannotStarveTheGuest: a fork bomb whose exec returns at once is
// capped by the guest's job pids limit and ended at the exec's deadline; a
// memory hog is OOM-killed inside the job cgroup, not the agent; after
// each the sandbox still answers, and a bystander never noticed.
func TestJobsCannotStarveTheGuest(t *testing.T) {
	m, _ := newManager(t, sandbox.Config{})
	ctx := vmtest.Context(t)
	a := create(t, m, "acme", nil)
	b := create(t, m, "acme", nil)

	limit, _ := strconv.Atoi(strings.TrimSpace(sh(t, m, "acme", a.ID, "cat /sys/fs/cgroup/jobs/pids.max")))
	threads, _ := strconv.Atoi(strings.TrimSpace(sh(t, m, "acme", a.ID, "cat /proc/sys/kernel/threads-max")))
	if limit <= 0 || limit > threads/2 {
		t.Errorf("jobs pids.max = %d with threads-max %d: want a bound that leaves the agent threads", limit, threads)
	}
	var out, errb bytes.Buffer
	res, err := m.Exec(ctx, "acme", a.ID, guest.ExecOptions{Shell: "f(){ f|f& }; f", Timeout: 3 * time.Second}, &out, &errb)
	if err != nil {
		t.Fatalf("fork bomb: %v", err)
	}
	t.Logf("fork bomb exec returned after %s (exit %d)", res.Duration, res.ExitCode)
	// Everything it started ends at its deadline; the agent keeps
	// answering meanwhile.
	deadline := time.Now().Add(60 * time.Second)
	var procs int
	for time.Now().Before(deadline) {
		var o bytes.Buffer
		if _, err := m.Exec(ctx, "acme", a.ID, guest.ExecOptions{Shell: "cat /sys/fs/cgroup/jobs/pids.current", Timeout: time.Minute}, &o, nil); err != nil {
			con, _ := os.ReadFile(filepath.Join(vmtest.Host(t).RunDir, a.ID, "console.log"))
			info, _ := m.Get(ctx, "acme", a.ID)
			t.Fatalf("exec after the fork bomb: %v (sandbox %s)\nconsole:\n%s", err, info.State, tail(con, 3000))
		}
		procs, _ = strconv.Atoi(strings.TrimSpace(o.String()))
		if procs < 5 { // this exec's own
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if procs >= 5 {
		t.Errorf("%d job processes in the guest a minute after the fork bomb's 3 s deadline", procs)
	}

	out.Reset()
	res, err = m.Exec(ctx, "acme", a.ID, guest.ExecOptions{Shell: "a=x; while :; do a=$a$a; done; echo survived",
		Timeout: 2 * time.Minute}, &out, &errb)
	if err != nil {
		t.Fatalf("memory hog: %v", err)
	}
	if strings.Contains(out.String(), "survived") || res.ExitCode == 0 {
		t.Errorf("memory hog: exit %d, %q; want it killed", res.ExitCode, out.String())
	}
	if got := sh(t, m, "acme", a.ID, "echo alive"); got != "alive\n" {
		t.Errorf("after the memory hog: %q", got)
	}
	// A disk fill: the sandbox's disk is a tmpfs in its own memory, full
	// before the job's memory limit; the job gets ENOSPC.
	out.Reset()
	res, err = m.Exec(ctx, "acme", a.ID, guest.ExecOptions{Shell: "dd if=/dev/zero of=/job/fill bs=1M 2>&1; echo dd=$?",
		Timeout: 2 * time.Minute}, &out, &errb)
	if err != nil || !strings.Contains(out.String(), "No space left") {
		t.Errorf("disk fill: %v, %q; want ENOSPC", err, out.String())
	}
	if got := sh(t, m, "acme", a.ID, "rm -f /job/fill; echo alive"); got != "alive\n" {
		t.Errorf("after the disk fill: %q", got)
	}
	if got := sh(t, m, "acme", b.ID, "echo bystander"); got != "bystander\n" {
		t.Errorf("bystander: %q", got)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestFilesRefuseSpecialFiles: reading a FIFO nobody writes, a device, or a
// procfs file through the files API is a clear invalid_argument at once,
// never a hang or an internal error; regular files still read.
func TestFilesRefuseSpecialFiles(t *testing.T) {
	m, _ := newManager(t, sandbox.Config{})
	ctx := vmtest.Context(t)
	a := create(t, m, "acme", nil)
	sh(t, m, "acme", a.ID, "mkfifo /job/fifo && echo hello > /job/plain")
	for _, p := range []string{"/job/fifo", "/dev/zero", "/proc/self/mem", "/proc/cpuinfo", "/sys/kernel/uevent_seqnum"} {
		var out bytes.Buffer
		_, err := m.ReadFile(ctx, "acme", a.ID, p, &out, 1<<20)
		if !errdefs.IsInvalidArgument(err) {
			t.Errorf("read %s: %v, want invalid_argument", p, err)
		}
	}
	var out bytes.Buffer
	if _, err := m.ReadFile(ctx, "acme", a.ID, "/job/plain", &out, 1<<20); err != nil || out.String() != "hello\n" {
		t.Errorf("read /job/plain: %q, %v", out.String(), err)
	}
}

// TestSizeCaps: a daemon that caps guest memory or vCPUs refuses to create
// sandboxes of a larger template, before anything is restored.
func TestSizeCaps(t *testing.T) {
	for _, cfg := range []sandbox.Config{{MaxMemoryMiB: 64}, {MaxVCPUs: 1, MaxMemoryMiB: 64 << 10}} {
		m, _ := newManager(t, cfg)
		_, err := m.Create(vmtest.Context(t), sandbox.CreateRequest{Tenant: "acme", Template: vmtest.TemplateName})
		if cfg.MaxMemoryMiB == 64 && (!errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "maximum")) {
			t.Errorf("create over a 64 MiB cap: %v, want failed_precondition naming the maximum", err)
		}
		if cfg.MaxVCPUs == 1 && err != nil {
			t.Errorf("create within the caps: %v", err)
		}
	}
}
