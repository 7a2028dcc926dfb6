package lease

import (
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Registration is how a registration was accepted.
type Registration int

const (
	// Renewed: the daemon presented the current epoch of a live row (it
	// restarted and its VMs survived); the epoch stays.
	Renewed Registration = iota + 1
	// Fresh: a new epoch. Every sandbox of the node with an older epoch is
	// written off, and a node that still runs some must fence first.
	Fresh
)

func (r Registration) String() string {
	switch r {
	case Renewed:
		return "renewed"
	case Fresh:
		return "fresh"
	}
	return "none"
}

// Register decides a registration at now of node id by a daemon that
// stored epoch (0: none). row is the node's row if exists. On success it
// returns the row to store: state ready (or the row's draining, on a
// renewal), the lease to now + ttl. A live lease held under another epoch
// is refused with FailedPrecondition; the message names the node, and is
// for the operator who started a second daemon under the same id.
func Register(row Node, exists bool, id string, epoch int64, now time.Time, ttl time.Duration) (Node, Registration, error) {
	if exists && epoch != 0 && epoch == row.Epoch && row.State.Live() {
		row.LeaseExpires = now.Add(ttl)
		row.HeartbeatAt = now
		return row, Renewed, nil
	}
	if exists && row.State.Live() && row.LeaseExpires.After(now) {
		return row, 0, errdefs.FailedPrecondition("node %s holds a lease until %s", id, row.LeaseExpires.UTC().Format(time.RFC3339))
	}
	next := Node{ID: id, State: Ready, Epoch: 1, LeaseExpires: now.Add(ttl), HeartbeatAt: now}
	if exists {
		next.Epoch = row.Epoch + 1
	}
	return next, Fresh, nil
}

// FenceOnRegister reports whether a node that stored storedEpoch must
// destroy its local sandboxes before it serves after registering as r: a
// fresh epoch means the catalog wrote off whatever it ran before.
func FenceOnRegister(storedEpoch int64, r Registration) bool {
	return storedEpoch != 0 && r == Fresh
}
