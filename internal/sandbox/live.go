package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/template"
)

// live is one registered sandbox.
type live struct {
	// ops is held for reading by every call into the guest and for
	// writing by fork (which must snapshot a quiet guest). Kill and expiry
	// never wait on it: they destroy the VM first, which makes in-flight
	// calls fail at once, so a running command cannot delay a deadline.
	ops sync.RWMutex
	// ending is set once, by the first end(); calls that see it fail
	// with NotFound.
	ending atomic.Bool
	// attached is closed once vm is final: at registration for a sandbox
	// this daemon made, when re-attaching ends (either way) for one a
	// previous daemon left running. vm and attachErr are written before it
	// closes and never after; read them only after <-attached.
	attached  chan struct{}
	machine   Machine
	attachErr error
	// attachCtx bounds a re-attachment and cancelAttach stops it (both nil
	// for sandboxes this daemon made); immutable after registration.
	attachCtx    context.Context
	cancelAttach context.CancelFunc
	id           string // immutable
	stateDir     string // immutable; the VM's host-side state directory

	mu       sync.Mutex // guards info and egressCA; never held across a guest call
	info     Info       // guarded by mu
	egressCA *egress.CA // guarded by mu; TLS inspection CA, once the policy asked for it
	// caPending: recovery made egressCA, which re-attachment must still
	// install in the guest. Guarded by mu.
	caPending bool
	// slot is set at registration or by recovery before the API serves,
	// nil without networking or while paused; released by end and pause.
	// Guarded by mu once registered.
	slot *netpool.Slot
	// pausedDir is where the sandbox is saved while paused, "" otherwise
	// (pause.go); machine is nil while it is set. Guarded by mu, and
	// changed only under ops held exclusively.
	pausedDir string
	exec      execDefaults // immutable
	procs     processTable // background processes (process.go)
	// archives counts the archive transfers in progress (see
	// takeArchiveSlot).
	archives atomic.Int32
}

// maxArchivesPerSandbox bounds one sandbox's archive transfers at once:
// each packs or unpacks a tree in the guest with its own buffers, and 60
// concurrent downloads of one sandbox took its guest's memory in seconds
// ("System is deadlocked on memory").
const maxArchivesPerSandbox = 4

// takeArchiveSlot counts one archive transfer of l, or refuses it.
func (l *live) takeArchiveSlot() (release func(), err error) {
	if l.archives.Add(1) > maxArchivesPerSandbox {
		l.archives.Add(-1)
		return nil, errdefs.ResourceExhausted("sandbox %s already has %d archive transfers in progress; wait for one to end", l.id, maxArchivesPerSandbox)
	}
	return func() { l.archives.Add(-1) }, nil
}

// newLive returns a sandbox whose VM is attached already.
// execDefaults is what a sandbox's execs get from its template: the
// environment (before the request's own) and the working directory of an
// exec that names none.
type execDefaults struct {
	env []string
	cwd string
}

// apply gives opts the template's environment (the caller's variables
// win) and working directory (unless the caller named one).
func (d execDefaults) apply(opts *guest.ExecOptions) {
	opts.Env = append(append([]string(nil), d.env...), opts.Env...)
	if opts.Cwd == "" {
		opts.Cwd = d.cwd
	}
}

// defaultsOf is t's exec defaults.
func defaultsOf(t *template.Template) execDefaults {
	return execDefaults{env: t.EnvList(), cwd: t.Workdir}
}

func newLive(info Info, v Machine, slot *netpool.Slot, exec execDefaults) *live {
	l := &live{attached: make(chan struct{}), machine: v, id: info.ID, stateDir: v.StateDir(), info: info, slot: slot, exec: exec}
	close(l.attached)
	return l
}

// current is l's machine as it is now: nil while paused (or while a
// pause is saving it). Calls under ops (read) may use l.machine itself:
// it changes only under ops held exclusively.
func (l *live) current() Machine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.machine
}

// infoCopy returns a copy of the sandbox's externally visible state
// (Info), taken under l.mu. It has nothing to do with VM snapshots.
func (l *live) infoCopy() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// attachWait bounds how long a call waits for a sandbox that a restarted
// daemon is still re-attaching to.
const attachWait = 45 * time.Second

// awaitAttached waits until l's VM can take calls: at once for sandboxes
// this daemon made, until re-attachment ends for adopted ones.
func (l *live) awaitAttached(ctx context.Context) error {
	select {
	case <-l.attached:
	case <-ctx.Done():
		return errdefs.Unavailable("sandbox %s is still being re-attached after a daemon restart: %v", l.id, ctx.Err())
	case <-time.After(attachWait):
		return errdefs.Unavailable("sandbox %s is still being re-attached after a daemon restart (waited %s)", l.id, attachWait)
	}
	if l.attachErr != nil {
		return errdefs.FailedPrecondition("sandbox %s is failed: the restarted daemon could not re-attach to it", l.id)
	}
	return nil
}
