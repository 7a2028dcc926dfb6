package sandbox

import (
	"io"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
)

// Background processes: a command started in a running sandbox without
// waiting for it. Each runs over its own guest Exec stream, held by a
// goroutine of the Manager; the sandbox keeps a record of it (state, exit
// status, byte counts) and the last ProcessOutputKeep bytes of each of its
// output streams, readable while it runs and after it ended. Records live
// with the sandbox: they go when it ends, and a restarted daemon has none
// (the guest kills a process whose stream went away with the daemon).

// Limits on a sandbox's background processes.
const (
	// MaxRunningProcesses bounds the processes running at once in one
	// sandbox.
	MaxRunningProcesses = 32
	// MaxProcessRecords bounds the records one sandbox keeps; starting a
	// process past it forgets the oldest ended one.
	MaxProcessRecords = 64
	// ProcessOutputKeep is how many of the latest bytes of each stream
	// (stdout, stderr) of a process are kept; older ones are dropped.
	ProcessOutputKeep = 1 << 20
	// processGuestOutput is what the guest delivers of one stream of a
	// background process: the agent's largest per-stream cap
	// (agent.MaxOutputLimit). Past it the guest counts bytes but drops
	// them, and the process's info says the stream was truncated.
	processGuestOutput = 256 << 20
	// maxSignalName bounds the signal name a guest reports.
	maxSignalName = 16
)

// Process states.
const (
	ProcessRunning = "running"
	ProcessExited  = "exited" // ended on its own (exit code, or a signal nobody here sent)
	ProcessKilled  = "killed" // ended after a kill request or at its timeout
	ProcessFailed  = "failed" // the guest call failed without an exit status (Error says why)
)

// Process output streams.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// ProcessInfo is the externally visible state of a background process.
type ProcessInfo struct {
	ID        string
	SandboxID string
	Argv      []string // exactly one of Argv and Shell
	Shell     string
	Cwd       string
	Timeout   time.Duration // 0 = none
	State     string        // ProcessRunning, ProcessExited, ProcessKilled, ProcessFailed
	ExitCode  *int          // set once it exited (128+n for signal n)
	Signal    string        // the fatal signal's name, if any
	TimedOut  bool
	Error     string // for ProcessFailed
	StartedAt time.Time
	EndedAt   *time.Time
	// StdoutBytes and StderrBytes are what has arrived so far: the end
	// offset of each stream.
	StdoutBytes, StderrBytes int64
	// StdoutTruncated and StderrTruncated: the guest dropped output past
	// its cap (processGuestOutput), known once the process ended.
	StdoutTruncated, StderrTruncated bool
	// User is the guest user it runs as ("" = root).
	User string
	// Pty is its terminal's size, nil when it runs on pipes.
	Pty *guest.WindowSize
	// StdinOpen: its stdin takes WriteProcessStdin now (it was started
	// with stdin open, or on a pty, is running, and stdin was not closed).
	StdinOpen bool
}

// ProcessOptions is what StartProcess runs: the guest options (Signals,
// Resize and MaxOutputBytes are the Manager's to set) and whether stdin
// stays open for WriteProcessStdin after opts.Stdin's bytes (a process on
// a pty always has it open). Without it stdin is opts.Stdin, then its end
// (nil: /dev/null).
type ProcessOptions struct {
	guest.ExecOptions
	OpenStdin bool
}

// ProcessOutput is a read of one output stream of a process.
type ProcessOutput struct {
	Data []byte
	// Offset is the stream offset of Data's first byte; NextOffset the one
	// after its last, where the next read should start.
	Offset, NextOffset int64
	// Dropped is how many bytes between the requested offset and Offset
	// are no longer kept (only the latest ProcessOutputKeep are).
	Dropped int64
	// EOF: the process has ended and NextOffset is the stream's end.
	EOF bool
}

// outputRing keeps the latest ProcessOutputKeep bytes written to it, by
// absolute stream offset, and wakes readers waiting for more.
type outputRing struct {
	mu      sync.Mutex
	buf     []byte        // bytes from offset base on; only the last ProcessOutputKeep are served
	base    int64         // stream offset of buf[0]
	end     int64         // stream offset after the last byte
	changed chan struct{} // closed (and replaced) on every write
}

func newOutputRing() *outputRing { return &outputRing{changed: make(chan struct{})} }

// Write appends p. It never fails: the guest's output is bounded here, not
// refused.
func (r *outputRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	r.end += int64(len(p))
	// Compact once a quarter of the kept size is dead: amortised O(1) per
	// byte, at most 1.25 x ProcessOutputKeep held.
	if over := len(r.buf) - ProcessOutputKeep; over > ProcessOutputKeep/4 {
		r.buf = append(r.buf[:0:0], r.buf[over:]...)
		r.base += int64(over)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return len(p), nil
}

// read returns up to limit bytes from offset, and the channel that is
// closed at the next write.
func (r *outputRing) read(offset int64, limit int) (ProcessOutput, <-chan struct{}, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if offset < 0 || offset > r.end {
		return ProcessOutput{}, nil, errdefs.InvalidArgument("offset %d: want 0..%d (the bytes written so far)", offset, r.end)
	}
	start := max(r.base, r.end-ProcessOutputKeep)
	out := ProcessOutput{Offset: max(offset, start)}
	out.Dropped = out.Offset - offset
	n := min(r.end-out.Offset, int64(limit))
	i := out.Offset - r.base
	out.Data = append([]byte(nil), r.buf[i:i+n]...)
	out.NextOffset = out.Offset + n
	return out, r.changed, nil
}

func (r *outputRing) size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}

// process is one background process of a sandbox.
type process struct {
	info    ProcessInfo           // immutable fields: ID, SandboxID, Argv, Shell, Cwd, Timeout, StartedAt, User
	signals chan syscall.Signal   // read by the guest call while it runs
	resize  chan guest.WindowSize // read by the guest call while it runs; nil without a pty
	// stdin is the write end of the guest call's stdin, nil unless it was
	// started with stdin open. Writes and the close hold stdinSem (one at
	// a time, in order); runProcess closes it with an error when the
	// process ends, which unblocks them.
	stdin       *io.PipeWriter
	stdinSem    chan struct{}
	stdinClosed bool             // guarded by stdinSem
	done        chan struct{}    // closed when it ended
	stdout      *outputRing      // immutable
	stderr      *outputRing      // immutable
	mu          sync.Mutex       // guards the fields below
	state       string           // guarded by mu
	killReq     bool             // guarded by mu: a kill was asked for
	res         guest.ExecResult // guarded by mu; once ended
	err         string           // guarded by mu; for ProcessFailed
	ended       *time.Time       // guarded by mu
	// stdinGone: stdin was closed by a caller (guarded by mu; a copy of
	// stdinClosed that snapshot can read without waiting for a write).
	stdinGone bool
}

// snapshot is the process's current ProcessInfo.
func (p *process) snapshot() ProcessInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.info
	in.Argv = append([]string(nil), p.info.Argv...)
	in.State, in.Error, in.EndedAt = p.state, p.err, p.ended
	if p.info.Pty != nil {
		ws := *p.info.Pty
		in.Pty = &ws
	}
	in.StdinOpen = p.stdin != nil && p.state == ProcessRunning && !p.stdinGone
	in.StdoutBytes, in.StderrBytes = p.stdout.size(), p.stderr.size()
	if p.ended != nil && p.state != ProcessFailed {
		code := p.res.ExitCode
		in.ExitCode, in.Signal, in.TimedOut = &code, p.res.Signal, p.res.TimedOut
		in.StdoutTruncated, in.StderrTruncated = p.res.StdoutTruncated, p.res.StderrTruncated
	}
	return in
}

// finish records how the process ended and wakes its waiters.
func (p *process) finish(res guest.ExecResult, err error) ProcessInfo {
	now := stamp()
	p.mu.Lock()
	p.ended = &now
	switch {
	case err != nil:
		p.state, p.err = ProcessFailed, err.Error()
	case p.killReq || res.TimedOut:
		p.state = ProcessKilled
	default:
		p.state = ProcessExited
	}
	if len(res.Signal) > maxSignalName {
		res.Signal = res.Signal[:maxSignalName]
	}
	p.res = res
	p.mu.Unlock()
	close(p.done)
	return p.snapshot()
}

// ring is the output stream named stream.
func (p *process) ring(stream string) (*outputRing, error) {
	switch stream {
	case StreamStdout, "":
		return p.stdout, nil
	case StreamStderr:
		return p.stderr, nil
	}
	return nil, errdefs.InvalidArgument("stream %q: want stdout or stderr", stream)
}

// processTable is one sandbox's background processes.
type processTable struct {
	mu    sync.Mutex
	next  int
	procs []*process // guarded by mu; in start order
}

// add registers a new running process, within the limits.
func (t *processTable) add(sandboxID string, opts ProcessOptions) (*process, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runningLocked() >= MaxRunningProcesses {
		return nil, errdefs.ResourceExhausted("sandbox %s runs its maximum of %d background processes; wait for or kill one", sandboxID, MaxRunningProcesses)
	}
	if len(t.procs) >= MaxProcessRecords {
		for i, p := range t.procs {
			if !p.isRunning() {
				t.procs = append(t.procs[:i:i], t.procs[i+1:]...)
				break
			}
		}
	}
	t.next++
	p := &process{
		info: ProcessInfo{ID: "p-" + strconv.Itoa(t.next), SandboxID: sandboxID, Argv: append([]string(nil), opts.Argv...),
			Shell: opts.Shell, Cwd: opts.Cwd, Timeout: opts.Timeout, StartedAt: stamp(), User: opts.User},
		signals: make(chan syscall.Signal, 4), done: make(chan struct{}),
		stdout: newOutputRing(), stderr: newOutputRing(), state: ProcessRunning,
	}
	if opts.Pty != nil {
		ws := *opts.Pty
		p.info.Pty = &ws
		p.resize = make(chan guest.WindowSize, 4)
	}
	if p.info.Cwd == "" {
		p.info.Cwd = "/"
	}
	t.procs = append(t.procs, p)
	return p, nil
}

func (p *process) isRunning() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// get finds process pid.
func (t *processTable) get(sandboxID, pid string) (*process, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.procs {
		if p.info.ID == pid {
			return p, nil
		}
	}
	return nil, errdefs.NotFound("process %s not found in sandbox %s", pid, sandboxID)
}

// list is every process recorded, in start order.
func (t *processTable) list() []ProcessInfo {
	t.mu.Lock()
	procs := append([]*process(nil), t.procs...)
	t.mu.Unlock()
	out := make([]ProcessInfo, 0, len(procs))
	for _, p := range procs {
		out = append(out, p.snapshot())
	}
	return out
}

// running counts the processes still running.
func (t *processTable) running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runningLocked()
}

func (t *processTable) runningLocked() int {
	n := 0
	for _, p := range t.procs {
		if p.isRunning() {
			n++
		}
	}
	return n
}
