package sandbox_test

// Background processes, in -short, on local machines: start, follow,
// list, wait, kill, output bounds, limits, the sandbox's end, tenants and
// audit. internal/e2e covers the same over the API on real VMs.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

func startProc(t *testing.T, m *sandbox.Manager, id, cmd string) sandbox.ProcessInfo {
	t.Helper()
	p, err := m.StartProcess(context.Background(), lcTenant, id, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{Shell: cmd}})
	if err != nil {
		t.Fatalf("start %q: %v", cmd, err)
	}
	return p
}

// readUntil follows a stream of process pid until its output contains
// want, or the process ends.
func readUntil(t *testing.T, m *sandbox.Manager, id, pid, stream, want string) string {
	t.Helper()
	var got bytes.Buffer
	var off int64
	for !strings.Contains(got.String(), want) {
		out, err := m.ReadProcessOutput(context.Background(), lcTenant, id, pid, stream, off, 0, 10*time.Second)
		if err != nil {
			t.Fatalf("read %s of %s: %v", stream, pid, err)
		}
		got.Write(out.Data)
		off = out.NextOffset
		if out.EOF {
			break
		}
	}
	return got.String()
}

func waitProc(t *testing.T, m *sandbox.Manager, id, pid string) sandbox.ProcessInfo {
	t.Helper()
	p, err := m.WaitProcess(context.Background(), lcTenant, id, pid, time.Minute)
	if err != nil {
		t.Fatalf("wait %s: %v", pid, err)
	}
	return p
}

// A process runs while the caller does other things: its output can be
// read as it comes, it is listed, a wait that times out says so, and a
// kill ends its whole tree with the signal asked for.
func TestProcessFollowListKill(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	p := startProc(t, m, sb.ID, "echo hi; echo warn >&2; sleep 30 & echo $! > child.pid; wait")
	if p.ID != "p-1" || p.State != sandbox.ProcessRunning || p.Shell == "" || p.Cwd != "/" || p.ExitCode != nil {
		t.Fatalf("started: %+v", p)
	}
	if got := readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "hi\n"); got != "hi\n" {
		t.Fatalf("stdout %q", got)
	}
	if got := readUntil(t, m, sb.ID, p.ID, sandbox.StreamStderr, "warn\n"); got != "warn\n" {
		t.Fatalf("stderr %q", got)
	}
	list, err := m.Processes(context.Background(), lcTenant, sb.ID)
	if err != nil || len(list) != 1 || list[0].ID != p.ID || list[0].State != sandbox.ProcessRunning || list[0].StdoutBytes != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := m.WaitProcess(context.Background(), lcTenant, sb.ID, p.ID, 0); !errdefs.IsDeadlineExceeded(err) {
		t.Fatalf("wait on a running process: %v, want deadline_exceeded", err)
	}
	// A fork needs a quiet guest.
	if _, err := m.Fork(context.Background(), lcTenant, sb.ID, 1); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("fork with a running process: %v, want failed_precondition", err)
	}
	if _, err := m.KillProcess(context.Background(), lcTenant, sb.ID, p.ID, "STOP"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("kill with SIGSTOP: %v", err)
	}
	if _, err := m.KillProcess(context.Background(), lcTenant, sb.ID, p.ID, "TERM"); err != nil {
		t.Fatal(err)
	}
	end := waitProc(t, m, sb.ID, p.ID)
	if end.State != sandbox.ProcessKilled || end.Signal != "SIGTERM" || end.ExitCode == nil || *end.ExitCode != 128+int(syscall.SIGTERM) || end.EndedAt == nil {
		t.Fatalf("after kill: %+v", end)
	}
	// The tree went with it: the sleep the shell started left no process.
	// (The process's output pipes closed before it counted as ended, so the
	// sleep has exited: at most a zombie not yet reaped.)
	if out := lcSh(t, m, sb.ID, `st=$(ps -o stat= -p "$(cat child.pid)"); case "$st" in ""|Z*) ;; *) echo "$st";; esac`); out != "" {
		t.Fatalf("sleep survived its process's kill: %q", out)
	}
	if _, err := m.KillProcess(context.Background(), lcTenant, sb.ID, p.ID, "KILL"); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("kill of an ended process: %v", err)
	}
	if _, err := m.Fork(context.Background(), lcTenant, sb.ID, 1); err != nil {
		t.Fatalf("fork once processes ended: %v", err)
	}
}

// A process that exits on its own keeps its exit code and output, and a
// process past its timeout is killed.
func TestProcessExitAndTimeout(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	p, err := m.StartProcess(context.Background(), lcTenant, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{Argv: []string{"sh", "-c", "echo $JOB $X; exit 3"}, Env: []string{"X=y"}}})
	if err != nil {
		t.Fatal(err)
	}
	end := waitProc(t, m, sb.ID, p.ID)
	if end.State != sandbox.ProcessExited || *end.ExitCode != 3 || end.Signal != "" || end.StdoutBytes != 7 {
		t.Fatalf("exit: %+v", end)
	}
	out, err := m.ReadProcessOutput(context.Background(), lcTenant, sb.ID, p.ID, sandbox.StreamStdout, 0, 0, time.Minute)
	if err != nil || string(out.Data) != "test y\n" || !out.EOF || out.NextOffset != 7 || out.Dropped != 0 {
		t.Fatalf("output after exit: %+v %v", out, err)
	}
	// From the end: nothing, at once, even with a wait.
	out, err = m.ReadProcessOutput(context.Background(), lcTenant, sb.ID, p.ID, sandbox.StreamStdout, 7, 0, time.Minute)
	if err != nil || len(out.Data) != 0 || !out.EOF {
		t.Fatalf("read at the end: %+v %v", out, err)
	}
	for _, bad := range []struct {
		stream string
		off    int64
	}{{"stdout", 8}, {"stdout", -1}, {"both", 0}} {
		if _, err := m.ReadProcessOutput(context.Background(), lcTenant, sb.ID, p.ID, bad.stream, bad.off, 0, 0); !errdefs.IsInvalidArgument(err) {
			t.Errorf("read %s at %d: %v, want invalid_argument", bad.stream, bad.off, err)
		}
	}
	tp, err := m.StartProcess(context.Background(), lcTenant, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{Shell: "sleep 30", Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if end := waitProc(t, m, sb.ID, tp.ID); end.State != sandbox.ProcessKilled || !end.TimedOut || tp.ID != "p-2" {
		t.Fatalf("timed out: %+v", end)
	}
	if _, err := m.StartProcess(context.Background(), lcTenant, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{}}); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("start without a command: %v", err)
	}
	if _, err := m.Process(context.Background(), lcTenant, sb.ID, "p-99"); !errdefs.IsNotFound(err) {
		t.Fatalf("unknown process: %v", err)
	}
}

// Only the latest ProcessOutputKeep bytes of a stream are kept; a read
// from before them says how many were dropped.
func TestProcessOutputBound(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	const total = 3*sandbox.ProcessOutputKeep + 12345
	p := startProc(t, m, sb.ID, fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a; printf END", total-3))
	end := waitProc(t, m, sb.ID, p.ID)
	if end.StdoutBytes != total || *end.ExitCode != 0 {
		t.Fatalf("end: %+v", end)
	}
	out, err := m.ReadProcessOutput(context.Background(), lcTenant, sb.ID, p.ID, "stdout", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Offset != total-sandbox.ProcessOutputKeep || out.Dropped != out.Offset || len(out.Data) != sandbox.ProcessOutputKeep ||
		out.NextOffset != total || !out.EOF || !bytes.HasSuffix(out.Data, []byte("aaEND")) {
		t.Fatalf("read from 0: offset %d dropped %d len %d next %d eof %v", out.Offset, out.Dropped, len(out.Data), out.NextOffset, out.EOF)
	}
	// A small read near the end of what is kept.
	out, err = m.ReadProcessOutput(context.Background(), lcTenant, sb.ID, p.ID, "stdout", total-4, 2, 0)
	if err != nil || string(out.Data) != "aE" || out.Offset != total-4 || out.NextOffset != total-2 || out.EOF || out.Dropped != 0 {
		t.Fatalf("read of 2 at total-4: %+v %v", out, err)
	}
}

// A sandbox runs at most MaxRunningProcesses at once and keeps at most
// MaxProcessRecords records, forgetting the oldest ended ones first.
func TestProcessLimits(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	var running []string
	for range sandbox.MaxRunningProcesses {
		running = append(running, startProc(t, m, sb.ID, "sleep 60").ID)
	}
	if _, err := m.StartProcess(context.Background(), lcTenant, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{Shell: "true"}}); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("start past the limit: %v, want resource_exhausted", err)
	}
	if _, err := m.KillProcess(context.Background(), lcTenant, sb.ID, running[0], ""); err != nil {
		t.Fatal(err)
	}
	waitProc(t, m, sb.ID, running[0])
	// The place is free again; fill the records with ended processes.
	for range sandbox.MaxProcessRecords - sandbox.MaxRunningProcesses + 1 {
		waitProc(t, m, sb.ID, startProc(t, m, sb.ID, "true").ID)
	}
	list, err := m.Processes(context.Background(), lcTenant, sb.ID)
	if err != nil || len(list) != sandbox.MaxProcessRecords {
		t.Fatalf("%d records (%v), want %d", len(list), err, sandbox.MaxProcessRecords)
	}
	if list[0].ID != running[1] {
		t.Fatalf("oldest record %s, want %s: the killed p-1 was the oldest ended one", list[0].ID, running[1])
	}
	if _, err := m.Process(context.Background(), lcTenant, sb.ID, running[0]); !errdefs.IsNotFound(err) {
		t.Fatalf("forgotten record: %v", err)
	}
}

// Processes end with their sandbox and their records go with it; another
// tenant sees none of them; the audit log has a start and an end of each,
// with ids and never the command or its output.
func TestProcessSandboxEndTenantsAudit(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	const marker = "zq-secret-marker"
	p := startProc(t, m, sb.ID, "echo "+marker+"; sleep 60")
	readUntil(t, m, sb.ID, p.ID, "stdout", marker)
	ctx := context.Background()
	other := "other-tenant"
	for name, err := range map[string]error{
		"start": func() error {
			_, err := m.StartProcess(ctx, other, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{Shell: "true"}})
			return err
		}(),
		"list": func() error { _, err := m.Processes(ctx, other, sb.ID); return err }(),
		"get":  func() error { _, err := m.Process(ctx, other, sb.ID, p.ID); return err }(),
		"wait": func() error { _, err := m.WaitProcess(ctx, other, sb.ID, p.ID, 0); return err }(),
		"read": func() error { _, err := m.ReadProcessOutput(ctx, other, sb.ID, p.ID, "stdout", 0, 0, 0); return err }(),
		"kill": func() error { _, err := m.KillProcess(ctx, other, sb.ID, p.ID, ""); return err }(),
	} {
		if !errdefs.IsNotFound(err) {
			t.Errorf("%s as another tenant: %v, want not_found", name, err)
		}
	}
	if err := m.Kill(ctx, lcTenant, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Processes(ctx, lcTenant, sb.ID); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("list of a killed sandbox: %v, want failed_precondition", err)
	}
	ends := e.auditSoon(t, sb.ID, store.EventProcessEnd, 1)
	starts := e.audit(t, sb.ID, store.EventProcessStart)
	if len(starts) != 1 || len(ends) != 1 || starts[0].Detail["process"] != p.ID || ends[0].Detail["process"] != p.ID {
		t.Fatalf("audit: starts %+v ends %+v", starts, ends)
	}
	if ends[0].Detail["state"] != sandbox.ProcessFailed || ends[0].Outcome != "failed_precondition" || ends[0].Bytes != int64(len(marker)+1) {
		t.Fatalf("end record of a process its sandbox's kill ended: %+v", ends[0])
	}
	for _, r := range append(starts, ends...) {
		b, _ := json.Marshal(r)
		if bytes.Contains(b, []byte(marker)) || bytes.Contains(b, []byte("sleep")) {
			t.Fatalf("audit record holds the command or its output: %s", b)
		}
	}
}
