package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
)

// draw is one sandbox's lifetime in ns.
func (lt *lifetime) draw(rng *rand.Rand) int64 {
	return int64(min(math.Exp(lt.mu+lt.sigma*rng.NormFloat64()), lt.cap)) + 1
}

// residual is the remaining lifetime of a sandbox found running in the
// steady state: its lifetime drawn length-biased (a lognormal's
// length-biased law is lognormal with mu + sigma^2; the cap is an atom of
// weight cap x P(X >= cap) / mean), times a uniform.
func (lt *lifetime) residual(rng *rand.Rand) int64 {
	l := lt.cap
	if rng.Float64() >= lt.atom {
		for l = lt.cap; l >= lt.cap; {
			l = math.Exp(lt.mu + lt.sigma*lt.sigma + lt.sigma*rng.NormFloat64())
		}
	}
	return int64(rng.Float64()*l) + 1
}

// prefill resets every node and fills it to the level's load with
// sandboxes in their steady state.
func (l *level) prefill() {
	target := l.load * float64(l.m.cfg.Slots)
	for i := range l.nodes {
		n := &l.nodes[i]
		n.wipe(0)
		n.status, n.epoch, n.lastAck = up, 0, 0
		count := int(target)
		if l.rng.Float64() < target-float64(count) {
			count++
		}
		for range count {
			tmpl := l.m.pickTemplate(l.rng)
			t := &l.m.tmpls[tmpl]
			if !n.fits(t, l.m) {
				continue
			}
			n.ends = append(n.ends, pack(l.m.life.residual(l.rng), tmpl))
			n.mem += t.memMiB
			n.cpus += t.vcpus
		}
		heapify(n.ends)
	}
}

// startFleet registers every node, gives the placer its first view and
// schedules the first of every recurring event.
func (l *level) startFleet() {
	cfg := &l.m.cfg
	now := l.at(0)
	for i := range l.nodes {
		l.views[i] = placement.NodeView{
			ID: l.m.ids[i], HostClass: hostClass, Capabilities: []string{"net", "proxy"},
			Capacity: l.m.capacity, Builds: make([]placement.BuildState, len(l.m.tmpls)),
		}
		for t := range l.m.tmpls {
			l.views[i].Builds[t] = placement.BuildState{Build: l.m.tmpls[t].build, Ready: true}
		}
		l.register(i, false)
		l.q.add(int64(l.rng.Float64()*float64(cfg.Lease.Heartbeat)), evBeat, i)
	}
	l.lastSweep = now
	l.q.add(int64(cfg.Lease.SweepInterval), evSweep, 0)
	l.q.add(int64(cfg.SampleEvery), evSample, 0)
	if l.failureGap > 0 {
		l.q.add(int64(l.rng.ExpFloat64()*l.failureGap), evFail, 0)
	}
	l.nextArrival = int64(l.rng.ExpFloat64() * l.arrivalGap)
}

// register is the node's registration; exists: its row is in the
// database.
func (l *level) register(i int, exists bool) {
	n := &l.nodes[i]
	row, _, err := lease.Register(l.rows[i], exists, l.m.ids[i], n.epoch, l.at(l.now), l.m.cfg.Lease.TTL)
	if err != nil {
		return // a live lease under another epoch: not in this model; the next heartbeat retries
	}
	l.rows[i], n.epoch, n.lastAck = row, row.Epoch, l.now
	l.report(i)
}

// report tells the placer what node i looks like now, as a heartbeat
// (or a registration) carries it.
func (l *level) report(i int) {
	n := &l.nodes[i]
	n.expire(l.now, l.m.tmpls)
	v := &l.views[i]
	row := &l.rows[i]
	v.State, v.LeaseExpires, v.HeartbeatAt = row.State, row.LeaseExpires, l.at(l.now)
	v.Used = placement.Resources{Slots: len(n.ends), MemMiB: n.mem, VCPUs: n.cpus}
	v.CPUUsage = 0.5 * float64(n.cpus) / l.m.vcpuCap // guests keep about half their vCPUs busy
	for t := range v.Builds {
		v.Builds[t].Warm = n.warmReady(t, l.m.cfg.WarmPerTemplate, l.now)
	}
	l.tellReplicas(v)
}

// tellReplicas gives every replica's placer a node's new view, as the
// database's change notification does.
func (l *level) tellReplicas(v *placement.NodeView) {
	for _, p := range l.placers {
		p.UpdateNode(*v)
	}
}

// beat is node i's heartbeat timer.
func (l *level) beat(i int) {
	if l.nodes[i].status != up {
		return // recover schedules the next one
	}
	j := l.m.cfg.HeartbeatJitter
	l.q.add(l.now+int64(float64(l.m.cfg.Lease.Heartbeat)*(1+j*(2*l.rng.Float64()-1))), evBeat, i)
	l.heartbeat(i)
}

// heartbeat renews node i's lease; refused, the node was swept: it fences
// and registers again.
func (l *level) heartbeat(i int) {
	n := &l.nodes[i]
	row, ok := lease.Renew(l.rows[i], n.epoch, l.at(l.now), l.m.cfg.Lease.TTL)
	if !ok {
		l.fence(i)
		return
	}
	l.rows[i], n.lastAck = row, l.now
	l.report(i)
}

// fence destroys node i's sandboxes and registers it afresh.
func (l *level) fence(i int) {
	l.st.lost += int64(l.nodes[i].wipe(l.now + int64(l.m.cfg.WarmRefill)))
	l.register(i, true)
}

// sweep is the sweeper's pass over the database, by the lease rules.
func (l *level) sweep() {
	l.q.add(l.now+int64(l.m.cfg.Lease.SweepInterval), evSweep, 0)
	r := lease.Sweep(l.rows, l.lastSweep, l.at(l.now), l.m.cfg.Lease)
	l.lastSweep = l.at(l.now)
	if r.Amnesty {
		for i := range l.views {
			l.views[i].LeaseExpires = l.rows[i].LeaseExpires
			l.tellReplicas(&l.views[i])
		}
	}
	for _, s := range r.Lost {
		n := &l.nodes[s.Index]
		if n.status == up {
			l.st.liveSwept++
		} else {
			d := time.Duration(l.now - n.diedAt).Seconds()
			l.st.swept++
			l.st.detectSum += d
			l.st.detMax = max(l.st.detMax, d)
		}
		l.views[s.Index].State = l.rows[s.Index].State
		l.tellReplicas(&l.views[s.Index])
	}
}

// fail fails one running node: a crash or a freeze.
func (l *level) fail() {
	cfg := &l.m.cfg
	l.q.add(l.now+int64(l.rng.ExpFloat64()*l.failureGap)+1, evFail, 0)
	i := l.rng.IntN(len(l.nodes))
	for tries := 0; l.nodes[i].status != up; tries++ {
		if tries == len(l.nodes) {
			return // every node is down already
		}
		i = (i + 1) % len(l.nodes)
	}
	n := &l.nodes[i]
	n.diedAt = l.now
	l.st.failures++
	if l.rng.Float64() < cfg.CrashShare {
		back := l.now + uniform(l.rng, cfg.CrashDownMin, cfg.CrashDownMax)
		n.status = crashed
		l.st.lost += int64(n.wipe(back + int64(cfg.WarmRefill)))
		l.q.add(back, evRecover, i)
		return
	}
	n.status = frozen
	l.q.add(l.now+uniform(l.rng, cfg.FreezeMin, cfg.FreezeMax), evRecover, i)
}

func uniform(rng *rand.Rand, lo, hi time.Duration) int64 {
	return int64(lo) + int64(rng.Float64()*float64(hi-lo))
}

// recover brings node i back. A crashed node's daemon starts with no VMs
// and registers; a frozen one asks its guard first, then heartbeats at
// once (and fences if it hears it was swept).
func (l *level) recover(i int) {
	n := &l.nodes[i]
	was := n.status
	n.status = up
	l.q.add(l.now+int64(l.rng.Float64()*float64(l.m.cfg.Lease.Heartbeat)), evBeat, i)
	switch {
	case was == crashed:
		l.register(i, true)
	case lease.NodeAction(l.at(n.lastAck), false, l.at(l.now), l.m.cfg.Lease) == lease.Fence:
		l.fence(i)
	default:
		l.heartbeat(i)
	}
}

// sample measures the true fill of every ready node.
func (l *level) sample() {
	l.q.add(l.now+int64(l.m.cfg.SampleEvery), evSample, 0)
	l.fills = l.fills[:0]
	sum := 0.0
	for i := range l.nodes {
		n := &l.nodes[i]
		if n.status != up || l.rows[i].State != lease.Ready {
			continue
		}
		n.expire(l.now, l.m.tmpls)
		f := n.fill(l.m)
		l.fills = append(l.fills, f)
		sum += f
	}
	if len(l.fills) == 0 || sum == 0 {
		return
	}
	mean := sum / float64(len(l.fills))
	slices.Sort(l.fills)
	p99 := l.fills[int(math.Ceil(0.99*float64(len(l.fills))))-1]
	l.st.samples++
	l.st.fillSum += mean
	l.st.maxFill = max(l.st.maxFill, l.fills[len(l.fills)-1])
	l.st.worstMax = max(l.st.worstMax, l.fills[len(l.fills)-1]/mean)
	l.st.worstP99 = max(l.st.worstP99, p99/mean)
}
