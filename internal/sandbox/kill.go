package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// Kill destroys a running sandbox of tenant.
func (m *Manager) Kill(ctx context.Context, tenant, id string) error {
	l, err := m.lookup(tenant, id)
	if err != nil {
		return err
	}
	if !m.end(ctx, l, store.StateKilled, store.EventKill, reasonKilled) {
		return ending(l, "")
	}
	return nil
}

// end destroys l's VM and records why; it reports false if l had already
// ended. reason is one of the reason constants (metrics label and audit
// detail).
func (m *Manager) end(ctx context.Context, l *live, state, event, reason string) bool {
	began := time.Now()
	if !l.ending.CompareAndSwap(false, true) {
		return false
	}
	now := stamp()
	info := l.infoCopy()
	// Destroy without waiting for calls in flight: they fail as soon as
	// the VM is gone, so a running command cannot hold a sandbox past its
	// deadline or a kill. (ending already refuses new calls.)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	destroyErr := m.destroyVM(dctx, l)
	cancel()
	m.failpoint(FailKillDestroyed)
	outcome := "ok"
	if destroyErr != nil {
		outcome = errdefs.Code(destroyErr)
		m.log.Error("destroy sandbox", "sandbox", info.ID, "err", destroyErr)
		m.cfg.Metrics.Error(destroyErr)
	}
	rec := auditRecord(event, info)
	rec.ParentID, rec.DurationMS, rec.Outcome = info.ParentID, time.Since(began).Milliseconds(), outcome
	rec.Detail = map[string]string{"lifetime_ms": strconv.FormatInt(now.Sub(info.CreatedAt).Milliseconds(), 10), "reason": reason}
	m.audit(ctx, rec)
	// Only now does the sandbox show as ended: whoever sees that state can
	// rely on its VM, state directory (or saved state) and network being
	// gone, and on its end being in the audit log.
	l.mu.Lock()
	slot, wasPaused := l.slot, l.pausedDir != ""
	l.slot = nil
	l.info.NetAddr = ""
	l.info.State, l.info.EndedAt = state, &now
	l.mu.Unlock()
	m.releaseNet(info.ID, slot)

	m.mu.Lock()
	delete(m.sandboxes, info.ID)
	if wasPaused {
		m.paused--
	}
	n := len(m.sandboxes) - m.paused
	m.mu.Unlock()
	if err := m.cfg.Store.UpdateSandboxState(context.WithoutCancel(ctx), info.ID, state, now); err != nil {
		m.log.Error("persist sandbox end", "sandbox", info.ID, "err", err)
	}
	if reason != reasonShutdown {
		m.cfg.Metrics.Killed(metricReason(reason))
	}
	m.cfg.Metrics.SetRunning(n)
	m.log.Info("sandbox ended", "sandbox", info.ID, "tenant", info.Tenant, "state", state, "reason", reason)
	return true
}

// metricReason folds end reasons into the metric's small label set.
func metricReason(reason string) string {
	switch reason {
	case reasonKilled, reasonExpired:
		return reason
	default:
		return reasonFailed
	}
}

// destroyVM ends l's VM. A re-attachment in progress is stopped first; if
// it never produced a VM, the VMM left by the previous daemon is killed by
// its state directory.
func (m *Manager) destroyVM(ctx context.Context, l *live) error {
	if l.cancelAttach != nil {
		l.cancelAttach()
	}
	select {
	case <-l.attached:
	case <-ctx.Done():
		return fmt.Errorf("sandbox %s: re-attachment did not stop: %w", l.id, ctx.Err())
	}
	l.mu.Lock()
	mach, paused := l.machine, l.pausedDir
	l.mu.Unlock()
	switch {
	case paused != "":
		return removePaused(paused)
	case mach != nil:
		return mach.Destroy(ctx)
	}
	// Never attached, or a pause has it: end it by its state directory.
	return m.killOrphan(ctx, l.stateDir)
}
