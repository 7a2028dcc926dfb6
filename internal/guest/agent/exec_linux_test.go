//go:build linux

package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// These tests run the agent's real Exec handler on this host behind the
// real host client (guest.Client over the model port), without exec
// cgroups: the host's hierarchy is not the agent's to change. The server
// (and its reaper, which waits for every child of the test binary) is
// started once.
var (
	agentOnce sync.Once
	agentSrv  *Server
)

func execClient(t *testing.T) *guest.Client {
	t.Helper()
	agentOnce.Do(func() {
		noExecCgroups = true
		agentSrv = NewServer(slog.New(slog.DiscardHandler))
	})
	p := newSimPort()
	gs := grpc.NewServer(grpc.ConnectionTimeout(time.Hour))
	agentpb.RegisterAgentServer(gs, agentSrv)
	l := newPortListenerFunc("sim", p.openFile)
	go gs.Serve(l)
	t.Cleanup(func() { l.Close(); gs.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dialReady(ctx, p.connect(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(t *testing.T, c *guest.Client, opts guest.ExecOptions) (string, string, guest.ExecResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	res, err := c.Exec(ctx, opts, &out, &errOut)
	if err != nil {
		t.Fatalf("exec %q: %v", opts.Shell, err)
	}
	return out.String(), errOut.String(), res
}

// A process on a pty sees a terminal of the size asked for, its stderr
// arrives merged into stdout, and the end of the host's stdin is the
// terminal's end of file.
func TestExecPty(t *testing.T) {
	c := execClient(t)
	out, errOut, res := run(t, c, guest.ExecOptions{
		Shell: `test -t 0 && test -t 1 && test -t 2 && echo tty; stty size; echo to-stderr >&2; echo "TERM=$TERM"; ` +
			`read line; echo "got:$line"; cat; echo "after-eof"`,
		Pty: &guest.WindowSize{Rows: 24, Cols: 80}, Stdin: strings.NewReader("hello\nrest\n"), Timeout: 20 * time.Second,
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %q", res.ExitCode, out)
	}
	for _, want := range []string{"tty", "24 80", "to-stderr", "TERM=xterm-256color", "got:hello", "after-eof"} {
		if !strings.Contains(out, want) {
			t.Errorf("pty output %q lacks %q", out, want)
		}
	}
	if errOut != "" || res.StderrBytes != 0 {
		t.Errorf("stderr on a pty = %q (%d bytes), want everything on stdout", errOut, res.StderrBytes)
	}
}

// A resize reaches the process's terminal while it runs, and a signal
// reaches a process whose stdin is still open (stdin never holds up the
// host's other messages).
func TestExecPtyResizeAndSignalWithOpenStdin(t *testing.T) {
	c := execClient(t)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	resize := make(chan guest.WindowSize, 1)
	sigs := make(chan syscall.Signal, 1)
	out := &lockedBuffer{}
	done := make(chan guest.ExecResult, 1)
	go func() {
		res, err := c.Exec(context.Background(), guest.ExecOptions{
			Shell: `stty size; while read x; do [ "$x" = q ] && break; stty size; done; echo ready; sleep 60`, Pty: &guest.WindowSize{Rows: 24, Cols: 80},
			Stdin: stdinR, Resize: resize, Signals: sigs, Timeout: 50 * time.Second}, out, nil)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitOutput(t, out, "24 80")
	resize <- guest.WindowSize{Rows: 30, Cols: 100}
	// The resize and stdin travel separately: each line typed prints the
	// size again, until the new one shows.
	for typed := 1; !strings.Contains(out.String(), "30 100"); typed++ {
		if _, err := stdinW.Write([]byte("\n")); err != nil {
			t.Fatal(err)
		}
		waitSizes(t, out, typed+1)
	}
	if _, err := stdinW.Write([]byte("q\n")); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "ready")
	sigs <- syscall.SIGTERM
	select {
	case res := <-done:
		if res.Signal != "SIGTERM" && res.ExitCode != 128+int(syscall.SIGTERM) {
			t.Errorf("after SIGTERM: %+v", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM with stdin still open did not end the process")
	}
}

// A process run as a user runs with that user's ids and environment,
// with no_new_privs set; root runs without it; an unknown user is
// refused as invalid_argument before anything runs.
func TestExecUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	c := execClient(t)
	out, _, res := run(t, c, guest.ExecOptions{User: "nobody",
		Shell: `id -u; id -g; echo "HOME=$HOME USER=$USER"; grep NoNewPrivs /proc/self/status`})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %q", res.ExitCode, out)
	}
	for _, want := range []string{"65534\n", "USER=nobody", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("as nobody: %q lacks %q", out, want)
		}
	}
	out, _, _ = run(t, c, guest.ExecOptions{Shell: `id -u; grep NoNewPrivs /proc/self/status`})
	if !strings.HasPrefix(out, "0\n") || !strings.Contains(out, "NoNewPrivs:\t0") {
		t.Errorf("as root: %q", out)
	}
	out, _, _ = run(t, c, guest.ExecOptions{User: "root", Shell: `id -u`})
	if out != "0\n" {
		t.Errorf("user root: %q", out)
	}
	_, err := c.Exec(context.Background(), guest.ExecOptions{User: "no-such-user-here", Shell: "true"}, nil, nil)
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown user: %v, want invalid_argument naming it", err)
	}
	_, err = c.Exec(context.Background(), guest.ExecOptions{Shell: "true", Pty: &guest.WindowSize{Rows: 0, Cols: 80}}, nil, nil)
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("pty 0x80: %v, want invalid_argument", err)
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitOutput(t *testing.T, b *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never showed %q", b.String(), s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSizes waits until stty has printed n sizes.
func waitSizes(t *testing.T, b *lockedBuffer, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(sizeLine.FindAllString(b.String(), -1)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never showed %d sizes", b.String(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var sizeLine = regexp.MustCompile(`(?m)^\d+ \d+\r?$`)

// A path that is not there is "not found" (127, as a shell says), and a
// file that exists but cannot start because its interpreter is missing
// says so instead of "no such file or directory".
func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	if _, err := lookPath(filepath.Join(dir, "nonexistent"), nil); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("missing path: %v", err)
	}
	script := filepath.Join(dir, "hello.sh")
	os.WriteFile(script, []byte("#!/no/such/sh -e\necho hi\n"), 0o755)
	if p, err := lookPath(script, nil); err != nil || p != script {
		t.Fatalf("existing script: %q %v", p, err)
	}
	if msg := startFailure(script, "/hello.sh", syscall.ENOENT); !strings.Contains(msg, "interpreter /no/such/sh is not in this sandbox's template") {
		t.Errorf("script: %s", msg)
	}
	// An ELF whose loader is there: the plain error stays.
	self, _ := os.Executable()
	if got := interpreterOf(self); got != "" {
		if msg := startFailure(self, "x", syscall.ENOENT); strings.Contains(msg, "interpreter") {
			t.Errorf("loader %s exists, yet: %s", got, msg)
		}
	}
	if got := interpreterOf("/bin/ls"); got == "" || !strings.HasPrefix(got, "/lib") {
		t.Errorf("/bin/ls loader: %q", got)
	}
	if msg := startFailure(script, "/hello.sh", syscall.EACCES); strings.Contains(msg, "interpreter") {
		t.Errorf("EACCES: %s", msg)
	}
}
