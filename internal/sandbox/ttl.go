package sandbox

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// SetTTL moves a running sandbox's deadline to now + ttl (longer or
// shorter), within the daemon's maximum lifetime counted from its
// creation. The new deadline is persisted (a restarted daemon keeps it)
// and audited as ttl_change with the old and new deadlines.
func (m *Manager) SetTTL(ctx context.Context, tenant, id string, ttl time.Duration) (Info, error) {
	if ttl < time.Second {
		return Info{}, errdefs.InvalidArgument("ttl %s: want at least 1s", ttl)
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return Info{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ending.Load() {
		return Info{}, errdefs.FailedPrecondition("sandbox %s is ending", id)
	}
	deadline := stamp().Add(ttl)
	if latest := l.info.CreatedAt.Add(m.cfg.MaxTTL); deadline.After(latest) {
		return Info{}, errdefs.InvalidArgument("ttl %s would end sandbox %s at %s, past this server's maximum lifetime of %s (at most %s from now)",
			ttl, id, deadline.Format(time.RFC3339), m.cfg.MaxTTL, time.Until(latest).Truncate(time.Second))
	}
	if err := m.cfg.Store.SetSandboxDeadline(ctx, id, deadline); err != nil {
		return Info{}, err
	}
	old := l.info.Deadline
	l.info.Deadline = deadline
	rec := auditRecord(store.EventTTLChange, l.info)
	rec.Outcome = "ok"
	rec.Detail = map[string]string{"from": old.UTC().Format(time.RFC3339Nano), "to": deadline.UTC().Format(time.RFC3339Nano)}
	m.audit(ctx, rec)
	return l.info, nil
}
