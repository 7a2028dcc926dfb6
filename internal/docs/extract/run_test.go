package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
)

func TestRunTool(t *testing.T) {
	needTools(t, "sh")
	tests := []struct {
		name    string
		run     toolRun
		ctx     func() (context.Context, context.CancelFunc)
		want    string // job error code, "" for success
		exitErr bool
		out     string
	}{
		{name: "stdout comes back", run: toolRun{name: "sh", args: []string{"-c", "echo hello"}}, out: "hello\n"},
		{name: "exit status is kept for the caller", run: toolRun{name: "sh", args: []string{"-c", "echo Incorrect password >&2; exit 1"}}, exitErr: true},
		{name: "tool timeout", run: toolRun{name: "sh", args: []string{"-c", "sleep 30"}, timeout: 200 * time.Millisecond}, want: docs.CodeTimeout},
		{name: "total deadline", run: toolRun{name: "sh", args: []string{"-c", "sleep 30"}}, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, want: docs.CodeTimeout},
		{name: "output cap", run: toolRun{name: "sh", args: []string{"-c", "yes"}, maxStdout: 4096}, want: docs.CodeTooLarge},
		{name: "missing tool", run: toolRun{name: "no-such-tool-airlock"}, want: docs.CodeInternal},
		{name: "consumer error stops the tool", run: toolRun{name: "sh", args: []string{"-c", "yes"}, consume: func(r io.Reader) error {
			return errors.New("parse failed")
		}}, want: docs.CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			r := tc.run
			if r.timeout == 0 {
				r.timeout = 10 * time.Second
			}
			if r.maxStdout == 0 {
				r.maxStdout = 1 << 20
			}
			start := time.Now()
			out, err := runTool(ctx, r)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			var ee *exitError
			if tc.exitErr {
				if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.stderr, "Incorrect password") {
					t.Fatalf("err %v, want an exitError with stderr", err)
				}
				return
			}
			if got := code(err); got != tc.want && !(tc.want == docs.CodeInternal && strings.HasPrefix(got, "unclassified")) {
				t.Fatalf("code %q (%v), want %q", got, err, tc.want)
			}
			if string(out) != tc.out {
				t.Errorf("stdout %q, want %q", out, tc.out)
			}
		})
	}
}

// alive says pid exists and is not a zombie (an orphan killed with its
// group waits for init to reap it, which in a container may be never).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestRunToolKillsTheProcessGroup: a timeout takes the tool's children
// with it, not just the process it started.
func TestRunToolKillsTheProcessGroup(t *testing.T) {
	needTools(t, "sh", "sleep")
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	_, err := runTool(context.Background(), toolRun{
		name:      "sh",
		args:      []string{"-c", "sleep 60 & echo $! > " + pidFile + "; wait"},
		timeout:   300 * time.Millisecond,
		maxStdout: 1024,
	})
	if code(err) != docs.CodeTimeout {
		t.Fatalf("err %v, want timeout", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("runTool returned after %v; the kill should end it at once", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
