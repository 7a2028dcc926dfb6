package placement

import "slices"

// choose samples nodes until cfg.K pass the filter or none is left, and
// returns the position of the best scored, or -1 if none passed. Called
// with mu held; it allocates nothing.
func (p *Placer) choose(req *Request, excluded []string, now int64) int {
	best, bestScore, passed := -1, 0.0, 0
	n := len(p.perm)
	for i := 0; i < n && passed < p.cfg.K; i++ {
		j := i + p.rng.IntN(n-i)
		p.perm[i], p.perm[j] = p.perm[j], p.perm[i]
		pos := int(p.perm[i])
		nd := &p.nodes[pos]
		r, load := p.check(nd, req, excluded, now)
		if r != rOK {
			continue
		}
		passed++
		if s := p.score(nd, req, load); best < 0 || s < bestScore {
			best, bestScore = pos, s
		}
	}
	return best
}

// countAll is the filter over every node, for a failure's message.
// Called with mu held.
func (p *Placer) countAll(req *Request, excluded []string, now int64) counts {
	var c counts
	for i := range p.nodes {
		if r, _ := p.check(&p.nodes[i], req, excluded, now); r != rOK {
			c[r]++
		}
	}
	return c
}

// check is the filter: the first reason nd cannot take req, or rOK and
// the load it would have with req.
func (p *Placer) check(nd *node, req *Request, excluded []string, now int64) (reasonIdx, float64) {
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
	case req.HostClass != "" && nd.view.HostClass != req.HostClass:
		return rHostClass, 0
	}
	if ready, _, _ := nd.build(req.Build); !ready && !req.AllowPull {
		return rBuildNotReady, 0
	}
	if !hasAll(nd.view.Capabilities, req.Capabilities) {
		return rCapability, 0
	}
	if !hasLabels(nd.view.Labels, req.Labels) {
		return rLabel, 0
	}
	return p.headroom(nd, req)
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

// score is the candidate's score, lowest best.
func (p *Placer) score(nd *node, req *Request, load float64) float64 {
	s := load + p.cfg.CPUWeight*nd.view.CPUUsage
	ready, warm, _ := nd.build(req.Build)
	if warm > nd.inflightOf(req.Build) {
		s -= p.cfg.WarmBonus
	}
	if ready {
		s -= p.cfg.LocalBonus
	}
	return s
}

// build finds b among the node's builds.
func (nd *node) build(b string) (ready bool, warm int, found bool) {
	for i := range nd.view.Builds {
		if bs := &nd.view.Builds[i]; bs.Build == b {
			return bs.Ready, bs.Warm, true
		}
	}
	return false, 0, false
}

// inflightOf counts this replica's creates of build b on the node since
// its last report: each may have taken one of the warm clones reported.
func (nd *node) inflightOf(b string) int {
	n := 0
	for i := range nd.inflight {
		if nd.inflight[i].build == b {
			n++
		}
	}
	return n
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
