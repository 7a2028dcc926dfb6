package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// TestE2BFeatures runs what an E2B user reaches for in a real VM through
// the daemon: an exec as a guest user (its ids, no_new_privs), an exec on
// a pty, a background process fed on stdin, a pty process resized while
// it runs, and a pause to disk resumed by ConnectSandbox under the same
// id with what the guest had written.
func TestE2BFeatures(t *testing.T) {
	d := startDaemon(t, getEnv(t))
	c := d.client(t, tenantA)
	sbx := createSandbox(t, c, 600, nil)
	cx := ctx(t)

	t.Run("user", func(t *testing.T) {
		res, err := sbx.Exec(cx, "id -u; id -un; grep NoNewPrivs /proc/self/status", client.WithUser("nobody"))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exec as nobody: %+v %v", res, err)
		}
		if f := strings.Fields(res.Stdout); len(f) != 4 || f[0] != "65534" || f[1] != "nobody" || f[3] != "1" {
			t.Errorf("as nobody: %q", res.Stdout)
		}
		if _, err := sbx.Exec(cx, "true", client.WithUser("no-such-user")); !errors.Is(err, client.ErrInvalidArgument) {
			t.Errorf("exec as an unknown user: %v, want invalid_argument", err)
		}
	})

	t.Run("pty exec", func(t *testing.T) {
		res, err := sbx.Exec(cx, "test -t 1 && echo tty; stty size; echo err >&2", client.WithPty(24, 80))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exec on a pty: %+v %v", res, err)
		}
		out := strings.ReplaceAll(res.Stdout, "\r", "")
		for _, want := range []string{"tty\n", "24 80\n", "err\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("pty output %q lacks %q", out, want)
			}
		}
		if res.Stderr != "" {
			t.Errorf("stderr on a pty: %q", res.Stderr)
		}
	})

	t.Run("stdin", func(t *testing.T) {
		p, err := sbx.StartProcess(cx, client.ProcessRequest{Argv: []string{"cat"}, StdinOpen: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WriteStdin(cx, []byte("first\n")); err != nil {
			t.Fatal(err)
		}
		readUntil(t, p, "first\n")
		if err := p.WriteStdin(cx, []byte{'s', 0xff, '\n'}); err != nil { // not UTF-8: sent as base64
			t.Fatal(err)
		}
		if err := p.CloseStdin(cx); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(cx, 0); err != nil {
			t.Fatal(err)
		}
		out, err := p.Output(cx, client.Stdout, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.ExitCode == nil || *p.ExitCode != 0 || string(out.Data) != "first\ns\xff\n" || !out.EOF {
			t.Errorf("cat fed on stdin: %+v, stdout %q", p.ProcessInfo, out.Data)
		}
		if err := p.WriteStdin(cx, []byte("late")); err == nil {
			t.Errorf("stdin after close and exit was taken")
		}
	})

	t.Run("pty process", func(t *testing.T) {
		// Each line typed prints the terminal's size, so the test types
		// until the resize shows instead of waiting for it.
		p, err := sbx.StartProcess(cx, client.ProcessRequest{
			Cmd: `stty size; while read x; do [ "$x" = q ] && exit 0; stty size; done`,
			Pty: &client.WindowSize{Rows: 24, Cols: 80}})
		if err != nil {
			t.Fatal(err)
		}
		off := readUntil(t, p, "24 80")
		if err := p.Resize(cx, 40, 120); err != nil {
			t.Fatal(err)
		}
		got := ""
		for !strings.Contains(got, "40 120") {
			if err := p.WriteStdin(cx, []byte("\n")); err != nil {
				t.Fatal(err)
			}
			out, err := p.Output(cx, client.Stdout, off, client.WithWait(30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if out.EOF {
				t.Fatalf("ended before showing the new size: %q", got)
			}
			got, off = got+string(out.Data), out.NextOffset
		}
		if err := p.WriteStdin(cx, []byte("q\n")); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(cx, 0); err != nil || p.ExitCode == nil || *p.ExitCode != 0 {
			t.Errorf("pty process end: %+v %v", p.ProcessInfo, err)
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		mustExec(t, sbx, "echo kept > /tmp/state")
		if err := sbx.Pause(cx); err != nil {
			t.Fatal(err)
		}
		if sbx.State != "paused" {
			t.Errorf("after pause: state %q", sbx.State)
		}
		d.vmGone(t, sbx.ID)
		if _, err := sbx.Exec(cx, "true"); !errors.Is(err, client.ErrFailedPrecondition) {
			t.Errorf("exec while paused: %v, want failed_precondition", err)
		}
		again, err := c.ConnectSandbox(cx, sbx.ID)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != sbx.ID || again.State != "running" {
			t.Errorf("connect: %+v", again.SandboxInfo)
		}
		if got := mustExec(t, again, "cat /tmp/state"); got != "kept\n" {
			t.Errorf("after resume the guest has %q", got)
		}
	})
}

// readUntil reads p's stdout from 0 until it holds want, and returns the
// offset after what it read.
func readUntil(t *testing.T, p *client.Process, want string) int64 {
	t.Helper()
	var got string
	var off int64
	for !strings.Contains(strings.ReplaceAll(got, "\r", ""), want) {
		out, err := p.Output(ctx(t), client.Stdout, off, client.WithWait(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if out.EOF {
			t.Fatalf("process ended before printing %q: %q", want, got)
		}
		got, off = got+string(out.Data), out.NextOffset
	}
	return off
}
