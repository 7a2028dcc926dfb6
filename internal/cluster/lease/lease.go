package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// State is a node row's state.
type State string

// The states of a node row. Ready and draining hold a live lease; lost and
// left hold none and can only register afresh.
const (
	Ready    State = "ready"    // takes new sandboxes
	Draining State = "draining" // keeps its sandboxes, takes no new ones
	Lost     State = "lost"     // swept: its lease ended; its sandboxes are written off
	Left     State = "left"     // shut down cleanly with no live sandbox
)

// Live reports whether a node in state s holds a lease: heartbeats renew
// it and sweeps can end it.
func (s State) Live() bool { return s == Ready || s == Draining }

// Config is the timing of leases. Defaults returns the production values.
type Config struct {
	// Heartbeat is how often a node renews its lease.
	Heartbeat time.Duration
	// TTL is how long an accepted heartbeat keeps the lease.
	TTL time.Duration
	// Grace is how long past its end a lease survives a sweep.
	Grace time.Duration
	// SweepInterval is how often each sweeper runs. It must stay below
	// TTL/2, or every sweep would find the last one too old and grant
	// amnesty instead of sweeping.
	SweepInterval time.Duration
	// FenceAfter is how long a node runs its VMs without an acknowledged
	// heartbeat before it destroys them (0: never). At least TTL + Grace,
	// so a node never fences before the control plane could sweep it.
	FenceAfter time.Duration
}

// Defaults returns heartbeat 5 s, TTL 30 s, grace 10 s, sweep every 2 s,
// fence after 5 min.
func Defaults() Config {
	return Config{
		Heartbeat:     5 * time.Second,
		TTL:           30 * time.Second,
		Grace:         10 * time.Second,
		SweepInterval: 2 * time.Second,
		FenceAfter:    5 * time.Minute,
	}
}

// Validate reports a Config whose rules would contradict each other.
func (c Config) Validate() error {
	var errs []error
	if c.Heartbeat <= 0 || c.TTL <= 0 || c.Grace < 0 || c.SweepInterval <= 0 || c.FenceAfter < 0 {
		errs = append(errs, errors.New("heartbeat, TTL and sweep interval must be positive, grace and fence-after not negative"))
	}
	if c.Heartbeat >= c.TTL/2 {
		errs = append(errs, fmt.Errorf("heartbeat %s must be below TTL/2 (%s): a node refuses creates after TTL/2 without an acknowledgement", c.Heartbeat, c.TTL/2))
	}
	if c.SweepInterval >= c.TTL/2 {
		errs = append(errs, fmt.Errorf("sweep interval %s must be below TTL/2 (%s): every sweep would be an amnesty", c.SweepInterval, c.TTL/2))
	}
	if c.FenceAfter != 0 && c.FenceAfter < c.TTL+c.Grace {
		errs = append(errs, fmt.Errorf("fence-after %s must be 0 or at least TTL + grace (%s)", c.FenceAfter, c.TTL+c.Grace))
	}
	if err := errors.Join(errs...); err != nil {
		return errdefs.InvalidArgument("lease config: %v", err)
	}
	return nil
}

// Node is the lease part of a node row.
type Node struct {
	ID    string
	State State
	// Epoch is the fencing token: it rises by one when a sweep marks the
	// node lost and when a node registers afresh, and never falls. A
	// heartbeat must present it; every sandbox row carries the epoch it
	// was created under.
	Epoch int64
	// LeaseExpires is when the lease ends unless renewed; meaningful only
	// while State is live.
	LeaseExpires time.Time
	// HeartbeatAt is when the last accepted heartbeat or registration was
	// recorded.
	HeartbeatAt time.Time
}
