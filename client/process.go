package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/wire"
)

// Background processes: a command started in a sandbox without waiting
// for it, like exec but returning at once. The server keeps the latest
// 1 MiB of each output stream, readable while the process runs and after
// it ended; a sandbox runs at most 32 at once and keeps 64 records.
// Records go with the sandbox.

// Process states.
const (
	ProcessRunning = wire.ProcessRunning
	ProcessExited  = wire.ProcessExited // ended on its own
	ProcessKilled  = wire.ProcessKilled // ended after Kill or at its timeout
	ProcessFailed  = wire.ProcessFailed // no exit status: the sandbox ended under it (see Error)
)

// Output streams of a process.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// ProcessInfo is a background process as the server reports it;
// ProcessOutput a piece of one output stream of a process.
type (
	ProcessInfo   = wire.Process
	ProcessOutput = wire.ProcessOutput
)

// Process is a handle on one background process. Its ProcessInfo is a
// snapshot from the last call that returned one (Refresh updates it).
type Process struct {
	ProcessInfo
	s *Sandbox
}

// ProcessRequest describes a background process: exactly one of Cmd and
// Argv.
type ProcessRequest struct {
	Cmd     string            // run with /bin/sh -c
	Argv    []string          // run directly
	Env     map[string]string // added to the default environment
	Cwd     string            // absolute; "" = /
	Timeout time.Duration     // kill the process tree after this; 0 = none
	Stdin   []byte            // fed, then closed (unless StdinOpen); nil = /dev/null
	// StdinOpen keeps stdin open after Stdin's bytes for WriteStdin and
	// CloseStdin (a process on a pty always has it open).
	StdinOpen bool
	User      string      // run as this guest user; "" = root
	Pty       *WindowSize // run on a terminal of this size (Resize changes it)
}

func (r ProcessRequest) wire() map[string]any {
	m := ExecRequest{Cmd: r.Cmd, Argv: r.Argv, Env: r.Env, Cwd: r.Cwd, Timeout: r.Timeout, Stdin: r.Stdin,
		User: r.User, Pty: r.Pty}.wire()
	if r.StdinOpen {
		m["stdin_open"] = true
	}
	return m
}

// StartProcess starts req in the sandbox and returns at once, with the
// process running. A command that cannot be started still starts a
// process, which exits 127 or 126 with the reason on stderr.
func (s *Sandbox) StartProcess(ctx context.Context, req ProcessRequest) (*Process, error) {
	p := &Process{s: s}
	if err := s.c.doJSON(ctx, request{method: "POST", path: s.path("/processes"), jsonBody: req.wire()}, &p.ProcessInfo); err != nil {
		return nil, err
	}
	return p, nil
}

// Processes lists the sandbox's background processes, running and ended,
// in start order.
func (s *Sandbox) Processes(ctx context.Context) ([]*Process, error) {
	var out struct {
		Processes []ProcessInfo `json:"processes"`
	}
	if err := s.c.doJSON(ctx, request{method: "GET", path: s.path("/processes")}, &out); err != nil {
		return nil, err
	}
	ps := make([]*Process, len(out.Processes))
	for i, in := range out.Processes {
		ps[i] = &Process{ProcessInfo: in, s: s}
	}
	return ps, nil
}

// Process returns a handle on process pid without asking the server.
func (s *Sandbox) Process(pid string) *Process {
	return &Process{ProcessInfo: ProcessInfo{ID: pid, SandboxID: s.ID}, s: s}
}

func (p *Process) path(suffix string) string {
	return p.s.path("/processes/" + url.PathEscape(p.ID) + suffix)
}

// Refresh re-reads the process's state.
func (p *Process) Refresh(ctx context.Context) error {
	var in ProcessInfo
	if err := p.s.c.doJSON(ctx, request{method: "GET", path: p.path("")}, &in); err != nil {
		return err
	}
	p.ProcessInfo = in
	return nil
}

// serverWaitStep is the longest wait asked of the server in one request.
const serverWaitStep = 60 * time.Second

// Wait waits for the process to end and updates its info. With timeout >
// 0 a process still running after it is an error matching
// ErrDeadlineExceeded; with 0 it waits until the process ends or ctx
// does. A non-zero exit code is not an error: check ExitCode and State.
func (p *Process) Wait(ctx context.Context, timeout time.Duration) error {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		step := serverWaitStep
		if !deadline.IsZero() {
			step = min(step, max(time.Until(deadline), 0))
		}
		q := url.Values{"timeout_seconds": {strconv.FormatFloat(step.Seconds(), 'f', 3, 64)}}
		var in ProcessInfo
		err := p.s.c.doJSON(ctx, request{method: "POST", path: p.path("/wait"), query: q}, &in)
		if err == nil {
			p.ProcessInfo = in
			return nil
		}
		if !isDeadline(err) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("airlock: wait for process %s: %w", p.ID, ctx.Err())
		}
	}
}

// isDeadline: the server said the process is still running.
func isDeadline(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == ErrDeadlineExceeded.Error()
}

// Kill sends signal ("TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2";
// "" = KILL) to the process's whole tree and returns at once; Wait tells
// when it ended (State ProcessKilled). An ended process is
// ErrFailedPrecondition.
func (p *Process) Kill(ctx context.Context, signal string) error {
	q := url.Values{}
	if signal != "" {
		q.Set("signal", signal)
	}
	var in ProcessInfo
	if err := p.s.c.doJSON(ctx, request{method: "DELETE", path: p.path(""), query: q}, &in); err != nil {
		return err
	}
	p.ProcessInfo = in
	return nil
}

// WriteStdin appends b to the stdin of a process started with StdinOpen
// (or on a pty), in order with every other write. It returns once the
// sandbox has taken the bytes; a process that does not read them for 30
// s is ErrDeadlineExceeded (they stay queued). A process without stdin,
// whose stdin is closed, or that has ended is ErrFailedPrecondition. At
// most 1 MiB per call.
func (p *Process) WriteStdin(ctx context.Context, b []byte) error {
	return p.stdin(ctx, b, false)
}

// CloseStdin closes the process's stdin (on a pty: sends its EOF
// character), after every earlier write.
func (p *Process) CloseStdin(ctx context.Context) error {
	return p.stdin(ctx, nil, true)
}

func (p *Process) stdin(ctx context.Context, b []byte, closeStdin bool) error {
	body := map[string]any{}
	switch {
	case len(b) == 0:
	case utf8.Valid(b):
		body["data"] = string(b)
	default:
		body["data_base64"] = base64.StdEncoding.EncodeToString(b)
	}
	if closeStdin {
		body["close"] = true
	}
	var in ProcessInfo
	if err := p.s.c.doJSON(ctx, request{method: "POST", path: p.path("/stdin"), jsonBody: body}, &in); err != nil {
		return err
	}
	p.ProcessInfo = in
	return nil
}

// Resize sets the window size of a process started on a pty (it gets
// SIGWINCH).
func (p *Process) Resize(ctx context.Context, rows, cols uint32) error {
	var in ProcessInfo
	if err := p.s.c.doJSON(ctx, request{method: "POST", path: p.path("/resize"), jsonBody: WindowSize{Rows: rows, Cols: cols}}, &in); err != nil {
		return err
	}
	p.ProcessInfo = in
	return nil
}

// OutputOption tunes Output.
type OutputOption func(url.Values)

// WithWait makes a read that finds nothing new of a running process wait
// up to d (at most a minute) for output or the process's end.
func WithWait(d time.Duration) OutputOption {
	return func(q url.Values) { q.Set("wait_seconds", strconv.FormatFloat(d.Seconds(), 'f', 3, 64)) }
}

// WithMaxBytes reads at most n bytes (the server's maximum is 1 MiB).
func WithMaxBytes(n int) OutputOption {
	return func(q url.Values) { q.Set("max_bytes", strconv.Itoa(n)) }
}

// Output reads stream (Stdout or Stderr) from offset on.
func (p *Process) Output(ctx context.Context, stream string, offset int64, opts ...OutputOption) (*ProcessOutput, error) {
	q := url.Values{"stream": {stream}, "offset": {strconv.FormatInt(offset, 10)}}
	for _, o := range opts {
		o(q)
	}
	var out ProcessOutput
	if err := p.s.c.doJSON(ctx, request{method: "GET", path: p.path("/output"), query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Follow copies stream to w from offset on as it arrives, until the
// process has ended and all of it was copied, or ctx ends. It returns the
// offset after the last byte copied and how many bytes were dropped
// because the server no longer kept them.
func (p *Process) Follow(ctx context.Context, stream string, offset int64, w io.Writer) (next, dropped int64, err error) {
	for {
		out, err := p.Output(ctx, stream, offset, WithWait(30*time.Second))
		if err != nil {
			return offset, dropped, err
		}
		dropped += out.Dropped
		if _, err := w.Write(out.Data); err != nil {
			return offset, dropped, fmt.Errorf("airlock: follow %s of %s: %w", stream, p.ID, err)
		}
		offset = out.NextOffset
		if out.EOF {
			return offset, dropped, nil
		}
	}
}
