package sandbox

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/store"
)

// StartProcess starts a background process in a running sandbox and
// returns at once; see process.go. A command that cannot be found or
// started still starts a process, which exits with 127 or 126 and the
// reason on stderr, as exec does. opts.Signals and opts.MaxOutputBytes are
// the Manager's to set.
func (m *Manager) StartProcess(ctx context.Context, tenant, id string, opts guest.ExecOptions) (ProcessInfo, error) {
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
		l.exec.apply(&opts)
		opts.MaxOutputBytes, opts.Signals = processGuestOutput, p.signals
		// Registered under the ops lock, so a fork (which takes it
		// exclusively) sees this process and refuses.
		m.wg.Add(1)
		go m.runProcess(l, info, p, opts)
		return nil
	})
	if info.ID == "" {
		return ProcessInfo{}, err
	}
	rec := auditRecord(store.EventProcessStart, info)
	rec.Outcome = outcomeOf(err)
	if p != nil {
		rec.Detail = map[string]string{"process": p.info.ID}
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
