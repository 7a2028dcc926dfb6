package sandbox

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Fork copies a running sandbox into count children: copy-on-write memory
// and disk, taken at one instant. The parent keeps running; parent and
// children never see each other's later writes. Children keep the
// parent's tenant, template, metadata, egress policy and deadline.
func (m *Manager) Fork(ctx context.Context, tenant, id string, count int) (_ []Info, err error) {
	began := time.Now()
	if count < 1 || count > maxForkCount {
		return nil, errdefs.InvalidArgument("fork count %d out of range 1..%d", count, maxForkCount)
	}
	if err := m.admit(); err != nil {
		return nil, err
	}
	l, err := m.lookup(tenant, id)
	if err != nil {
		return nil, err
	}
	if err := l.awaitAttached(ctx); err != nil {
		return nil, err
	}
	tmpl, err := m.cfg.Templates.Open(m.cfg.Host, l.infoCopy().Template)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", id, err)
	}
	for i := 0; i < count; i++ {
		if err := m.reserve(); err != nil {
			for j := 0; j < i; j++ {
				m.release()
			}
			return nil, err
		}
	}
	registered := 0
	defer func() {
		for i := registered; i < count; i++ {
			m.release()
		}
	}()

	dir, err := os.MkdirTemp(m.cfg.Host.RunDir, "forkdata-")
	if err != nil {
		return nil, err
	}
	// Children map the files private; once they run, the names can go.
	defer os.RemoveAll(dir)

	// Exclusive: the parent's agent session is closed and reopened around
	// the snapshot, so no call may be in flight. A kill meanwhile destroys
	// the parent and the snapshot fails.
	l.ops.Lock()
	if l.ending.Load() {
		l.ops.Unlock()
		return nil, errdefs.NotFound("sandbox %s not found", id)
	}
	parent := l.infoCopy()
	files, err := m.cfg.Host.SnapshotForFork(ctx, l.vm, tmpl.BootOptions(), dir)
	l.ops.Unlock()
	snapDur := time.Since(began)
	if err != nil {
		rec := auditRecord(store.EventFork, parent)
		rec.DurationMS, rec.Outcome = snapDur.Milliseconds(), errdefs.Code(err)
		m.audit(ctx, rec)
		return nil, fmt.Errorf("fork %s: %w", id, err)
	}

	m.failpoint(FailForkSnapshotted)
	// The children's VMMs hold their own descriptors of the base once
	// started.
	defer files.Mem.Close()
	shape := tmpl.BootOptions()
	shape.MemoryFile, shape.Memory = "", files.Mem
	// Each child gets its own slot (with networking) and, before it is
	// registered, the parent's policy: a child is never more open than its
	// parent, and never shares the parent's namespace or address.
	clones := make([]*clone, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range clones {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			opts := shape
			opts.ID = vm.NewID("sbx-")
			p, slot, err := startPending(ctx, m.cfg.Host, m.cfg.Net, opts)
			if err != nil {
				errs[i] = err
				return
			}
			c := &clone{slot: slot}
			if c.vm, err = p.RestorePrepared(ctx, files.State, true, opts.ID); err != nil {
				m.releaseNet(opts.ID, slot)
				errs[i] = err
				return
			}
			clones[i] = c
			if slot != nil {
				// A child inherits its parent's trust store, CA certificate
				// included, but gets a CA of its own.
				if parent.Egress.Inspects() {
					if c.ca, errs[i] = m.newEgressCA(opts.ID); errs[i] == nil {
						errs[i] = installEgressCA(ctx, c.vm, c.ca)
					}
					if errs[i] != nil {
						return
					}
				}
				errs[i] = m.applyEgress(slot, opts.ID, parent.Tenant, parent.Egress, c.ca)
			}
		}(i)
	}
	wg.Wait()
	var firstErr error
	for _, e := range errs {
		if e != nil && firstErr == nil {
			firstErr = e
		}
	}
	destroy := func(cs []*clone) {
		for _, c := range cs {
			if c != nil {
				c.vm.Destroy(context.WithoutCancel(ctx))
				m.releaseNet(c.vm.ID, c.slot)
			}
		}
	}
	if firstErr != nil {
		destroy(clones)
		return nil, fmt.Errorf("fork %s: restore child: %w", id, firstErr)
	}
	m.failpoint(FailForkChildren)
	out := make([]Info, 0, count)
	now := stamp()
	for i, c := range clones {
		v := c.vm
		info := Info{ID: v.ID, Tenant: parent.Tenant, Template: parent.Template, ParentID: parent.ID,
			Metadata: copyMap(parent.Metadata), State: store.StateRunning, CreatedAt: now,
			Deadline: parent.Deadline, Egress: parent.Egress, Jailed: m.cfg.Host.Driver.Jailed()}
		if c.slot != nil {
			info.NetAddr = c.slot.NsIP.String()
		}
		l, err := m.register(ctx, info, v, c.slot, tmpl.EnvList())
		if err != nil {
			destroy(clones[i:])
			return out, err
		}
		l.mu.Lock()
		l.egressCA = c.ca
		l.mu.Unlock()
		registered++
		out = append(out, info)
		rec := auditRecord(store.EventCreate, info)
		rec.ParentID, rec.DurationMS, rec.Outcome = parent.ID, time.Since(began).Milliseconds(), "ok"
		rec.Detail = map[string]string{"forked": "true", "jail": jailWord(info.Jailed)}
		m.audit(ctx, rec)
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
