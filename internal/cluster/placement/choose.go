package placement

import "slices"

// choose samples nodes until cfg.K pass the filter or none is left, and
// returns the position of the best scored, or -1 if none passed. Called
// with mu held; it allocates nothing.
func (p *Placer) choose(w *want, excluded []string, now int64) int {
	best, bestScore, passed := -1, 0.0, 0
	n := len(p.perm)
	for i := 0; i < n && passed < p.cfg.K; i++ {
		j := i + p.rng.IntN(n-i)
		p.perm[i], p.perm[j] = p.perm[j], p.perm[i]
		pos := int(p.perm[i])
		nd := &p.nodes[pos]
		r, load := p.check(nd, w, excluded, now)
		if r != rOK {
			continue
		}
		passed++
		if s := p.score(nd, w, load); best < 0 || s < bestScore {
			best, bestScore = pos, s
		}
	}
	return best
}

// countAll is the filter over every node, for a failure's message.
// Called with mu held.
func (p *Placer) countAll(req *Request, excluded []string, now int64) counts {
	var c counts
	w := p.ids.wantOf(req)
	for i := range p.nodes {
		if r, _ := p.check(&p.nodes[i], &w, excluded, now); r != rOK {
			c[r]++
		}
	}
	return c
}

// check is the filter: the first reason nd cannot take the request, or
// rOK and the load it would have with it.
func (p *Placer) check(nd *node, w *want, excluded []string, now int64) (reasonIdx, float64) {
	switch {
	case nd.state == stGone:
		return rNotReady, 0
	case nd.state == stDraining:
		return rDraining, 0
	case nd.leaseNs-now <= int64(p.cfg.LeaseMargin):
		return rLeaseShort, 0
	case len(excluded) > 0 && slices.Contains(excluded, nd.view.ID):
		return rExcluded, 0
	case nd.downTill > now:
		return rUnreachable, 0
	case w.class != anyClass && nd.class != w.class:
		return rHostClass, 0
	case !nd.slot(w.build).ready && !w.req.AllowPull:
		return rBuildNotReady, 0
	case !nd.hasCaps(w):
		return rCapability, 0
	case len(w.req.Labels) > 0 && !hasLabels(nd.view.Labels, w.req.Labels):
		return rLabel, 0
	}
	return p.headroom(nd, w.req)
}

func (nd *node) hasCaps(w *want) bool {
	if w.capsByName {
		return hasAll(nd.view.Capabilities, w.req.Capabilities)
	}
	return nd.caps&w.caps == w.caps
}

// headroom tests the three dimensions (slots, then memory, then vCPUs)
// with this replica's in-flight creates counted, and returns the load.
func (p *Placer) headroom(nd *node, req *Request) (reasonIdx, float64) {
	u := &nd.view.Used
	slots := u.Slots + nd.inSlots + 1
	if slots > nd.view.Capacity.Slots {
		return rFullSlots, 0
	}
	mem := float64(u.MemMiB + nd.inMem + req.MemMiB)
	if mem > nd.memCap {
		return rFullMemory, 0
	}
	vcpus := float64(u.VCPUs + nd.inVCPUs + req.VCPUs)
	if vcpus > nd.vcpuCap {
		return rFullVCPUs, 0
	}
	return rOK, max(float64(slots)/float64(nd.view.Capacity.Slots), mem/nd.memCap, vcpus/nd.vcpuCap)
}

// score is the candidate's score, lowest best. A warm clone counts only
// while the node reported more of them than this replica has sent it
// creates of the build since: each of those may have taken one.
func (p *Placer) score(nd *node, w *want, load float64) float64 {
	s := load + p.cfg.CPUWeight*nd.view.CPUUsage
	b := nd.slot(w.build)
	if b.warm > b.inflight {
		s -= p.cfg.WarmBonus
	}
	if b.ready {
		s -= p.cfg.LocalBonus
	}
	return s
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
