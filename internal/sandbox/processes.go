package sandbox

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/pty"
	"github.com/airlock-dev/airlock/internal/store"
)

// StartProcess starts a background process in a running sandbox and
// returns at once; see process.go. A command that cannot be found or
// started still starts a process, which exits with 127 or 126 and the
// reason on stderr, as exec does. opts.Signals, opts.Resize and
// opts.MaxOutputBytes are the Manager's to set.
func (m *Manager) StartProcess(ctx context.Context, tenant, id string, opts ProcessOptions) (ProcessInfo, error) {
	if (len(opts.Argv) == 0) == (opts.Shell == "") {
		return ProcessInfo{}, errdefs.InvalidArgument("a process needs exactly one of argv or a shell command")
	}
	if opts.Timeout < 0 {
		return ProcessInfo{}, errdefs.InvalidArgument("process timeout must not be negative")
	}
	if err := m.admit(); err != nil {
		return ProcessInfo{}, err
	}
	var info Info
	var p *process
	err := m.use(ctx, tenant, id, func(l *live) error {
		info = l.infoCopy()
		var err error
		if p, err = l.procs.add(id, opts); err != nil {
			return err
		}
		l.exec.apply(&opts.ExecOptions)
		opts.MaxOutputBytes, opts.Signals, opts.Resize = processGuestOutput, p.signals, p.resize
		p.openStdin(&opts)
		// Registered under the ops lock, so a fork (which takes it
		// exclusively) sees this process and refuses.
		m.wg.Add(1)
		go m.runProcess(l, info, p, opts.ExecOptions)
		return nil
	})
	if info.ID == "" {
		return ProcessInfo{}, err
	}
	rec := auditRecord(store.EventProcessStart, info)
	rec.Outcome = outcomeOf(err)
	if p != nil {
		rec.Detail = map[string]string{"process": p.info.ID}
		execDetail(rec.Detail, opts.ExecOptions)
	}
	m.audit(ctx, rec)
	if err != nil {
		return ProcessInfo{}, err
	}
	return p.snapshot(), nil
}

// runProcess holds a background process's guest call until it ends, then
// records and audits how. The call ends with the process, the sandbox
// (its machine destroyed) or the Manager (Close).
func (m *Manager) runProcess(l *live, info Info, p *process, opts guest.ExecOptions) {
	defer m.wg.Done()
	res, err := l.machine.Exec(m.procCtx, opts, p.stdout, p.stderr)
	if p.stdin != nil {
		p.stdin.CloseWithError(errProcessEnded) // unblocks writers and the guest call's stdin reader
	}
	if err != nil && l.ending.Load() {
		err = ending(l, ": it ended while the process was running")
	}
	pi := p.finish(res, err)
	rec := auditRecord(store.EventProcessEnd, info)
	rec.Bytes = pi.StdoutBytes + pi.StderrBytes
	rec.DurationMS = pi.EndedAt.Sub(pi.StartedAt).Milliseconds()
	rec.Outcome, rec.ExitCode = outcomeOf(err), pi.ExitCode
	rec.Detail = map[string]string{"process": pi.ID, "state": pi.State}
	if pi.Signal != "" {
		rec.Detail["signal"] = pi.Signal
	}
	if pi.TimedOut {
		rec.Detail["timed_out"] = "true"
	}
	if pi.StdoutTruncated || pi.StderrTruncated {
		rec.Detail["output_truncated"] = "true"
	}
	m.audit(context.Background(), rec)
}

// process finds background process pid of a running sandbox of tenant.
// Records go with their sandbox: one that ended answers as any call to it
// does (failed_precondition naming its state; not_found for another
// tenant's).
func (m *Manager) process(tenant, id, pid string) (*process, error) {
	l, err := m.lookup(tenant, id)
	if err != nil {
		return nil, err
	}
	return l.procs.get(id, pid)
}

// Processes lists a running sandbox's background processes, running and
// ended, in start order.
func (m *Manager) Processes(_ context.Context, tenant, id string) ([]ProcessInfo, error) {
	l, err := m.lookup(tenant, id)
	if err != nil {
		return nil, err
	}
	return l.procs.list(), nil
}

// Process describes one background process.
func (m *Manager) Process(_ context.Context, tenant, id, pid string) (ProcessInfo, error) {
	p, err := m.process(tenant, id, pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	return p.snapshot(), nil
}

// WaitProcess waits up to timeout (0: not at all) for a background process
// to end and describes it; one still running then is deadline_exceeded.
func (m *Manager) WaitProcess(ctx context.Context, tenant, id, pid string, timeout time.Duration) (ProcessInfo, error) {
	p, err := m.process(tenant, id, pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	t := time.NewTimer(max(timeout, 0))
	defer t.Stop()
	select {
	case <-p.done:
		return p.snapshot(), nil
	default:
	}
	select {
	case <-p.done:
		return p.snapshot(), nil
	case <-t.C:
		return ProcessInfo{}, errdefs.DeadlineExceeded("process %s is still running after %s", pid, timeout)
	case <-ctx.Done():
		return ProcessInfo{}, errdefs.DeadlineExceeded("wait for process %s: %v", pid, ctx.Err())
	}
}

// MaxProcessRead bounds one read of a process's output.
const MaxProcessRead = ProcessOutputKeep

// ReadProcessOutput reads up to limit bytes (0 or more than
// MaxProcessRead: MaxProcessRead) of one output stream of a background
// process from offset on. With wait > 0 a read that finds nothing new of
// a running process waits up to wait for output or its end.
func (m *Manager) ReadProcessOutput(ctx context.Context, tenant, id, pid, stream string, offset int64, limit int, wait time.Duration) (ProcessOutput, error) {
	p, err := m.process(tenant, id, pid)
	if err != nil {
		return ProcessOutput{}, err
	}
	r, err := p.ring(stream)
	if err != nil {
		return ProcessOutput{}, err
	}
	if limit <= 0 || limit > MaxProcessRead {
		limit = MaxProcessRead
	}
	var deadline <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		deadline = t.C
	}
	for {
		ended := !p.isRunning() // before the read: output is complete once ended
		out, changed, err := r.read(offset, limit)
		if err != nil {
			return ProcessOutput{}, err
		}
		out.EOF = ended && out.NextOffset == r.size()
		if len(out.Data) > 0 || out.Dropped > 0 || ended || deadline == nil {
			return out, nil
		}
		select {
		case <-changed:
		case <-p.done:
		case <-deadline:
			return out, nil
		case <-ctx.Done():
			return out, nil
		}
	}
}

// KillProcess sends signal (TERM, KILL, INT, HUP, QUIT, USR1 or USR2, with
// or without "SIG"; "" = KILL) to a background process's whole tree. It
// returns at once; WaitProcess tells when the process ended. A process
// that has ended is failed_precondition.
func (m *Manager) KillProcess(_ context.Context, tenant, id, pid, signal string) (ProcessInfo, error) {
	sig, err := ParseSignal(signal)
	if err != nil {
		return ProcessInfo{}, err
	}
	p, err := m.process(tenant, id, pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	p.mu.Lock()
	if p.state != ProcessRunning {
		st := p.state
		p.mu.Unlock()
		return ProcessInfo{}, errdefs.FailedPrecondition("process %s has already ended (%s)", pid, st)
	}
	p.killReq = true
	p.mu.Unlock()
	select {
	case p.signals <- sig:
	default:
		return ProcessInfo{}, errdefs.ResourceExhausted("process %s has signals pending delivery; try again", pid)
	}
	return p.snapshot(), nil
}

// signalsByName are the signals a caller may send a process.
var signalsByName = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

// ParseSignal reads a signal name a caller may send a background process
// ("TERM" or "SIGTERM"; "" is KILL), or its number.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGKILL, nil
	}
	key := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	if sig, ok := signalsByName[key]; ok {
		return sig, nil
	}
	if n, err := strconv.Atoi(name); err == nil {
		for _, sig := range signalsByName {
			if int(sig) == n {
				return sig, nil
			}
		}
	}
	return 0, errdefs.InvalidArgument("signal %q: want TERM, KILL, INT, HUP, QUIT, USR1 or USR2", name)
}

// errProcessEnded is what a write to the stdin of a process that ended
// meets.
var errProcessEnded = errors.New("the process has ended")

// openStdin gives a process started with stdin open (or on a pty) the
// pipe WriteProcessStdin writes to, after the bytes opts.Stdin already
// holds.
func (p *process) openStdin(opts *ProcessOptions) {
	if !opts.OpenStdin && opts.Pty == nil {
		return
	}
	r, w := io.Pipe()
	p.stdin, p.stdinSem = w, make(chan struct{}, 1)
	if opts.Stdin != nil {
		opts.Stdin = io.MultiReader(opts.Stdin, r)
	} else {
		opts.Stdin = r
	}
}

// execDetail adds how a command runs (as which user, on a pty) to an
// audit record's detail: never the command itself.
func execDetail(d map[string]string, opts guest.ExecOptions) {
	if opts.User != "" {
		d["user"] = opts.User
	}
	if opts.Pty != nil {
		d["pty"] = "true"
	}
}

// Limits on writes to a process's stdin.
const (
	// MaxStdinWrite bounds the bytes of one write.
	MaxStdinWrite = 1 << 20
	// stdinWait bounds how long one write waits for the process to take
	// its bytes (a process that does not read its stdin fills the pipe).
	stdinWait = 30 * time.Second
)

// WriteProcessStdin appends data to a running background process's
// stdin and, with closeStdin, then closes it (on a pty: sends its EOF
// character). Writes are delivered in order, one at a time. A process
// started without stdin, or whose stdin was closed, or that has ended,
// is failed_precondition; one that does not take the bytes within
// stdinWait is deadline_exceeded (the bytes stay queued, in order). It
// is audited with the byte count only.
func (m *Manager) WriteProcessStdin(ctx context.Context, tenant, id, pid string, data []byte, closeStdin bool) (ProcessInfo, error) {
	if len(data) > MaxStdinWrite {
		return ProcessInfo{}, errdefs.InvalidArgument("%d bytes of stdin in one write: at most %d", len(data), MaxStdinWrite)
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return ProcessInfo{}, err
	}
	p, err := l.procs.get(id, pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	began := time.Now()
	err = p.writeStdin(ctx, data, closeStdin)
	rec := auditRecord(store.EventProcessStdin, l.infoCopy())
	rec.Bytes, rec.DurationMS, rec.Outcome = int64(len(data)), time.Since(began).Milliseconds(), outcomeOf(err)
	rec.Detail = map[string]string{"process": pid}
	if closeStdin {
		rec.Detail["closed"] = "true"
	}
	m.audit(ctx, rec)
	if err != nil {
		return ProcessInfo{}, err
	}
	return p.snapshot(), nil
}

// writeStdin does a WriteProcessStdin's write and close, in turn with
// every other.
func (p *process) writeStdin(ctx context.Context, data []byte, closeStdin bool) error {
	if p.stdin == nil {
		return errdefs.FailedPrecondition("process %s was started without stdin (start it with stdin open, or on a pty)", p.info.ID)
	}
	wait := time.NewTimer(stdinWait)
	defer wait.Stop()
	select {
	case p.stdinSem <- struct{}{}:
	case <-ctx.Done():
		return errdefs.DeadlineExceeded("stdin of process %s: %v", p.info.ID, ctx.Err())
	case <-wait.C:
		return errdefs.DeadlineExceeded("stdin of process %s: earlier writes are still waiting for it to read", p.info.ID)
	}
	if err := p.stdinUsable(); err != nil {
		<-p.stdinSem
		return err
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-p.stdinSem }() // only once the bytes are in: writes stay in order
		var err error
		if len(data) > 0 {
			_, err = p.stdin.Write(data)
		}
		if err == nil && closeStdin {
			p.mu.Lock()
			p.stdinClosed, p.stdinGone = true, true
			p.mu.Unlock()
			err = p.stdin.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return errdefs.FailedPrecondition("stdin of process %s: %v", p.info.ID, err)
		}
		return nil
	case <-ctx.Done():
		return errdefs.DeadlineExceeded("stdin of process %s: %v (the bytes stay queued)", p.info.ID, ctx.Err())
	case <-wait.C:
		return errdefs.DeadlineExceeded("process %s has not read its stdin for %s (the bytes stay queued)", p.info.ID, stdinWait)
	}
}

// stdinUsable says why stdin takes no writes now; nil if it does. The
// caller holds stdinSem.
func (p *process) stdinUsable() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.state != ProcessRunning:
		return errdefs.FailedPrecondition("process %s has already ended (%s)", p.info.ID, p.state)
	case p.stdinClosed:
		return errdefs.FailedPrecondition("the stdin of process %s is closed", p.info.ID)
	}
	return nil
}

// ResizeProcess sets the window size of a background process's pty (the
// process gets SIGWINCH). A process without a pty, or that has ended, is
// failed_precondition; a size outside 1..1000 x 1..1000 is
// invalid_argument.
func (m *Manager) ResizeProcess(_ context.Context, tenant, id, pid string, size guest.WindowSize) (ProcessInfo, error) {
	if err := pty.CheckSize(size.Rows, size.Cols); err != nil {
		return ProcessInfo{}, errdefs.InvalidArgument("%v", err)
	}
	p, err := m.process(tenant, id, pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	if p.resize == nil {
		return ProcessInfo{}, errdefs.FailedPrecondition("process %s does not run on a pty", pid)
	}
	p.mu.Lock()
	if p.state != ProcessRunning {
		st := p.state
		p.mu.Unlock()
		return ProcessInfo{}, errdefs.FailedPrecondition("process %s has already ended (%s)", pid, st)
	}
	select {
	case p.resize <- size:
		p.info.Pty = &size
	default:
		p.mu.Unlock()
		return ProcessInfo{}, errdefs.ResourceExhausted("process %s has resizes pending delivery; try again", pid)
	}
	p.mu.Unlock()
	return p.snapshot(), nil
}
