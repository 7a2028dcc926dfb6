package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// TestHardLimits checks that nothing a guest runs can stretch a sandbox's
// life: a deadline or a kill ends it while a command is still running, and
// a command whose caller went away does not keep running. It has its own
// daemon so that a failure here cannot stall the shared one.
func TestHardLimits(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	t.Run("TTLDuringExec", func(t *testing.T) { testTTLDuringExec(t, d) })
	t.Run("KillDuringExec", func(t *testing.T) { testKillDuringExec(t, d) })
	t.Run("AbandonedExecStops", func(t *testing.T) { testAbandonedExecStops(t, d) })
}

// clientGiveUp bounds the execs below that should be ended by the server
// long before it: if one ends by the client giving up instead, the server
// waited for the command.
const clientGiveUp = 30 * time.Second

// startedWriter signals once the output holds "started".
type startedWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func newStartedWriter() *startedWriter { return &startedWriter{started: make(chan struct{})} }

func (w *startedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "started") {
		w.once.Do(func() { close(w.started) })
	}
	return len(p), nil
}

// busyExec runs cmd (which must print "started" first) in sbx with no exec
// timeout, returns once it has started, and later delivers its outcome.
func busyExec(t *testing.T, sbx *client.Sandbox, cmd string) <-chan error {
	t.Helper()
	w := newStartedWriter()
	done := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.Background(), clientGiveUp)
		defer cancel()
		res, err := sbx.ExecStream(cctx, client.ExecRequest{Cmd: cmd}, w, nil)
		if err == nil {
			err = errors.New("exec finished normally with exit code " + strconv.Itoa(res.ExitCode))
		}
		done <- err
	}()
	select {
	case <-w.started:
	case err := <-done:
		t.Fatalf("busy exec ended before it started: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("busy exec did not start within 2 minutes")
	}
	return done
}

// checkServerEnded fails t if a busy exec ended because the client gave up
// rather than because the server ended the sandbox under it.
func checkServerEnded(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: the running command held the sandbox until the client gave up after %s: %v", what, clientGiveUp, err)
		} else {
			t.Logf("%s: the running exec ended with: %v", what, err)
		}
	case <-time.After(clientGiveUp + time.Minute):
		t.Errorf("%s: the running exec never returned", what)
	}
}

func testTTLDuringExec(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	tag := uniq("hardttl")
	busy := createSandbox(t, c, 4, map[string]string{"hardttl": tag})
	bystander := createSandbox(t, c, 4, map[string]string{"hardttl": tag})
	done := busyExec(t, busy, "echo started; sleep 300")
	checkServerEnded(t, "TTL", done)
	for _, s := range []*client.Sandbox{busy, bystander} {
		// The two deadlines differ by the time between the creates; each
		// sandbox gets the same 2 s of slack after its own.
		time.Sleep(time.Until(s.Deadline.Add(2 * time.Second)))
		got, err := c.GetSandbox(ctx(t), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != "expired" || got.EndedAt == nil {
			t.Errorf("%s after its deadline: state %s", s.ID, got.State)
			continue
		}
		if late := got.EndedAt.Sub(s.Deadline); late > 2*time.Second {
			which := "the sandbox running a command"
			if s == bystander {
				which = "an idle sandbox next to one running a command"
			}
			t.Errorf("%s (%s) expired %s after its deadline; want within 2s", s.ID, which, late.Round(time.Millisecond))
		}
		d.vmGone(t, s.ID)
	}
}

func testKillDuringExec(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	sbx := createSandbox(t, c, 300, nil)
	done := busyExec(t, sbx, "echo started; sleep 300")
	if err := sbx.Kill(ctx(t)); err != nil {
		t.Fatalf("kill during exec: %v", err)
	}
	checkServerEnded(t, "kill", done)
	if got, err := c.GetSandbox(ctx(t), sbx.ID); err != nil || got.State != "killed" {
		t.Fatalf("after kill during exec: %+v, %v", got, err)
	}
	d.vmGone(t, sbx.ID)
}

// guestProcs returns the command lines in sbx that start with prefix.
func guestProcs(t *testing.T, sbx *client.Sandbox, prefix string) []string {
	t.Helper()
	out := mustExec(t, sbx, `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done`)
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			found = append(found, strings.TrimSpace(l))
		}
	}
	return found
}

func testAbandonedExecStops(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	sbx := createSandbox(t, c, 300, nil)

	// A streaming exec whose client disconnects.
	w := newStartedWriter()
	sctx, cancel := context.WithCancel(context.Background())
	sdone := make(chan error, 1)
	go func() {
		_, err := sbx.ExecStream(sctx, client.ExecRequest{Cmd: "echo started; exec sleep 3001"}, w, nil)
		sdone <- err
	}()
	<-w.started
	cancel()
	<-sdone
	// A plain exec whose client gives up, with stdin this time.
	pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := sbx.Exec(pctx, "exec sleep 3002", client.WithStdin([]byte("ignored")))
	pcancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("plain exec: %v, want the client's deadline", err)
	}

	var left []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if left = guestProcs(t, sbx, "sleep 300"); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("commands whose caller went away still run in the guest 20s later: %q", left)
	}
}

// TestDaemonMemoryUnderLargeOutputs: one tenant runs six concurrent
// non-streaming execs, each printing 16 MiB of NULs on stdout and on
// stderr (the most the API holds per stream). The daemon answers each
// exactly (base64: NULs escaped as JSON text would be six times their
// size) and its peak RSS stays under 512 MiB.
func TestDaemonMemoryUnderLargeOutputs(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	c := d.client(t, tenantA)
	sbx, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName})
	if err != nil {
		t.Fatal(err)
	}
	defer sbx.Kill(context.Background())
	const size = 16 << 20
	script := "head -c " + strconv.Itoa(size) + " /dev/zero; head -c " + strconv.Itoa(size) + " /dev/zero >&2"
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sbx.Exec(ctx(t), script, client.WithMaxOutputBytes(size), client.WithTimeout(5*time.Minute))
			switch {
			case err != nil:
				errs <- err
			case len(res.Stdout) != size || len(res.Stderr) != size || res.StdoutTruncated || strings.Trim(res.Stdout, "\x00") != "":
				errs <- errors.New("output not returned exactly: " + strconv.Itoa(len(res.Stdout)) + " stdout bytes")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	hwm := peakRSS(t, d.cmd.Process.Pid)
	t.Logf("daemon peak RSS after 6 concurrent 2 x 16 MiB execs: %d MiB", hwm>>20)
	if hwm > 512<<20 {
		t.Errorf("daemon peak RSS %d MiB, want under 512 MiB", hwm>>20)
	}
}

// peakRSS reads a process's VmHWM in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
