package sandbox

import (
	"context"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// What a cluster node's agent (internal/cluster/nodeagent) asks of the
// Manager beyond the API's calls. A single host never calls these.

// Reasons a cluster node ends sandboxes, in their audit records.
const (
	// ReasonNodeFenced: the node learnt its lease was lost (its sandboxes
	// were written off by the control plane) and destroyed them all.
	ReasonNodeFenced = "node_fenced"
	// ReasonOrphan: no catalog row owns the sandbox (its create was given
	// up, or it was killed while this node did not answer).
	ReasonOrphan = "orphan"
)

// Running returns the info of every sandbox registered now (running, or
// being re-attached after a restart), of every tenant.
func (m *Manager) Running() []Info {
	ls := m.all()
	out := make([]Info, 0, len(ls))
	for _, l := range ls {
		if !l.ending.Load() {
			out = append(out, l.infoCopy())
		}
	}
	return out
}

// Fence destroys every sandbox of this host, each ended as failed with
// reason node_fenced and audited, and returns how many it ended. Warm-pool
// clones are the host's own and stay.
func (m *Manager) Fence(ctx context.Context) int {
	n := 0
	for _, l := range m.all() {
		if m.end(ctx, l, store.StateFailed, store.EventFail, ReasonNodeFenced) {
			n++
		}
	}
	return n
}

// EndOrphan destroys sandbox id, whoever's it is, as killed with reason
// orphan. An id not running here is NotFound.
func (m *Manager) EndOrphan(ctx context.Context, id string) error {
	m.mu.Lock()
	l := m.sandboxes[id]
	m.mu.Unlock()
	if l == nil {
		return errdefs.NotFound("sandbox %s not found", id)
	}
	if !m.end(ctx, l, store.StateKilled, store.EventKill, ReasonOrphan) {
		return ending(l, "")
	}
	return nil
}
