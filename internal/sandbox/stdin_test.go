package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// A process started with stdin open takes writes in order while it runs
// and sees its end at the close; every write is audited by size; writes
// to a process without stdin, after the close or after its end are
// refused as failed_precondition.
func TestProcessStdin(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	ctx := context.Background()
	p, err := m.StartProcess(ctx, lcTenant, sb.ID, sandbox.ProcessOptions{OpenStdin: true,
		ExecOptions: guest.ExecOptions{Shell: `while read l; do echo "got:$l"; done; echo eof`, Stdin: strings.NewReader("first\n")}})
	if err != nil || !p.StdinOpen {
		t.Fatalf("start = %+v, %v", p, err)
	}
	readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "got:first")
	if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, []byte("second\n"), false); err != nil {
		t.Fatal(err)
	}
	readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "got:second")
	info, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, []byte("third\n"), true)
	if err != nil || info.StdinOpen {
		t.Fatalf("write and close = %+v, %v", info, err)
	}
	if got := readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "eof"); !strings.Contains(got, "got:third\neof") {
		t.Errorf("output %q", got)
	}
	if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, []byte("late\n"), false); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("write after close = %v, want failed_precondition", err)
	}
	if pi := waitProc(t, m, sb.ID, p.ID); pi.ExitCode == nil || *pi.ExitCode != 0 {
		t.Errorf("ended %+v", pi)
	}
	plain := startProc(t, m, sb.ID, "cat")
	if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, plain.ID, []byte("x"), false); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("write to a process without stdin = %v, want failed_precondition", err)
	}
	if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, make([]byte, sandbox.MaxStdinWrite+1), false); !errdefs.IsInvalidArgument(err) {
		t.Errorf("oversized write = %v, want invalid_argument", err)
	}
	if _, err := m.WriteProcessStdin(ctx, "other", sb.ID, p.ID, []byte("x"), false); !errdefs.IsNotFound(err) {
		t.Errorf("another tenant's write = %v, want not_found", err)
	}
	recs := e.auditSoon(t, sb.ID, store.EventProcessStdin, 4)
	if len(recs) < 4 || recs[0].Bytes != 7 || recs[1].Detail["closed"] != "true" || recs[1].Bytes != 6 ||
		recs[0].Detail["process"] != p.ID || recs[2].Outcome != "failed_precondition" {
		t.Errorf("stdin audit: %+v", recs)
	}
}

// A process on a pty sees a terminal, gets resized while it runs, has
// its stderr merged into stdout and takes stdin like any; a resize of a
// process without a pty, or to a bad size, is refused.
func TestProcessPty(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	ctx := context.Background()
	p, err := m.StartProcess(ctx, lcTenant, sb.ID, sandbox.ProcessOptions{ExecOptions: guest.ExecOptions{
		Shell: `test -t 1 && echo tty; stty size; echo err >&2; while read x; do stty size; [ "$x" = typed ] && break; done; echo "in:$x"`,
		Pty:   &guest.WindowSize{Rows: 24, Cols: 80}}})
	if err != nil {
		t.Skipf("no ptys here: %v", err)
	}
	if p.Pty == nil || p.Pty.Rows != 24 || !p.StdinOpen {
		t.Errorf("started = %+v", p)
	}
	readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "24 80")
	info, err := m.ResizeProcess(ctx, lcTenant, sb.ID, p.ID, guest.WindowSize{Rows: 40, Cols: 120})
	if err != nil || info.Pty.Cols != 120 {
		t.Fatalf("resize = %+v, %v", info, err)
	}
	// The resize and stdin travel separately: each line typed prints the
	// size again, until the new one shows.
	var got string
	var off int64
	for typed := 1; !strings.Contains(got, "40 120"); typed++ {
		if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, []byte("\n"), false); err != nil {
			t.Fatal(err)
		}
		for len(sizeLine.FindAllString(got, -1)) < typed+1 {
			out, err := m.ReadProcessOutput(ctx, lcTenant, sb.ID, p.ID, sandbox.StreamStdout, off, 0, 10*time.Second)
			if err != nil || out.EOF {
				t.Fatalf("read after typing %d lines: %v (so far %q)", typed, err, got)
			}
			got, off = got+string(out.Data), out.NextOffset
		}
	}
	if _, err := m.WriteProcessStdin(ctx, lcTenant, sb.ID, p.ID, []byte("typed\n"), false); err != nil {
		t.Fatal(err)
	}
	out := readUntil(t, m, sb.ID, p.ID, sandbox.StreamStdout, "in:typed")
	for _, want := range []string{"tty", "err", "40 120", "in:typed"} {
		if !strings.Contains(out, want) {
			t.Errorf("pty output %q lacks %q", out, want)
		}
	}
	waitProc(t, m, sb.ID, p.ID)
	if info, _ := m.Process(ctx, lcTenant, sb.ID, p.ID); info.StderrBytes != 0 {
		t.Errorf("stderr on a pty: %d bytes", info.StderrBytes)
	}
	plain := startProc(t, m, sb.ID, "sleep 5")
	if _, err := m.ResizeProcess(ctx, lcTenant, sb.ID, plain.ID, guest.WindowSize{Rows: 10, Cols: 10}); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("resize without a pty = %v", err)
	}
	if _, err := m.ResizeProcess(ctx, lcTenant, sb.ID, plain.ID, guest.WindowSize{Rows: 0, Cols: 10}); !errdefs.IsInvalidArgument(err) {
		t.Errorf("resize to 0 rows = %v", err)
	}
}

// exec as a user of the guest's /etc/passwd runs with its ids; an
// unknown user is invalid_argument; both are audited by name.
func TestExecAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	e := newLCEnv(t)
	if _, err := e.layer.AddTemplate("users", map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nworker:x:4321:4321::/home/worker:/bin/sh\n"}, nil); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{Template: "users"})
	ctx := context.Background()
	// A local machine's root is under the test's private directories:
	// let the user reach it, as a guest's root is its own.
	for d := filepath.Join(e.layer.RunDir(), sb.ID); d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	res, err := m.Exec(ctx, lcTenant, sb.ID, guest.ExecOptions{Shell: "id -u; echo $USER", User: "worker"}, &out, nil)
	if err != nil || res.ExitCode != 0 || out.String() != "4321\nworker\n" {
		t.Errorf("exec as worker: %q, %+v, %v", out.String(), res, err)
	}
	if _, err := m.Exec(ctx, lcTenant, sb.ID, guest.ExecOptions{Shell: "true", User: "nobody-here"}, nil, nil); !errdefs.IsInvalidArgument(err) {
		t.Errorf("unknown user = %v, want invalid_argument", err)
	}
	recs := e.auditSoon(t, sb.ID, store.EventExec, 2)
	if len(recs) != 2 || recs[0].Detail["user"] != "worker" || recs[1].Outcome != "invalid_argument" {
		t.Errorf("exec audit: %+v", recs)
	}
}

var sizeLine = regexp.MustCompile(`(?m)^\d+ \d+\r?$`)
