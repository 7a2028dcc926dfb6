package sim

// status is what a node is really doing, which the placer cannot see.
type status uint8

const (
	up      status = iota
	crashed        // down: calls refused, sandboxes gone
	frozen         // hung: calls time out, sandboxes run on
)

// simNode is one node's true state.
type simNode struct {
	// ends holds every sandbox the node runs, by end time; len(ends) is
	// the slots in use. Its capacity is the node's slots, allocated once.
	ends endHeap
	mem  int64 // MiB reserved by the sandboxes in ends
	cpus int   // vCPUs reserved by the sandboxes in ends
	// warm[t*W+j] is when clone j of template t is (or was) ready, in
	// virtual ns; a clone is ready when that is not after now.
	warm   []int64
	status status
	diedAt int64 // when it last failed; meaningful while status != up
	// epoch is the epoch the node's daemon stored at its last
	// registration: what its heartbeats present.
	epoch int64
	// lastAck is when the node sent its last acknowledged heartbeat or
	// registration.
	lastAck int64
}

// expire ends the sandboxes whose time has come, freeing what they held.
func (n *simNode) expire(now int64, ts []template) {
	for len(n.ends) > 0 && endOf(n.ends[0]) <= now {
		t := &ts[tmplOf(n.ends.pop())]
		n.mem -= t.memMiB
		n.cpus -= t.vcpus
	}
}

// fits is the node's own admission: whether one more sandbox of t fits
// its true use.
func (n *simNode) fits(t *template, m *model) bool {
	return len(n.ends) < m.capacity.Slots &&
		float64(n.mem+t.memMiB) <= m.memCap &&
		float64(n.cpus+t.vcpus) <= m.vcpuCap
}

func (n *simNode) add(end int64, tmpl int, t *template) {
	n.ends.push(pack(end, tmpl))
	n.mem += t.memMiB
	n.cpus += t.vcpus
}

// takeWarm takes a ready clone of template tmpl, if any, and starts its
// refill.
func (n *simNode) takeWarm(tmpl, per int, now, refill int64) bool {
	for j := tmpl * per; j < (tmpl+1)*per; j++ {
		if n.warm[j] <= now {
			n.warm[j] = now + refill
			return true
		}
	}
	return false
}

// warmReady counts the ready clones of template tmpl.
func (n *simNode) warmReady(tmpl, per int, now int64) int {
	c := 0
	for j := tmpl * per; j < (tmpl+1)*per; j++ {
		if n.warm[j] <= now {
			c++
		}
	}
	return c
}

// wipe destroys everything the node runs (a crash, or a fence) and
// returns how many sandboxes that was. Its warm pool starts refilling at
// from.
func (n *simNode) wipe(from int64) int {
	lost := len(n.ends)
	n.ends = n.ends[:0]
	n.mem, n.cpus = 0, 0
	for j := range n.warm {
		n.warm[j] = from
	}
	return lost
}

// fill is the node's true fill: its fullest dimension.
func (n *simNode) fill(m *model) float64 {
	return max(float64(len(n.ends))/float64(m.capacity.Slots), float64(n.mem)/m.memCap, float64(n.cpus)/m.vcpuCap)
}
