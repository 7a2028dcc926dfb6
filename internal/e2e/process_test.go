package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// TestBackgroundProcesses runs background processes in a real VM through
// the daemon: output read while the process runs, the list, a kill with
// TERM that ends the whole tree, one that exits on its own and is read
// after, another tenant's view, the audit, and the CLI's commands.
func TestBackgroundProcesses(t *testing.T) {
	d := startDaemon(t, getEnv(t))
	c := d.client(t, tenantA)
	sbx := createSandbox(t, c, 300, nil)
	cx := ctx(t)

	p, err := sbx.StartProcess(cx, client.ProcessRequest{Argv: []string{"sh", "-c", "echo hi; sleep 30"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var off int64
	for !bytes.Contains(got, []byte("hi\n")) {
		out, err := p.Output(cx, client.Stdout, off, client.WithWait(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if out.EOF {
			t.Fatalf("process ended before printing hi: %q", got)
		}
		got, off = append(got, out.Data...), out.NextOffset
	}
	ps, err := sbx.Processes(cx)
	if err != nil || len(ps) != 1 || ps[0].ID != p.ID || ps[0].State != client.ProcessRunning {
		t.Fatalf("processes: %+v %v", ps, err)
	}
	if err := p.Wait(cx, 100*time.Millisecond); !errors.Is(err, client.ErrDeadlineExceeded) {
		t.Fatalf("wait on a running process: %v", err)
	}
	if _, err := d.client(t, tenantB).Sandbox(sbx.ID).Processes(cx); !client.IsNotFound(err) {
		t.Fatalf("another tenant's list: %v, want not_found", err)
	}
	if err := p.Kill(cx, "TERM"); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(cx, 0); err != nil {
		t.Fatal(err)
	}
	if p.State != client.ProcessKilled || p.Signal != "SIGTERM" || p.ExitCode == nil || *p.ExitCode != 143 || p.StdoutBytes != 3 {
		t.Fatalf("after kill: %+v", p.ProcessInfo)
	}
	if n := mustExec(t, sbx, "cat /proc/[0-9]*/comm 2>/dev/null | grep -cx sleep || true"); n != "0\n" {
		t.Fatalf("%s sleep processes outlived the kill of their tree", strings.TrimSpace(n))
	}

	q, err := sbx.StartProcess(cx, client.ProcessRequest{Cmd: "echo out; echo err >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(cx, 0); err != nil {
		t.Fatal(err)
	}
	so, err := q.Output(cx, client.Stdout, 0)
	if err != nil {
		t.Fatal(err)
	}
	se, err := q.Output(cx, client.Stderr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q.State != client.ProcessExited || *q.ExitCode != 3 || string(so.Data) != "out\n" || !so.EOF || string(se.Data) != "err\n" || !se.EOF {
		t.Fatalf("exit 3: %+v stdout %+v stderr %+v", q.ProcessInfo, so, se)
	}

	recs, err := c.Audit(cx, client.AuditFilter{SandboxID: sbx.ID, Events: []string{"process_start", "process_end"}})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]client.AuditRecord{}
	for _, r := range recs {
		if r.Event == "process_end" {
			ends[r.Detail["process"]] = r
		}
		if b, _ := json.Marshal(r); bytes.Contains(b, []byte("sleep")) || bytes.Contains(b, []byte("hi\\n")) {
			t.Fatalf("audit record holds the command or its output: %s", b)
		}
	}
	if len(recs) != 4 || ends[p.ID].Detail["signal"] != "SIGTERM" || ends[q.ID].ExitCode == nil || *ends[q.ID].ExitCode != 3 {
		t.Fatalf("audit: %+v", recs)
	}
	testProcessCLI(t, d, sbx.ID)
}

// testProcessCLI drives exec --background, ps, logs, wait and
// kill-process.
func testProcessCLI(t *testing.T, d *daemon, id string) {
	run := func(wantCode int, args ...string) string {
		t.Helper()
		out, stderr, code := d.cli(t, tenantA, args...)
		if code != wantCode {
			t.Fatalf("airlock %s: exit %d, want %d: %s", strings.Join(args, " "), code, wantCode, stderr)
		}
		return out
	}
	pid := strings.TrimSpace(run(0, "sandbox", "exec", "--background", id, "--shell", "--", "echo cli-out; echo cli-err >&2; exit 5"))
	if pid != "p-3" {
		t.Fatalf("exec --background printed %q", pid)
	}
	run(5, "sandbox", "wait", id, pid)
	if out := run(0, "sandbox", "logs", id, pid); out != "cli-out\n" {
		t.Fatalf("logs: %q", out)
	}
	if out := run(0, "sandbox", "logs", "--stderr", "--follow", id, pid); out != "cli-err\n" {
		t.Fatalf("logs --stderr --follow: %q", out)
	}
	out := run(0, "sandbox", "exec", "--background", "--json", id, "--", "sleep", "60")
	var info client.ProcessInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.State != client.ProcessRunning {
		t.Fatalf("exec --background --json: %q (%v)", out, err)
	}
	if out := run(0, "sandbox", "ps", id); !strings.Contains(out, info.ID+"  ") || !strings.Contains(out, "running") {
		t.Fatalf("ps:\n%s", out)
	}
	run(0, "sandbox", "kill-process", "--signal", "INT", id, info.ID)
	run(130, "sandbox", "wait", "--timeout", "2m", id, info.ID)
}
