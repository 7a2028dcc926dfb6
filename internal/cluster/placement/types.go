package placement

import (
	"errors"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Resources is an amount of each dimension placement counts.
type Resources struct {
	Slots  int
	MemMiB int64
	VCPUs  int
}

// BuildState is one template build as a node reports it.
type BuildState struct {
	Build string
	// Ready: the build is on the node's disk and verified; false while it
	// is being pulled.
	Ready bool
	// Warm is how many restored clones of the build wait in the node's
	// pool.
	Warm int
}

// NodeView is one node as this replica last saw it: its row, with the use
// the node reported in its last heartbeat. Views of every node are given,
// whatever their state, so that a failure can say how many nodes were in
// which state and whether any node could ever take the request.
type NodeView struct {
	ID    string
	State lease.State
	// LeaseExpires: a node whose lease ends within Config.LeaseMargin is
	// not chosen; it may be swept before the create finishes.
	LeaseExpires time.Time
	// HeartbeatAt is when the reported use was measured. An in-flight
	// create that finished before it is covered by Used.
	HeartbeatAt time.Time
	HostClass   string
	// Capabilities (e.g. "net", "proxy") and Labels are kept by reference:
	// never modify them after passing them; pass new ones.
	Capabilities []string
	Labels       map[string]string
	Capacity     Resources
	// Used is what the node reported reserved: slots taken, memory and
	// vCPUs of its sandboxes (not counting warm clones).
	Used Resources
	// CPUUsage is the node's busy fraction, 0 to 1.
	CPUUsage float64
	// Builds are copied on every update: the caller may reuse the slice.
	Builds []BuildState
}

// Request is what one create needs.
type Request struct {
	Template string // the template's name, for messages
	Build    string // the build a node must have ready
	// HostClass: the build restores only on this host class ("" any).
	HostClass string
	MemMiB    int64
	VCPUs     int
	// Capabilities the sandbox needs: "net" for a network, "proxy" for
	// domain rules, and so on.
	Capabilities []string
	// Labels a node must carry, all of them (a zone, say).
	Labels map[string]string
	// AllowPull lets a node without the build ready take the create and
	// pull the build first; a node with it ready gets the locality bonus.
	// Without it such a node is rejected (build_not_ready).
	AllowPull bool
}

func (r *Request) validate() error {
	if r.Build == "" || r.MemMiB <= 0 || r.VCPUs <= 0 {
		return errdefs.InvalidArgument("placement request for %q needs a build, memory and vCPUs (got build %q, %d MiB, %d vCPUs)", r.Template, r.Build, r.MemMiB, r.VCPUs)
	}
	return nil
}

// Config tunes placement. DefaultConfig returns the values the package
// documentation gives.
type Config struct {
	K int // candidates scored per decision, at least 1
	// MemOvercommit (Rm) and VCPUOvercommit (Rc) multiply a node's memory
	// and vCPUs into what may be reserved.
	MemOvercommit  float64
	VCPUOvercommit float64
	CPUWeight      float64 // added per unit of reported CPU usage
	WarmBonus      float64 // taken off for a warm clone of the build
	LocalBonus     float64 // taken off for the build ready on the node
	// LeaseMargin: a node whose lease ends sooner is not chosen (one
	// heartbeat interval: a node that missed one is suspect).
	LeaseMargin time.Duration
	// UnreachableFor is how long a node that failed to answer stays out
	// of this replica's choices.
	UnreachableFor time.Duration
	// InflightHeartbeats: an in-flight create no heartbeat covered is
	// dropped after this many heartbeats anyway, so a node whose clock
	// disagrees cannot look fuller forever.
	InflightHeartbeats int
	MaxAttempts        int // hard attempts (each a new sandbox id), at least 1
	MaxRefusals        int // refusals before the create is answered 429
}

// DefaultConfig returns K 3, Rm 1.5, Rc 4, weights 0.5/0.3/0.1, lease
// margin 5 s, unreachable for 30 s, in-flight cleared after 2 heartbeats,
// 3 hard attempts, 10 refusals.
func DefaultConfig() Config {
	return Config{
		K: 3, MemOvercommit: 1.5, VCPUOvercommit: 4,
		CPUWeight: 0.5, WarmBonus: 0.3, LocalBonus: 0.1,
		LeaseMargin: 5 * time.Second, UnreachableFor: 30 * time.Second,
		InflightHeartbeats: 2, MaxAttempts: 3, MaxRefusals: 10,
	}
}

func (c Config) validate() error {
	var errs []error
	if c.K < 1 || c.MaxAttempts < 1 || c.InflightHeartbeats < 1 || c.MaxRefusals < 0 {
		errs = append(errs, fmt.Errorf("candidates (K) %d, max attempts %d and in-flight heartbeats %d must be at least 1, max refusals %d not negative", c.K, c.MaxAttempts, c.InflightHeartbeats, c.MaxRefusals))
	}
	if c.MemOvercommit <= 0 || c.VCPUOvercommit <= 0 {
		errs = append(errs, fmt.Errorf("overcommit ratios must be positive (memory %g, vCPUs %g)", c.MemOvercommit, c.VCPUOvercommit))
	}
	if c.LeaseMargin < 0 || c.UnreachableFor < 0 {
		errs = append(errs, errors.New("lease margin and unreachable time must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return errdefs.InvalidArgument("placement config: %v", err)
	}
	return nil
}

// Reason is why a node could not take a request.
type Reason string

// The reasons, in the order the filter tests them: a node is counted
// under the first that applies.
const (
	ReasonNotReady      Reason = "not_ready"       // lost or left
	ReasonDraining      Reason = "draining"        // keeps its sandboxes, takes none
	ReasonLeaseShort    Reason = "lease_short"     // lease ends within LeaseMargin
	ReasonExcluded      Reason = "excluded"        // refused or failed this request
	ReasonUnreachable   Reason = "unreachable"     // failed to answer this replica lately
	ReasonHostClass     Reason = "host_class"      // the build does not restore there
	ReasonBuildNotReady Reason = "build_not_ready" // absent or still pulling
	ReasonCapability    Reason = "capability"      // lacks a needed capability
	ReasonLabel         Reason = "label"           // lacks a requested label
	ReasonFullSlots     Reason = "full_slots"
	ReasonFullMemory    Reason = "full_memory"
	ReasonFullVCPUs     Reason = "full_vcpus"
)

// reasonIdx indexes a counts array; the order is the filter's.
type reasonIdx uint8

const (
	rNotReady reasonIdx = iota
	rDraining
	rLeaseShort
	rExcluded
	rUnreachable
	rHostClass
	rBuildNotReady
	rCapability
	rLabel
	rFullSlots
	rFullMemory
	rFullVCPUs
	numReasons
	rOK = numReasons // passed the filter
)

var reasonNames = [numReasons]Reason{
	ReasonNotReady, ReasonDraining, ReasonLeaseShort, ReasonExcluded, ReasonUnreachable,
	ReasonHostClass, ReasonBuildNotReady, ReasonCapability, ReasonLabel,
	ReasonFullSlots, ReasonFullMemory, ReasonFullVCPUs,
}

// counts is one decision's rejections by reason; an array, so that a
// decision allocates nothing.
type counts [numReasons]int

func (c *counts) toMap() map[Reason]int {
	m := map[Reason]int{}
	for i, n := range c {
		if n > 0 {
			m[reasonNames[i]] = n
		}
	}
	return m
}
