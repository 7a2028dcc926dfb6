package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
)

// Every poppler and tesseract run goes through runTool: in its own process
// group (so a timeout kills helpers it spawned too), killed if this
// process dies, with its output capped, and with failures mapped to the
// job error codes.

const (
	maxStderr = 64 << 10
	// waitDelay bounds how long Wait waits for pipes after the kill, in
	// case something in the group escaped it.
	waitDelay = 2 * time.Second
)

// toolRun is one invocation.
type toolRun struct {
	name      string
	args      []string
	timeout   time.Duration
	maxStdout int64
	// sizeHint preallocates the stdout buffer when the size is known (a
	// rendered page), sparing the copies of a growing buffer.
	sizeHint int64
	// consume reads stdout as it is produced; nil buffers it (up to
	// maxStdout) into the returned bytes.
	consume func(io.Reader) error
	// what names the run in messages ("pdftoppm page 3").
	what string
}

// exitError is a tool that ran and failed; callers classify it (poppler's
// stderr says "Incorrect password" for encryption, for example). stderr is
// kept for that match only: it may echo document content, so it never
// goes into a message.
type exitError struct {
	what   string
	code   int
	stderr string
}

func (e *exitError) Error() string { return fmt.Sprintf("%s exited with status %d", e.what, e.code) }

var errOutputLimit = errors.New("output limit exceeded")

// runTool runs r and returns its stdout (nil when r.consume is set).
func runTool(ctx context.Context, r toolRun) ([]byte, error) {
	if r.what == "" {
		r.what = r.name
	}
	bin, err := exec.LookPath(r.name)
	if err != nil {
		return nil, docs.Errorf(docs.CodeInternal, "%s is not installed in this image", r.name)
	}
	if err := ctx.Err(); err != nil {
		return nil, interrupted(err, r.what)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, r.args...)
	cmd.Env = toolEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay
	stderr := &headBuffer{max: maxStderr}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s stdout: %w", r.what, err)
	}
	if err := cmd.Start(); err != nil {
		if cerr := classifyRun(parent, ctx, r, nil, nil, ""); cerr != nil {
			return nil, cerr // the deadline passed between the check above and the start
		}
		return nil, docs.Errorf(docs.CodeInternal, "start %s: %v", r.what, err)
	}
	out, consumeErr := consumeStdout(r, &limitedReader{r: stdout, left: r.maxStdout})
	if consumeErr != nil {
		_ = killGroup(cmd)
	}
	waitErr := cmd.Wait()
	_ = killGroup(cmd) // leftovers of a tool that exited but left children
	if err := classifyRun(parent, ctx, r, consumeErr, waitErr, stderr.String()); err != nil {
		return nil, err
	}
	return out, nil
}

func consumeStdout(r toolRun, lr *limitedReader) ([]byte, error) {
	if r.consume == nil {
		buf := bytes.NewBuffer(make([]byte, 0, min(r.sizeHint, r.maxStdout)+bytes.MinRead))
		_, err := buf.ReadFrom(lr)
		return buf.Bytes(), err
	}
	if err := r.consume(lr); err != nil {
		return nil, err
	}
	// Drain what follows the part the consumer needed, so the tool is not
	// blocked writing and the limit still applies.
	_, err := io.Copy(io.Discard, lr)
	return nil, err
}

// classifyRun turns how a run ended into nil or one error, in order of
// what explains the failure best: the clock, the output cap, the tool's
// own exit status, then a consumer that could not parse the output.
func classifyRun(parent, ctx context.Context, r toolRun, consumeErr, waitErr error, stderr string) error {
	if err := parent.Err(); err != nil {
		return interrupted(err, r.what)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return docs.Errorf(docs.CodeTimeout, "%s ran past its time limit (%v)", r.what, r.timeout)
	}
	if errors.Is(consumeErr, errOutputLimit) {
		return docs.Errorf(docs.CodeTooLarge, "%s wrote more than %d bytes", r.what, r.maxStdout)
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		return &exitError{what: r.what, code: ee.ExitCode(), stderr: stderr}
	}
	if waitErr != nil {
		return fmt.Errorf("%s: %w", r.what, waitErr)
	}
	if consumeErr != nil {
		return fmt.Errorf("%s output: %w", r.what, consumeErr)
	}
	return nil
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// toolEnv is the parent environment with OpenMP held to one thread:
// tesseract otherwise spins a thread per core and runs slower on a small
// guest, not faster.
func toolEnv() []string {
	env := os.Environ()
	if _, ok := os.LookupEnv("OMP_THREAD_LIMIT"); !ok {
		env = append(env, "OMP_THREAD_LIMIT=1")
	}
	return env
}

// limitedReader fails with errOutputLimit once more than left bytes come.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errOutputLimit
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, errOutputLimit
	}
	return n, err
}

// headBuffer keeps the first max bytes written and drops the rest.
type headBuffer struct {
	buf bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.buf.String() }
