package lease

import "time"

// Expired is the sweep's test: n holds a live lease that ended more than
// grace before now.
func Expired(n Node, now time.Time, grace time.Duration) bool {
	return n.State.Live() && n.LeaseExpires.Before(now.Add(-grace))
}

// MarkLost is what a sweep does to an expired node: state lost and a new
// epoch, so that the node's next heartbeat (with the old epoch) is refused
// and every sandbox of the old epoch can be written off.
func MarkLost(n Node) Node {
	n.State = Lost
	n.Epoch++
	return n
}

// NeedsAmnesty reports whether a sweep at now, after the previous one at
// lastSweep, must grant amnesty instead of sweeping: a gap of more than
// TTL/2 means the database or every sweeper was away, and the missing
// heartbeats are theirs to answer for, not the nodes'. A zero lastSweep
// (no sweep ever ran) grants amnesty too.
func NeedsAmnesty(lastSweep, now time.Time, ttl time.Duration) bool {
	return now.Sub(lastSweep) > ttl/2
}

// Extend is amnesty's action on one row: a live lease becomes
// max(lease, now + ttl); other rows are unchanged.
func Extend(n Node, now time.Time, ttl time.Duration) Node {
	if until := now.Add(ttl); n.State.Live() && until.After(n.LeaseExpires) {
		n.LeaseExpires = until
	}
	return n
}

// Swept is one node a sweep marked lost.
type Swept struct {
	Index int // position in the slice given to Sweep
	ID    string
	// OldEpoch is the epoch before the sweep: sandboxes of this epoch or
	// older are written off.
	OldEpoch int64
	// LeaseExpired is when the lease it lost had ended.
	LeaseExpired time.Time
}

// SweepResult is what one sweep did.
type SweepResult struct {
	// Amnesty: the leases were extended and nothing was swept.
	Amnesty bool
	// Lost: the nodes marked lost, in the order of the slice.
	Lost []Swept
}

// Sweep is one pass of a sweeper at now over nodes, the previous pass
// having run at lastSweep. It applies its decisions to nodes in place, as
// the SQL does row by row: amnesty extends every live lease and sweeps
// nothing; otherwise every expired node is marked lost. The caller records
// now as the new last sweep time either way.
func Sweep(nodes []Node, lastSweep, now time.Time, c Config) SweepResult {
	if NeedsAmnesty(lastSweep, now, c.TTL) {
		for i := range nodes {
			nodes[i] = Extend(nodes[i], now, c.TTL)
		}
		return SweepResult{Amnesty: true}
	}
	var r SweepResult
	for i, n := range nodes {
		if !Expired(n, now, c.Grace) {
			continue
		}
		r.Lost = append(r.Lost, Swept{Index: i, ID: n.ID, OldEpoch: n.Epoch, LeaseExpired: n.LeaseExpires})
		nodes[i] = MarkLost(n)
	}
	return r
}

// Renew is a heartbeat at now from a node presenting epoch. It is accepted
// only with the current epoch while the node is ready or draining; the
// lease then runs to now + ttl. A lease that ended but was not swept yet is
// renewed: the sweep's test then fails, so renewal and sweep never both
// win. Refused (false), the row is unchanged and the node must fence.
func Renew(n Node, epoch int64, now time.Time, ttl time.Duration) (Node, bool) {
	if n.Epoch != epoch || !n.State.Live() {
		return n, false
	}
	n.LeaseExpires = now.Add(ttl)
	n.HeartbeatAt = now
	return n, true
}
