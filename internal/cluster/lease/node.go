package lease

import "time"

// Action is what a node's guard does about creates and its own VMs.
type Action int

const (
	// Serve: the lease is confirmed; take creates.
	Serve Action = iota
	// RefuseCreates: no acknowledgement for more than TTL/2. The node may
	// be swept soon, so it makes nothing new (Unavailable, "node lease not
	// confirmed"); calls into running sandboxes go on.
	RefuseCreates
	// Fence: destroy every local VM (audited) and register again with a
	// new epoch.
	Fence
)

func (a Action) String() string {
	switch a {
	case Serve:
		return "serve"
	case RefuseCreates:
		return "refuse_creates"
	case Fence:
		return "fence"
	}
	return "unknown"
}

// NodeAction is the node's self-fencing rule at now. lastAck is when the
// node sent the last heartbeat (or registration) the control plane
// acknowledged, by the node's monotonic clock: never later than the lease
// the database recorded, so the node always gives up before the sweep
// could. swept: a heartbeat was refused or the answer ordered a fence.
func NodeAction(lastAck time.Time, swept bool, now time.Time, c Config) Action {
	if swept {
		return Fence
	}
	silent := now.Sub(lastAck)
	if c.FenceAfter > 0 && silent > c.FenceAfter {
		return Fence
	}
	if silent > c.TTL/2 {
		return RefuseCreates
	}
	return Serve
}
