//go:build linux

package netpool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/google/nftables"
)

// Recover reconciles the host with the caller's records after a restart.
// inUse holds the indices the caller's store says belong to live sandboxes.
// Every namespace or host link of this instance that this Pool did not create
// itself is either adopted (N in inUse, and both namespace and link exist)
// or deleted, and its index returns to the free list. Adopted slots are
// returned; an index in inUse that is missing from the result no longer
// has a network and its sandbox must be treated as dead. An adopted slot
// keeps the table it had (deny-all is installed if it has none); its
// Policy() reads Default "" (unknown) until the caller re-applies the
// stored policy with SetPolicy, which it should do at once.
func (p *Pool) Recover(ctx context.Context, inUse map[int]bool) ([]*Slot, error) {
	ns, links, err := p.scan()
	if err != nil {
		return nil, err
	}
	cand := p.claimCandidates(ns, links)
	var adopted []*Slot
	var errs []error
	for _, i := range slices.Sorted(maps.Keys(cand)) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			p.unclaim(i)
			continue
		}
		if inUse[i] && ns[i] && links[i] && i < p.max {
			if s, ok := p.tryAdopt(i); ok {
				adopted = append(adopted, s)
				continue
			}
		}
		if err := p.deleteOrphan(i); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range inUse {
		if !slices.ContainsFunc(adopted, func(s *Slot) bool { return s.Index == i }) {
			p.log.Warn("netpool: slot recorded in use has no network", "slot", i)
		}
	}
	p.poke()
	if len(errs) > 0 {
		return adopted, fmt.Errorf("netpool: recover: %w", errors.Join(errs...))
	}
	return adopted, nil
}

// claimCandidates returns the indices Recover must decide on (those New
// set aside, and namespaces or links this Pool did not make) and marks
// them owned, which keeps prewarm and Acquire off them meanwhile.
func (p *Pool) claimCandidates(ns, links map[int]bool) map[int]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	cand := map[int]bool{}
	for i := range p.reserved {
		cand[i] = true
	}
	for _, m := range []map[int]bool{ns, links} {
		for i := range m {
			if !p.owned[i] {
				cand[i] = true
			}
		}
	}
	for i := range cand {
		p.owned[i] = true
	}
	return cand
}

// unclaim sets index i aside again, undecided.
func (p *Pool) unclaim(i int) {
	p.mu.Lock()
	delete(p.owned, i)
	p.reserved[i] = true
	p.mu.Unlock()
}

// tryAdopt adopts slot i for the sandbox recorded in it; a slot that
// cannot be adopted is logged, for deletion.
func (p *Pool) tryAdopt(i int) (*Slot, bool) {
	s, err := p.adopt(i)
	if err != nil {
		p.log.Error("netpool: cannot adopt slot; deleting it", "slot", i, "err", err)
		return nil, false
	}
	p.mu.Lock()
	delete(p.reserved, i)
	p.inUse[i] = s
	p.mu.Unlock()
	p.log.Info("netpool: adopted slot", "slot", i)
	return s, true
}

// deleteOrphan tears slot i down and returns its index to the free list;
// if that fails the index stays set aside.
func (p *Pool) deleteOrphan(i int) error {
	terr := p.teardown(i)
	p.mu.Lock()
	defer p.mu.Unlock()
	if terr != nil {
		delete(p.owned, i)
		p.reserved[i] = true
		return terr
	}
	wasSkipped := i < p.fresh
	delete(p.reserved, i)
	delete(p.owned, i)
	if i < p.max && wasSkipped {
		p.free = append(p.free, i)
	}
	p.log.Info("netpool: deleted orphan slot", "slot", i)
	return nil
}

func (p *Pool) adopt(i int) (*Slot, error) {
	s := p.newSlot(i)
	s.policy = Policy{}
	if p.cfg.GuestLink == GuestLinkVethForTests {
		s.GuestPeer = guestPeer
	}
	f, err := os.Open(s.NetnsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		return nil, err
	}
	if _, err := c.ListTableOfFamily(tableName, nftables.TableFamilyINet); err != nil {
		// No table means the slot could be open: fail closed.
		if err := p.applyPolicy(s.NetnsPath, nil, false, true); err != nil {
			return nil, err
		}
		s.policy = DenyAll()
	}
	return s, nil
}
