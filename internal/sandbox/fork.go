package sandbox

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Fork copies a running sandbox into count children: copy-on-write memory
// and disk, taken at one instant. The parent keeps running; parent and
// children never see each other's later writes. Children keep the
// parent's tenant, template, metadata, egress policy and deadline.
//
// Each child's reservation, slot and VM are undone by its own cleanup
// stack until it is registered, so a failure leaves only the children
// registered before it (which are returned with the error).
func (m *Manager) Fork(ctx context.Context, tenant, id string, count int) ([]Info, error) {
	return m.fork(ctx, tenant, id, count, nil)
}

// ForkWithIDs is Fork with the children's ids chosen by the caller (a
// cluster's API tier, whose catalog rows exist before the VMs), one per
// child, each of CreateRequest.ID's shape and new to this host.
func (m *Manager) ForkWithIDs(ctx context.Context, tenant, id string, ids []string) ([]Info, error) {
	seen := map[string]bool{}
	for _, c := range ids {
		if c == "" || seen[c] {
			return nil, errdefs.InvalidArgument("fork child ids must be distinct and set")
		}
		seen[c] = true
		if err := m.checkNewID(c); err != nil {
			return nil, err
		}
	}
	return m.fork(ctx, tenant, id, len(ids), ids)
}

func (m *Manager) fork(ctx context.Context, tenant, id string, count int, ids []string) ([]Info, error) {
	began := time.Now()
	l, tmpl, err := m.forkParent(ctx, tenant, id, count)
	if err != nil {
		return nil, err
	}
	children := make([]cleanup.Stack, count) // one per child; a registered child's is released
	defer func() {
		for i := range children {
			m.logUndo("fork", children[i].Clean(ctx))
		}
	}()
	for i := range children {
		if err := m.reserve(); err != nil {
			return nil, err
		}
		children[i].AddFunc(m.release)
	}
	dir, err := os.MkdirTemp(m.machines.RunDir(), "forkdata-")
	if err != nil {
		return nil, err
	}
	// Children map the files private; once they run, the names can go.
	defer os.RemoveAll(dir)
	parent, base, err := m.snapshotParent(ctx, l, tmpl, dir)
	snapDur := time.Since(began)
	if err != nil && parent.ID == "" {
		return nil, err // the parent ended first: nothing was tried
	}
	if err != nil {
		rec := auditRecord(store.EventFork, parent)
		rec.DurationMS, rec.Outcome = snapDur.Milliseconds(), errdefs.Code(err)
		m.audit(ctx, rec)
		return nil, fmt.Errorf("fork %s: %w", id, err)
	}
	m.failpoint(FailForkSnapshotted)
	// The children's VMMs hold their own descriptors of the base once
	// started.
	defer base.Close()
	clones, err := m.restoreChildren(ctx, tmpl, base, parent, children, ids)
	if err != nil {
		return nil, fmt.Errorf("fork %s: restore child: %w", id, err)
	}
	m.failpoint(FailForkChildren)
	out, err := m.registerChildren(ctx, tmpl, parent, clones, children, began)
	if err != nil {
		return out, err
	}
	d := time.Since(began)
	m.cfg.Metrics.Forked(count)
	rec := auditRecord(store.EventFork, parent)
	rec.DurationMS, rec.Outcome = d.Milliseconds(), "ok"
	rec.Detail = map[string]string{"children": strconv.Itoa(count), "snapshot_ms": strconv.FormatInt(snapDur.Milliseconds(), 10)}
	m.audit(ctx, rec)
	m.log.Info("sandbox forked", "sandbox", parent.ID, "children", count, "ms", d.Milliseconds())
	return out, nil
}

// forkParent checks a fork request and finds the parent and its template.
func (m *Manager) forkParent(ctx context.Context, tenant, id string, count int) (*live, *template.Template, error) {
	if count < 1 || count > MaxForkCount {
		return nil, nil, errdefs.InvalidArgument("fork count %d out of range 1..%d", count, MaxForkCount)
	}
	if err := m.admit(); err != nil {
		return nil, nil, err
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return nil, nil, err
	}
	if err := l.awaitAttached(ctx); err != nil {
		return nil, nil, err
	}
	tmpl, err := m.templates.Open(l.infoCopy().Template)
	if err != nil {
		return nil, nil, fmt.Errorf("fork %s: %w", id, err)
	}
	return l, tmpl, nil
}

// snapshotParent saves the parent for its children in dir and returns
// the parent's info as of that instant. It holds the parent's ops lock
// exclusively: the parent's agent session is closed and reopened around
// the snapshot, so no call may be in flight. A kill meanwhile destroys
// the parent and the snapshot fails.
func (m *Manager) snapshotParent(ctx context.Context, l *live, tmpl *template.Template, dir string) (Info, ForkBase, error) {
	l.ops.Lock()
	defer l.ops.Unlock()
	if l.ending.Load() {
		return Info{}, nil, ending(l, "")
	}
	if l.infoCopy().State == StatePaused {
		return Info{}, nil, errdefs.FailedPrecondition("sandbox %s is paused: resume it first", l.id)
	}
	if n := l.procs.running(); n > 0 {
		// Their guest calls would not survive the agent session's reopening.
		return Info{}, nil, errdefs.FailedPrecondition("sandbox %s has %d background processes running: a fork needs them ended (wait for or kill them first)", l.id, n)
	}
	parent := l.infoCopy()
	base, err := m.machines.SnapshotForFork(ctx, l.machine, tmpl, dir)
	return parent, base, err
}

// restoreChildren restores one child per stack in parallel. Each child
// gets its own slot (with networking) and, before it is registered, the
// parent's policy: a child is never more open than its parent, and never
// shares the parent's namespace or address. Every child's undos go on its
// own stack; on failure the first error is returned and the caller's
// stacks undo everything.
func (m *Manager) restoreChildren(ctx context.Context, tmpl *template.Template, base ForkBase, parent Info, children []cleanup.Stack, ids []string) ([]*clone, error) {
	plan, err := m.planEgress(parent.Tenant, &parent.Egress)
	if err != nil {
		return nil, fmt.Errorf("fork %s: the parent's egress policy: %w", parent.ID, err)
	}
	clones := make([]*clone, len(children))
	errs := make([]error, len(children))
	var wg sync.WaitGroup
	for i := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := vm.NewID("sbx-")
			if ids != nil {
				id = ids[i] // a child's machine is named by its sandbox id
			}
			clones[i], errs[i] = m.restoreChild(ctx, tmpl, base, plan, id, &children[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return clones, nil
}

// restoreChild restores one fork child from the parent's state and puts
// the parent's policy in force in its slot, with a CA of its own when the
// policy inspects TLS (a child inherits its parent's trust store, the
// parent's CA certificate included).
func (m *Manager) restoreChild(ctx context.Context, tmpl *template.Template, base ForkBase, plan egressPlan, id string, cu *cleanup.Stack) (*clone, error) {
	v, slot, err := startMachine(ctx, m.cfg.Net, func(tap *os.File) (Machine, error) {
		return m.machines.RestoreChild(ctx, base, tmpl, id, tap)
	})
	if err != nil {
		return nil, err
	}
	cu.AddFunc(func() { m.releaseNet(id, slot) })
	cu.Add(v.Destroy)
	c := &clone{machine: v, slot: slot}
	if slot == nil {
		return c, nil
	}
	if plan.policy.Inspects() {
		if c.ca, err = m.newEgressCA(id); err != nil {
			return nil, err
		}
		if err := installEgressCA(ctx, c.machine, c.ca); err != nil {
			return nil, err
		}
	}
	if err := m.applyEgress(slot, id, plan, c.ca); err != nil {
		return nil, err
	}
	return c, nil
}

// registerChildren registers the restored children in order and audits
// each one's creation. A registered child owns its resources (its stack
// is released); when one fails to register, the ones before it stay and
// are returned with the error.
func (m *Manager) registerChildren(ctx context.Context, tmpl *template.Template, parent Info, clones []*clone, children []cleanup.Stack, began time.Time) ([]Info, error) {
	out := make([]Info, 0, len(clones))
	now := stamp()
	for i, c := range clones {
		info := Info{ID: c.machine.ID(), Tenant: parent.Tenant, Template: parent.Template, ParentID: parent.ID,
			Metadata: copyMap(parent.Metadata), State: store.StateRunning, CreatedAt: now,
			Deadline: parent.Deadline, Egress: parent.Egress, Jailed: m.machines.Jailed()}
		if c.slot != nil {
			info.NetAddr = c.slot.NsIP.String()
		}
		l, err := m.register(ctx, info, c.machine, c.slot, defaultsOf(tmpl))
		if err != nil {
			return out, err
		}
		children[i].Release()
		l.mu.Lock()
		l.egressCA = c.ca
		l.mu.Unlock()
		out = append(out, info)
		rec := auditRecord(store.EventCreate, info)
		rec.ParentID, rec.DurationMS, rec.Outcome = parent.ID, time.Since(began).Milliseconds(), "ok"
		rec.Detail = map[string]string{"forked": "true", "jail": jailWord(info.Jailed)}
		m.audit(ctx, rec)
	}
	return out, nil
}
