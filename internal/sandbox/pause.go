package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
)

// Pause and resume. A paused sandbox is saved to disk, in its own
// directory under Config.PauseDir (its RAM, sparse, and its device
// state: vm.Host.Pause), and holds nothing else on the host: no VMM
// process, no guest memory, no network slot, no capacity against
// MaxSandboxes. It stays registered and its lifecycle goes on:
//
//   - its TTL keeps counting: the reaper expires a paused sandbox at its
//     deadline like a running one (its saved state is removed), and
//     SetTTL moves it within the same maximum lifetime from creation,
//     so pausing never stretches a sandbox past the tenant's policy;
//   - kill removes its saved state;
//   - calls into the guest (exec, files, processes, probe, fork) fail
//     with failed_precondition naming it paused; get, list, set TTL and
//     set egress answer (a policy set while paused is put in force in
//     the slot it gets at resume);
//   - a restarted daemon finds it paused and can resume it (recover.go).
//
// Resume restores it under the same id, with its own clock, entropy and
// identity pushed as after every restore, in a new network slot holding
// the same egress policy (its host-side address may change: the guest's
// side is every slot's). Both are audited (pause, resume) with ids and
// sizes only.

// StatePaused is the state of a sandbox saved to disk by Pause.
const StatePaused = "paused"

// Pause saves a running sandbox to disk and ends its VMM (see above). A
// sandbox with background processes running is refused: their guest
// calls end with the VMM (wait for or kill them first).
func (m *Manager) Pause(ctx context.Context, tenant, id string) (Info, error) {
	began := time.Now()
	if m.cfg.PauseDir == "" {
		return Info{}, errdefs.FailedPrecondition("this server keeps no paused sandboxes (it has no pause directory)")
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return Info{}, err
	}
	if err := l.awaitAttached(ctx); err != nil {
		return Info{}, err
	}
	info, saved, err := m.pauseLive(ctx, l)
	if info.ID == "" {
		return Info{}, err
	}
	rec := auditRecord(store.EventPause, info)
	rec.Bytes, rec.DurationMS, rec.Outcome = saved, time.Since(began).Milliseconds(), outcomeOf(err)
	m.audit(ctx, rec)
	if err != nil {
		return Info{}, fmt.Errorf("pause %s: %w", id, err)
	}
	m.log.Info("sandbox paused", "sandbox", id, "tenant", tenant, "bytes", saved, "ms", time.Since(began).Milliseconds())
	return info, nil
}

// pauseLive does a pause under l's ops lock, held exclusively: the save
// needs a quiet guest. It returns l's info (zero when nothing was tried)
// and the bytes saved.
func (m *Manager) pauseLive(ctx context.Context, l *live) (Info, int64, error) {
	l.ops.Lock()
	defer l.ops.Unlock()
	info := l.infoCopy()
	switch {
	case l.ending.Load():
		return Info{}, 0, ending(l, "")
	case info.State == StatePaused:
		return info, 0, errdefs.FailedPrecondition("sandbox %s is already paused", l.id)
	}
	if n := l.procs.running(); n > 0 {
		return info, 0, errdefs.FailedPrecondition("sandbox %s has %d background processes running: a pause needs them ended (wait for or kill them first)", l.id, n)
	}
	tmpl, err := m.templates.Get(info.Template)
	if err != nil {
		return info, 0, err
	}
	dir := m.pausedDir(l.id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return info, 0, err
	}
	l.mu.Lock()
	mach := l.machine
	l.machine = nil // its watcher must not take the VMM's end for a crash
	l.mu.Unlock()
	saved, err := m.machines.Pause(ctx, mach, tmpl, dir)
	if err != nil && saved == 0 {
		// Not saved: the sandbox goes on as it was, or ends as failed if
		// its VMM died meanwhile (its watcher left that to this call).
		os.RemoveAll(dir)
		l.mu.Lock()
		l.machine = mach
		l.mu.Unlock()
		if !alive(mach) && !l.ending.Load() {
			m.end(ctx, l, store.StateFailed, store.EventFail, reasonVMExited)
		}
		return info, 0, err
	}
	if err != nil {
		// Saved, but the VMM did not go away cleanly: the save stands.
		m.log.Error("pause: destroy the paused VM", "sandbox", l.id, "err", err)
	}
	return m.markPaused(ctx, l, dir, saved)
}

// markPaused records l as paused in dir: its slot released, the store
// and its info updated. A kill that came meanwhile wins: the save is
// removed.
func (m *Manager) markPaused(ctx context.Context, l *live, dir string, saved int64) (Info, int64, error) {
	l.mu.Lock()
	if l.ending.Load() {
		l.mu.Unlock()
		os.RemoveAll(dir)
		return l.infoCopy(), saved, ending(l, ": it ended while it was being paused")
	}
	slot := l.slot
	l.slot, l.pausedDir = nil, dir
	l.info.State, l.info.NetAddr = StatePaused, ""
	info := l.info
	l.mu.Unlock()
	m.releaseNet(l.id, slot)
	m.mu.Lock()
	m.paused++
	m.mu.Unlock()
	if err := m.cfg.Store.PauseSandbox(context.WithoutCancel(ctx), l.id, dir); err != nil {
		// The guest is on disk and nowhere else: keep serving it as paused
		// (a restart would not find it, and would reap the directory).
		m.log.Error("persist sandbox pause", "sandbox", l.id, "err", err)
	}
	return info, saved, nil
}

// Resume starts a paused sandbox again under its id (see above). It
// needs room under MaxSandboxes like a create.
func (m *Manager) Resume(ctx context.Context, tenant, id string) (Info, error) {
	began := time.Now()
	if err := m.admit(); err != nil {
		return Info{}, err
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return Info{}, err
	}
	info, pausedFor, err := m.resumeLive(ctx, l)
	if info.ID == "" {
		return Info{}, err
	}
	rec := auditRecord(store.EventResume, info)
	rec.DurationMS, rec.Outcome = time.Since(began).Milliseconds(), outcomeOf(err)
	if err == nil {
		rec.Detail = map[string]string{"paused_ms": strconv.FormatInt(pausedFor.Milliseconds(), 10)}
		if info.NetAddr != "" {
			rec.Detail["net_addr"] = info.NetAddr
		}
	}
	m.audit(ctx, rec)
	if err != nil {
		return Info{}, fmt.Errorf("resume %s: %w", id, err)
	}
	m.log.Info("sandbox resumed", "sandbox", id, "tenant", tenant, "ms", time.Since(began).Milliseconds())
	return info, nil
}

// resumeLive restores l under its ops lock, held exclusively, and
// returns its info (zero when nothing was tried) and how long it was
// paused. Every step's undo is registered as it is made, so a failed
// resume leaves l paused with its saved state as it was.
func (m *Manager) resumeLive(ctx context.Context, l *live) (_ Info, _ time.Duration, err error) {
	l.ops.Lock()
	defer l.ops.Unlock()
	info := l.infoCopy()
	l.mu.Lock()
	dir := l.pausedDir
	l.mu.Unlock()
	switch {
	case l.ending.Load():
		return Info{}, 0, ending(l, "")
	case dir == "":
		return info, 0, errdefs.FailedPrecondition("sandbox %s is not paused", l.id)
	}
	var cu cleanup.Stack
	defer func() { m.logUndo("resume", cu.Clean(ctx)) }()
	if err := m.unpause(); err != nil {
		return info, 0, err
	}
	cu.AddFunc(m.repause)
	tmpl, err := m.templates.Open(info.Template)
	if err != nil {
		return info, 0, err
	}
	plan, err := m.planEgress(info.Tenant, &info.Egress)
	if err != nil {
		return info, 0, fmt.Errorf("the sandbox's egress policy: %w", err)
	}
	v, slot, err := startMachine(ctx, m.cfg.Net, func(tap *os.File) (Machine, error) {
		return m.machines.Resume(ctx, tmpl, dir, l.id, tap)
	})
	if err != nil {
		return info, 0, err
	}
	cu.AddFunc(func() { m.releaseNet(l.id, slot) })
	cu.Add(v.Destroy)
	if err := m.resumeEgress(ctx, l, v, slot, plan); err != nil {
		return info, 0, err
	}
	netSlot := store.NoNetSlot
	if slot != nil {
		netSlot = slot.Index
	}
	if err := m.cfg.Store.ResumeSandbox(ctx, l.id, v.PID(), v.StateDir(), netSlot); err != nil {
		return info, 0, err
	}
	return m.markResumed(l, v, slot, dir, &cu)
}

// resumeEgress puts l's policy in force in the resumed machine's slot,
// with the sandbox's inspection CA (a new one, installed in the guest,
// when a restarted daemon no longer has it).
func (m *Manager) resumeEgress(ctx context.Context, l *live, v Machine, slot *netpool.Slot, plan egressPlan) error {
	if slot == nil {
		return nil
	}
	l.mu.Lock()
	ca := l.egressCA
	l.mu.Unlock()
	if ca == nil && plan.policy.Inspects() {
		var err error
		if ca, err = m.newEgressCA(l.id); err != nil {
			return err
		}
		if err := installEgressCA(ctx, v, ca); err != nil {
			return err
		}
		l.mu.Lock()
		l.egressCA = ca
		l.mu.Unlock()
	}
	return m.applyEgress(slot, l.id, plan, ca)
}

// markResumed makes v l's machine. A kill that came meanwhile wins: the
// caller's undo destroys v, and end removes the saved state.
func (m *Manager) markResumed(l *live, v Machine, slot *netpool.Slot, dir string, cu *cleanup.Stack) (Info, time.Duration, error) {
	l.mu.Lock()
	if l.ending.Load() {
		l.mu.Unlock()
		return l.infoCopy(), 0, ending(l, ": it ended while it was being resumed")
	}
	pausedFor := time.Duration(0)
	if fi, err := os.Stat(dir); err == nil {
		pausedFor = time.Since(fi.ModTime())
	}
	l.machine, l.slot, l.pausedDir = v, slot, ""
	l.info.State = store.StateRunning
	if slot != nil {
		l.info.NetAddr = slot.NsIP.String()
	}
	info := l.info
	l.mu.Unlock()
	cu.Release()
	if err := os.RemoveAll(dir); err != nil {
		m.log.Error("remove resumed sandbox's saved state", "sandbox", l.id, "err", err)
	}
	m.goWatch(l)
	return info, pausedFor, nil
}

// pausedDir is where sandbox id is saved while paused.
func (m *Manager) pausedDir(id string) string { return filepath.Join(m.cfg.PauseDir, id) }

// unpause counts a paused sandbox as running again, within MaxSandboxes;
// repause undoes it.
func (m *Manager) unpause() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sandboxes)-m.paused+m.reserved >= m.cfg.MaxSandboxes {
		return errdefs.ResourceExhausted("this host runs its maximum of %d sandboxes", m.cfg.MaxSandboxes)
	}
	m.paused--
	return nil
}

func (m *Manager) repause() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.paused++
}

// removePaused removes a paused sandbox's saved state (its end).
func removePaused(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
