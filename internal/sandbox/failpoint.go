package sandbox

import (
	"io"
	"os"
	"syscall"
	"time"
)

// Failpoints: named steps at which a daemon started with
// Config.Failpoint set to that name kills itself with SIGKILL, to prove
// that a crash at that step leaves nothing behind once the next daemon
// has recovered (the fault-injection tests in internal/e2e). Unset in
// production, where every check is a string comparison.
const (
	FailCreateRestored   = "create-restored"   // clone ready, egress applied, nothing stored yet
	FailCreateRegistered = "create-registered" // stored and visible, create not yet audited or answered
	FailExecRunning      = "exec-running"      // a command has run in the guest for 3 s
	FailUploadMidway     = "upload-midway"     // part of a file has reached the guest
	FailForkSnapshotted  = "fork-snapshotted"  // fork base and state made, no child started
	FailForkChildren     = "fork-children"     // children restored, none registered
	FailKillDestroyed    = "kill-destroyed"    // the VM is gone, its end not yet stored
)

// Failpoints lists every failpoint, for tests.
var Failpoints = []string{FailCreateRestored, FailCreateRegistered, FailExecRunning, FailUploadMidway,
	FailForkSnapshotted, FailForkChildren, FailKillDestroyed}

// failpoint dies at point if it is the configured one.
func (m *Manager) failpoint(point string) {
	if m.cfg.Failpoint != "" && m.cfg.Failpoint == point {
		m.log.Warn("failpoint reached: killing this process", "failpoint", point)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not deliverable to a blocked caller only in theory
	}
}

// failpointDuring dies at point if the caller's step (a guest command
// running) is still under way after the given time; the caller calls the
// returned func when the step ends, which disarms it. A step shorter than
// that never dies, so a quick command before the long one a test aims at
// cannot take the daemon down on a slow machine.
func (m *Manager) failpointDuring(point string, after time.Duration) (done func()) {
	if m.cfg.Failpoint == "" || m.cfg.Failpoint != point {
		return func() {}
	}
	t := time.AfterFunc(after, func() { m.failpoint(point) })
	return func() { t.Stop() }
}

// failReader dies at point once n bytes have been read through it.
type failReader struct {
	r     io.Reader
	n     int64
	point string
	m     *Manager
}

func (f *failReader) Read(p []byte) (int, error) {
	k, err := f.r.Read(p)
	f.n -= int64(k)
	if f.n <= 0 {
		f.m.failpoint(f.point)
	}
	return k, err
}
