package placement

import (
	"math/rand/v2"
	"sync"

	"github.com/airlock-dev/airlock/internal/cluster/clock"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
)

// Placer is one replica's placement state. It is safe for concurrent use:
// one mutex guards everything, held only while choosing and accounting,
// never while a node is called.
type Placer struct {
	cfg Config      // immutable after NewPlacer
	clk clock.Clock // immutable after NewPlacer

	mu    sync.Mutex
	rng   *rand.Rand     // guarded by mu
	nodes []node         // guarded by mu; order is the view's
	index map[string]int // guarded by mu; node id -> position in nodes
	// perm holds every position of nodes exactly once, in an order the
	// sampling shuffles as it goes; any order serves, so it is never
	// reset. Guarded by mu.
	perm []int32
	// nextCall numbers in-flight creates so a finished call finds its
	// own. Guarded by mu.
	nextCall uint64
	// ids interns the builds, host classes and capabilities nodes
	// report, so that a decision tests a node by index and bit instead of
	// comparing strings behind pointers. Guarded by mu.
	ids interner
}

// node is one node's view plus this replica's accounting of it.
type node struct {
	view     NodeView
	state    stateCode // view.State, decoded once per update
	leaseNs  int64     // view.LeaseExpires in Unix ns
	beatNs   int64     // view.HeartbeatAt in Unix ns
	memCap   float64   // Capacity.MemMiB * Rm
	vcpuCap  float64   // Capacity.VCPUs * Rc
	downTill int64     // Unix ns until which the node counts as unreachable; 0 never
	class    int32     // view.HostClass, interned
	caps     uint64    // view.Capabilities, interned as bits (those that got one)
	// builds[id] is the build interned as id as the node reported it, and
	// this replica's creates of it in flight: what a decision reads of a
	// build, in one place.
	builds []buildSlot
	// inflight: creates dispatched here that no heartbeat covers yet;
	// inSlots, inMem, inVCPUs and builds[].inflight are their sums, kept
	// equal to it.
	inflight []inflight
	inSlots  int
	inMem    int64
	inVCPUs  int
}

// buildSlot is one build on one node.
type buildSlot struct {
	reported bool  // the node's last view listed the build
	ready    bool  // BuildState.Ready
	warm     int32 // BuildState.Warm
	inflight int32 // creates of the build in flight on the node
}

type stateCode uint8

const (
	stReady stateCode = iota
	stDraining
	stGone // lost, left or unknown
)

func decodeState(s lease.State) stateCode {
	switch s {
	case lease.Ready:
		return stReady
	case lease.Draining:
		return stDraining
	}
	return stGone
}

// inflight is one create dispatched to a node.
type inflight struct {
	call  uint64 // Placer.nextCall when dispatched
	build int32  // interned build id; -1 for a build no node reported
	mem   int64
	vcpus int
	// doneNs is when the node answered success (Unix ns); 0 while the
	// call is out, and such a create is never dropped.
	doneNs int64
	beats  int // heartbeats seen since doneNs that did not cover it
}

// NewPlacer returns a Placer with an empty view. rng must not be shared
// with other users; seed it for reproducible choices.
func NewPlacer(cfg Config, clk clock.Clock, rng *rand.Rand) (*Placer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Placer{cfg: cfg, clk: clk, rng: rng, index: map[string]int{}, ids: newInterner()}, nil
}

// SetView replaces the view with views (every node, whatever its state).
// In-flight creates and unreachable marks of nodes still present are kept;
// a newer HeartbeatAt clears what it covers.
func (p *Placer) SetView(views []NodeView) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, oldIndex := p.nodes, p.index
	p.nodes = make([]node, 0, len(views))
	p.index = make(map[string]int, len(views))
	for _, v := range views {
		var nd node
		if i, ok := oldIndex[v.ID]; ok {
			nd = old[i]
		}
		if _, dup := p.index[v.ID]; dup {
			continue // the first of a duplicated id wins
		}
		p.index[v.ID] = len(p.nodes)
		p.nodes = append(p.nodes, nd)
		p.apply(&p.nodes[len(p.nodes)-1], v)
	}
	p.resetPerm()
}

// UpdateNode replaces one node's view, adding the node if it is new: what
// a heartbeat or a change of state tells every replica.
func (p *Placer) UpdateNode(v NodeView) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.index[v.ID]
	if !ok {
		i = len(p.nodes)
		p.index[v.ID] = i
		p.nodes = append(p.nodes, node{})
		p.resetPerm()
	}
	p.apply(&p.nodes[i], v)
}

// MarkUnreachable keeps node id out of this replica's choices for
// Config.UnreachableFor: for failures seen outside Place (a proxied call
// that could not connect). Place marks the nodes it fails to reach itself.
func (p *Placer) MarkUnreachable(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i, ok := p.index[id]; ok {
		p.nodes[i].downTill = p.clk.Now().UnixNano() + int64(p.cfg.UnreachableFor)
	}
}

// apply sets nd's view to v and drops the in-flight creates a newer
// heartbeat accounts for. Called with mu held.
func (p *Placer) apply(nd *node, v NodeView) {
	builds := append(nd.view.Builds[:0], v.Builds...)
	nd.view = v
	nd.view.Builds = builds
	nd.state = decodeState(v.State)
	nd.leaseNs = v.LeaseExpires.UnixNano()
	nd.memCap = float64(v.Capacity.MemMiB) * p.cfg.MemOvercommit
	nd.vcpuCap = float64(v.Capacity.VCPUs) * p.cfg.VCPUOvercommit
	nd.class = p.ids.class(v.HostClass)
	nd.caps = p.ids.capMask(v.Capabilities)
	for id := range nd.builds {
		nd.builds[id] = buildSlot{inflight: nd.builds[id].inflight}
	}
	for _, b := range builds {
		id := p.ids.build(b.Build)
		nd.builds = grow(nd.builds, id)
		nd.builds[id].reported, nd.builds[id].ready, nd.builds[id].warm = true, b.Ready, int32(b.Warm)
	}
	if beat := v.HeartbeatAt.UnixNano(); beat > nd.beatNs {
		nd.beatNs = beat
		p.heartbeatSeen(nd, beat)
	}
}

// heartbeatSeen drops the in-flight creates a heartbeat measured at beat
// covers, and those it is the InflightHeartbeats-th heartbeat after.
func (p *Placer) heartbeatSeen(nd *node, beat int64) {
	kept := nd.inflight[:0]
	for _, f := range nd.inflight {
		if f.doneNs != 0 {
			if f.doneNs <= beat {
				continue
			}
			if f.beats++; f.beats >= p.cfg.InflightHeartbeats {
				continue
			}
		}
		kept = append(kept, f)
	}
	nd.inflight = kept
	nd.sumInflight()
}

func (nd *node) sumInflight() {
	nd.inSlots, nd.inMem, nd.inVCPUs = len(nd.inflight), 0, 0
	for id := range nd.builds {
		nd.builds[id].inflight = 0
	}
	for _, f := range nd.inflight {
		nd.inMem += f.mem
		nd.inVCPUs += f.vcpus
		if f.build >= 0 {
			nd.builds = grow(nd.builds, f.build)
			nd.builds[f.build].inflight++
		}
	}
}

// slot is build id on the node (the zero slot if the node never
// reported it).
func (nd *node) slot(id int32) buildSlot {
	if id < 0 || int(id) >= len(nd.builds) {
		return buildSlot{}
	}
	return nd.builds[id]
}

// grow extends s so that s[id] exists.
func grow(s []buildSlot, id int32) []buildSlot {
	if n := int(id) + 1; n > len(s) {
		s = append(s, make([]buildSlot, n-len(s))...)
	}
	return s
}

// resetPerm makes perm hold every position once. Called with mu held.
func (p *Placer) resetPerm() {
	p.perm = p.perm[:0]
	for i := range p.nodes {
		p.perm = append(p.perm, int32(i))
	}
}
