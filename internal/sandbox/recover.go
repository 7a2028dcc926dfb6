package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
)

// Recovery after a (re)start, in two parts.
//
// Synchronously, before New returns (and so before the API serves), only
// fast, local work: sandboxes past their deadline are expired and those
// whose VMM is gone are failed, the survivors are registered as
// "re-attaching", their network slots are adopted with their policies
// re-applied, and VM state directories nobody owns are removed with their
// processes. Nothing here waits on a guest.
//
// Then, in parallel and each bounded by attachTimeout, the daemon
// re-attaches to every surviving guest (a fresh agent session, see
// guest.DialOptions.Adopting). Meanwhile the API already answers: get and
// list show such a sandbox as running, and calls into it wait for the
// re-attachment (at most attachWait) instead of failing. One that cannot
// be re-attached ends as failed (reason "reattach_failed") and its VMM is
// killed.

// attachTimeout bounds one re-attachment. A healthy guest answers in well
// under a second; the bound is for a guest too loaded to answer at all.
const attachTimeout = 30 * time.Second

// recover reconciles the store and the host; see above.
func (m *Manager) recover(ctx context.Context) error {
	sbs, err := m.cfg.Store.LiveSandboxes(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	netSlots := map[string]int{} // surviving sandbox -> its recorded slot
	var survivors []store.Sandbox
	now := time.Now()
	paused := map[string]bool{}
	for _, sb := range sbs {
		// Directories and jails are named by the machine, which a
		// caller-chosen sandbox id (CreateRequest.ID) does not name. A
		// paused one's old VM directory is an orphan.
		known[machineID(sb)] = sb.PausedDir == ""
		switch {
		case !now.Before(sb.Deadline):
			m.endRecovered(ctx, sb, store.StateExpired, store.EventExpire, reasonExpired)
		case sb.PausedDir != "":
			m.registerPaused(sb)
			paused[filepath.Base(sb.PausedDir)] = true
		case !m.machines.Live(sb.PID, sb.StateDir):
			m.endRecovered(ctx, sb, store.StateFailed, store.EventFail, reasonVMExited)
		default:
			m.registerSurvivor(sb)
			survivors = append(survivors, sb)
			netSlots[sb.ID] = sb.NetSlot
		}
	}
	// Slots first, while no re-attachment runs: nothing else touches the
	// survivors yet, so their slots are set without racing an end.
	noNet := m.recoverNet(ctx, netSlots)
	for _, sb := range survivors {
		m.mu.Lock()
		l := m.sandboxes[sb.ID]
		m.mu.Unlock()
		if noNet[sb.ID] {
			l.attachErr = errdefs.FailedPrecondition("sandbox %s: network slot lost", sb.ID)
			close(l.attached) // never attached: end kills the VMM by its state directory
			m.end(ctx, l, store.StateFailed, store.EventFail, reasonNetworkLost)
			continue
		}
		m.goAttach(l, sb)
	}
	m.cfg.Metrics.SetRunning(len(m.all()))
	if err := m.reapOrphanDirs(ctx, known); err != nil {
		return err
	}
	m.reapPausedDirs(paused)
	// Jail cgroups of this daemon's VMs that died with the old daemon (the
	// kernel reaped them; nobody removed their cgroups).
	alive := map[string]bool{}
	for _, sb := range survivors {
		alive[machineID(sb)] = true
	}
	if err := m.machines.SweepJails(func(id string) bool {
		return alive[id] || !hasAnyPrefix(id, daemonDirPrefixes)
	}); err != nil {
		m.log.Error("sweep jail cgroups", "err", err)
	}
	return nil
}

// endRecovered records the end of a sandbox found dead or overdue at
// recovery and removes what is left of its VM.
func (m *Manager) endRecovered(ctx context.Context, sb store.Sandbox, state, event, reason string) {
	if err := m.killOrphan(ctx, sb.StateDir); err != nil {
		m.log.Error("reap sandbox", "sandbox", sb.ID, "err", err)
	}
	if err := removePaused(sb.PausedDir); err != nil {
		m.log.Error("remove paused sandbox's saved state", "sandbox", sb.ID, "err", err)
	}
	ended := stamp()
	if err := m.cfg.Store.UpdateSandboxState(ctx, sb.ID, state, ended); err != nil {
		m.log.Error("persist sandbox end", "sandbox", sb.ID, "err", err)
	}
	rec := auditRecord(event, Info{ID: sb.ID, Tenant: sb.Tenant, Template: sb.Template, Metadata: sb.Metadata})
	rec.ParentID, rec.Outcome = sb.ParentID, "ok"
	rec.Detail = map[string]string{"during": "recovery", "reason": reason}
	m.audit(ctx, rec)
	m.log.Info("sandbox ended during recovery", "sandbox", sb.ID, "tenant", sb.Tenant, "state", state, "reason", reason)
	m.cfg.Metrics.Killed(metricReason(reason))
}

// registerSurvivor makes a sandbox the previous daemon left running
// visible again, not yet attached (see goAttach).
func (m *Manager) registerSurvivor(sb store.Sandbox) {
	var exec execDefaults
	if t, err := m.templates.Get(sb.Template); err == nil {
		exec = defaultsOf(t)
	}
	actx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	l := &live{attached: make(chan struct{}), cancelAttach: cancel, attachCtx: actx, id: sb.ID, stateDir: sb.StateDir,
		info: infoFromStore(sb), exec: exec}
	m.mu.Lock()
	m.sandboxes[sb.ID] = l
	m.mu.Unlock()
}

// registerPaused makes a sandbox the previous daemon paused visible
// again, paused: it has no VMM to re-attach to, and resumes from its
// saved state on request.
func (m *Manager) registerPaused(sb store.Sandbox) {
	var exec execDefaults
	if t, err := m.templates.Get(sb.Template); err == nil {
		exec = defaultsOf(t)
	}
	l := &live{attached: make(chan struct{}), id: sb.ID, stateDir: filepath.Join(m.machines.RunDir(), sb.ID),
		info: infoFromStore(sb), exec: exec, pausedDir: sb.PausedDir}
	close(l.attached)
	m.mu.Lock()
	m.sandboxes[sb.ID] = l
	m.paused++
	m.mu.Unlock()
}

// reapPausedDirs removes saved states in the pause directory that no
// paused sandbox owns (a pause cut short by a crash before it was
// recorded, or a sandbox ended meanwhile).
func (m *Manager) reapPausedDirs(paused map[string]bool) {
	if m.cfg.PauseDir == "" {
		return
	}
	entries, err := os.ReadDir(m.cfg.PauseDir)
	if err != nil {
		return // none yet
	}
	for _, e := range entries {
		if e.IsDir() && !paused[e.Name()] && hasAnyPrefix(e.Name(), daemonDirPrefixes) {
			if err := os.RemoveAll(filepath.Join(m.cfg.PauseDir, e.Name())); err != nil {
				m.log.Error("remove orphaned paused state", "dir", e.Name(), "err", err)
			}
		}
	}
}

// goAttach re-attaches to a survivor's guest in the background, bounded by
// attachTimeout, and ends the sandbox if that fails.
func (m *Manager) goAttach(l *live, sb store.Sandbox) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer l.cancelAttach()
		began := time.Now()
		v, err := m.machines.Adopt(l.attachCtx, machineID(sb), sb.StateDir, sb.PID)
		l.machine, l.attachErr = v, err
		close(l.attached)
		if err != nil {
			m.log.Warn("cannot re-attach to sandbox", "sandbox", sb.ID, "err", err)
			m.end(context.Background(), l, store.StateFailed, store.EventFail, reasonAttachFailed)
			return
		}
		m.log.Info("sandbox re-attached", "sandbox", sb.ID, "tenant", sb.Tenant, "ms", time.Since(began).Milliseconds())
		if l.ending.Load() {
			return // ended meanwhile; end destroyed what it found
		}
		l.mu.Lock()
		ca := l.egressCA
		pending := l.caPending
		l.caPending = false
		l.mu.Unlock()
		if pending {
			if err := installEgressCA(l.attachCtx, v, ca); err != nil {
				m.log.Warn("cannot install the new egress CA in a re-attached sandbox; its inspected TLS will fail", "sandbox", sb.ID, "err", err)
			}
		}
		m.goWatch(l)
	}()
}

// machineID is the id of sb's machine: its state directory's name, which
// is the sandbox id unless the caller chose that (CreateRequest.ID).
func machineID(sb store.Sandbox) string {
	if sb.StateDir == "" {
		return sb.ID
	}
	return filepath.Base(sb.StateDir)
}

// daemonDirPrefixes are the names of the run directory entries a daemon
// makes: sandbox VMs (warm-pool clones and fork children included) and
// fork data ("fork-" named the fork receivers of earlier daemons, which
// migrated a parent; their leftovers are still swept). Anything else
// there (a one-shot `airlock run`, a template bake, a bench) belongs to
// another process and is left alone.
var daemonDirPrefixes = []string{"sbx-", "fork-", "forkdata-"}

// reapOrphanDirs removes VM state directories in the run directory that no
// sandbox of this daemon owns (warm-pool clones of the previous daemon,
// VMs of sandboxes whose record is gone), killing their QEMU only if it
// still serves that directory.
func (m *Manager) reapOrphanDirs(ctx context.Context, known map[string]bool) error {
	entries, err := os.ReadDir(m.machines.RunDir())
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() || known[e.Name()] || !hasAnyPrefix(e.Name(), daemonDirPrefixes) {
			continue
		}
		if err := m.killOrphan(ctx, filepath.Join(m.machines.RunDir(), e.Name())); err != nil {
			m.log.Error("reap orphan", "dir", e.Name(), "err", err)
		} else {
			m.log.Info("reaped orphan VM state", "dir", e.Name())
		}
	}
	return nil
}

// recoverNet gives surviving sandboxes back their network slots, with their
// stored policy re-applied, and lets the pool delete every other slot of
// this daemon's instance left on the host (those of sandboxes that died
// with the old daemon, or were being prewarmed). It returns the sandboxes
// whose slot is gone (or whose policy cannot be re-applied, or that had a
// slot while this daemon runs without networking): their network cannot
// be vouched for, so the caller ends them.
func (m *Manager) recoverNet(ctx context.Context, slots map[string]int) map[string]bool {
	dead := map[string]bool{}
	if m.cfg.Net == nil {
		for id, i := range slots {
			if i >= 0 {
				m.log.Warn("sandbox has a network slot but networking is off; ending it", "sandbox", id, "slot", i)
				dead[id] = true
			}
		}
		return dead
	}
	for _, id := range m.adoptSlots(ctx, slots) {
		dead[id] = true
	}
	return dead
}

// adoptSlots hands the recorded slots to their sandboxes and returns the
// sandboxes left without a usable network.
func (m *Manager) adoptSlots(ctx context.Context, slots map[string]int) (dead []string) {
	inUse := map[int]bool{}
	for _, i := range slots {
		if i >= 0 {
			inUse[i] = true
		}
	}
	adopted, err := m.cfg.Net.Recover(ctx, inUse)
	if err != nil {
		m.log.Error("recover network slots", "err", err) // partial: carry on with what was adopted
	}
	byIndex := map[int]*netpool.Slot{}
	for _, s := range adopted {
		byIndex[s.Index] = s
	}
	for id, i := range slots {
		if i < 0 {
			continue
		}
		m.mu.Lock()
		l := m.sandboxes[id]
		m.mu.Unlock()
		s := byIndex[i]
		if s == nil {
			m.log.Warn("sandbox's network slot is gone; ending it", "sandbox", id, "slot", i)
			dead = append(dead, id)
			continue
		}
		// The previous daemon's inspection CA key died with it: make a new
		// CA now, and install it in the guest once re-attached (until then
		// the guest's TLS through the proxy fails its handshake: closed).
		var ca *egress.CA
		l.mu.Lock()
		pol, tenant := l.info.Egress, l.info.Tenant
		l.mu.Unlock()
		if pol.Inspects() {
			var err error
			if ca, err = m.newEgressCA(id); err != nil {
				m.log.Error("make egress CA; ending sandbox", "sandbox", id, "err", err)
				dead = append(dead, id)
				continue
			}
		}
		l.mu.Lock()
		l.slot = s
		l.info.NetAddr = s.NsIP.String()
		l.egressCA = ca
		l.caPending = ca != nil
		l.mu.Unlock()
		plan, err := m.planEgress(tenant, &pol)
		if err == nil {
			err = m.applyEgress(s, id, plan, ca)
		}
		if err != nil {
			m.log.Error("re-apply egress policy; ending sandbox", "sandbox", id, "err", err)
			dead = append(dead, id)
		}
	}
	return dead
}

func (m *Manager) killOrphan(ctx context.Context, stateDir string) error {
	if stateDir == "" {
		return nil
	}
	return m.machines.KillOrphan(ctx, stateDir)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
