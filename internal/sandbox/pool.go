package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/template"
)

// warmPools keeps, per template bake, a few clones already restored,
// running idle with their agent session up and their code paths warm, so
// a create costs one identity push: clock, fresh entropy (the guest CRNG
// is reseeded), id and hostname. A pooled clone has run nothing but the
// template's own code and a warm-up `true`; no tenant's request reaches it
// before that push.
//
// Under emulation this matters most: a fresh VMM has an empty translation
// cache, and the first calls into a just-restored guest pay for
// translating the agent's code paths (~0.1-0.3 s here).
//
// A pool is keyed by the template's directory (one bake); a rebuilt
// template gets a new pool and the old one is drained.
//
// With networking every pooled clone already holds its network slot (its
// tap is handed to QEMU at process start, so the slot cannot be attached
// later) under the slot's initial deny-all policy; Create then only
// replaces the policy.
type warmPools struct {
	machines Machines
	net      *netpool.Pool // nil: clones get no slot (NIC on an empty hub)
	size     int           // clones kept ready while creates come slowly
	max      int           // the most a pool grows to while they come fast (>= size)
	log      *slog.Logger

	mu      sync.Mutex
	pools   map[string]*warmPool // guarded by mu; by template dir
	retired []*warmPool          // guarded by mu; stopped, perhaps still draining
	closed  bool                 // guarded by mu
}

type warmPool struct {
	tmpl  *template.Template
	ready chan *clone   // buffered to the pools' max
	kick  chan struct{} // wakes the filler after a take
	stop  chan struct{}
	done  chan struct{}

	mu sync.Mutex // guards the fields below
	// target is how many clones the filler keeps ready now: the pools'
	// size, raised by one for every create that found the pool empty (up
	// to max), lowered by one for every growDecay without such a miss.
	target   int
	lastMiss time.Time // the last create that found the pool empty
	// budget is how many more clones the filler may restore: negative is
	// no limit (a daemon's pools). A batch in this process knows how many
	// sandboxes it will create and sets it (see limit), so the pool never
	// restores clones nobody will take, which on two cores would slow the
	// documents that are running.
	budget int64
	// inflight counts the warm-ups the filler has running.
	inflight int
	lastErr  error // the last warm-up's outcome (nil: it worked)
	// failures counts warm-ups that failed since the last one that
	// worked. It sets the pause before the next try.
	failures int
	// changed is closed (and replaced) whenever a clone lands in ready or
	// a warm-up ends: what a create waiting for an in-flight clone, or a
	// prewarm waiting for a full pool, wakes on.
	changed chan struct{}
}

// notifyLocked wakes everyone waiting on p's changed channel. p.mu is
// held.
func (p *warmPool) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// snapshot is p's state for a waiter: the channel that is closed at the
// next change (taken with the state, so no change is missed between
// them), the warm-ups in flight and the last warm-up's error.
func (p *warmPool) snapshot() (changed <-chan struct{}, inflight int, lastErr error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed, p.inflight, p.lastErr
}

// targetNow is how many clones p keeps ready now.
func (p *warmPool) targetNow() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

func newWarmPools(ms Machines, net *netpool.Pool, size, maxSize int, log *slog.Logger) *warmPools {
	return &warmPools{machines: ms, net: net, size: size, max: max(size, maxSize), log: log, pools: map[string]*warmPool{}}
}

// growDecay is how long a pool that grew stays at its size without a
// create finding it empty before it gives one clone back.
var growDecay = 30 * time.Second

// missed records a create that found p empty: p keeps one more clone
// ready, up to limit.
func (p *warmPool) missed(limit int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastMiss = time.Now()
	p.target = min(p.target+1, max(p.target, limit))
}

// shrink lowers p's target by one towards size when no create found it
// empty for growDecay, and destroys a ready clone beyond the target.
func (p *warmPool) shrink(size int, net *netpool.Pool) {
	p.mu.Lock()
	if p.target <= size || time.Since(p.lastMiss) < growDecay {
		p.mu.Unlock()
		return
	}
	p.target--
	// A batch's pool (one with a budget) keeps what it restored: each
	// clone is one of the batch's creates, paid for.
	drop := len(p.ready) > p.target && p.budget < 0
	p.mu.Unlock()
	if !drop {
		return
	}
	select {
	case c := <-p.ready:
		c.destroy(context.Background(), net)
	default:
	}
}

// startWarmUp takes one restore from p's budget and counts it in flight
// (so a create that finds the budget spent waits for it rather than
// restore one more); false when p holds or warms all it should, or the
// budget is spent.
func (p *warmPool) startWarmUp() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready)+p.inflight >= p.target || p.budget == 0 {
		return false
	}
	if p.budget > 0 {
		p.budget--
	}
	p.inflight++
	return true
}

// spend takes one restore from p's budget for a create that restores its
// own clone; false once it is spent.
func (p *warmPool) spend() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.budget < 0:
		return true
	case p.budget == 0:
		return false
	}
	p.budget--
	return true
}

// setBudget readies p for exactly uses more creates: it keeps at most
// that many ready, and restores only what the clones it holds do not
// cover (restores in flight are not counted).
func (p *warmPool) setBudget(uses int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = int(min(int64(p.target), uses))
	p.budget = max(0, uses-int64(len(p.ready)))
}

// abandonWarmUp undoes a startWarmUp whose warm-up never ran (the pool
// stopped first).
func (p *warmPool) abandonWarmUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if p.budget >= 0 {
		p.budget++
	}
	p.notifyLocked()
}

// endWarmUp records the end of a warm-up started by startWarmUp: its
// outcome, the budget back if it failed, and the failures in a row (which
// it returns). Waiters are woken.
func (p *warmPool) endWarmUp(err error) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	p.lastErr = err
	if err == nil {
		p.failures = 0
	} else {
		p.failures++
		if p.budget >= 0 {
			p.budget++
		}
	}
	p.notifyLocked()
	return p.failures
}

// take returns a restored clone of tmpl whose agent answers: from the pool
// when one is ready, else restored now. The caller must Prepare it.
func (w *warmPools) take(ctx context.Context, tmpl *template.Template) (*clone, error) {
	if p := w.pool(tmpl); p != nil {
		defer w.kickFiller(p)
		if c := w.takeReady(p); c != nil {
			return c, nil
		}
		// Empty: restore this one here rather than wait for the filler,
		// and keep more ready from now on.
		p.missed(w.max)
		if !p.spend() {
			// A batch's budget is spent: the clones it paid for are
			// being restored, and one taken here leaves none unused.
			if c, err := w.awaitInflight(ctx, p); c != nil || err != nil {
				return c, err
			}
		}
	}
	return restoreClone(ctx, w.machines, w.net, tmpl)
}

// takeReady is a ready clone of p whose VMM still runs, nil if none.
func (w *warmPools) takeReady(p *warmPool) *clone {
	for {
		select {
		case c := <-p.ready:
			if alive(c.machine) {
				return c
			}
			c.destroy(context.Background(), w.net)
		default:
			return nil
		}
	}
}

// awaitInflight waits for a clone p's filler is restoring; nil, nil
// when none is on its way.
func (w *warmPools) awaitInflight(ctx context.Context, p *warmPool) (*clone, error) {
	for {
		changed, inflight, _ := p.snapshot()
		if inflight == 0 {
			// The last one may have landed as the count fell.
			return w.takeReady(p), nil
		}
		select {
		case c := <-p.ready:
			if alive(c.machine) {
				return c, nil
			}
			c.destroy(context.Background(), w.net)
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (w *warmPools) pool(tmpl *template.Template) *warmPool {
	return w.poolFor(tmpl, -1)
}

// limit gets tmpl's pool ready for exactly uses more creates: it keeps at
// most that many ready and restores no more clones than it needs for them
// (a pool started here never restores before the limit is set). It
// returns the pool and how many clones creates can find ready once it
// has filled, nil without a pool.
func (w *warmPools) limit(tmpl *template.Template, uses int) (*warmPool, int) {
	p := w.poolFor(tmpl, int64(uses))
	if p == nil {
		return nil, 0
	}
	return p, min(p.targetNow(), uses)
}

// poolFor is tmpl's pool, started if need be. A budget of zero or more
// limits what it restores from now on (see limit); negative leaves it as
// it is, and an unlimited pool when starting one.
func (w *warmPools) poolFor(tmpl *template.Template, budget int64) *warmPool {
	if w.size <= 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if p, ok := w.pools[tmpl.Dir]; ok {
		if budget >= 0 {
			p.setBudget(budget)
			w.kickFiller(p)
		}
		return p
	}
	// A new bake of the same template retires the old pool.
	for dir, old := range w.pools {
		if old.tmpl.Name == tmpl.Name {
			close(old.stop)
			delete(w.pools, dir)
			w.retired = append(w.retired, old)
		}
	}
	p := &warmPool{tmpl: tmpl, ready: make(chan *clone, w.max), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), target: w.size, budget: -1, changed: make(chan struct{})}
	if budget >= 0 {
		p.setBudget(budget)
	}
	w.pools[tmpl.Dir] = p
	go w.fill(p)
	return p
}

// kickFiller wakes p's filler to count again.
func (w *warmPools) kickFiller(p *warmPool) {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// fill keeps p.ready full until stopped, then destroys what it holds.
//
// Up to fillParallel clones warm at once: a warm-up is part CPU (the
// restore) and part waiting (the egress self-check's dropped probes take
// their full timeout), so a single filler refills slower than a busy
// batch takes clones, and every few documents a create would wait for a
// restore.
func (w *warmPools) fill(p *warmPool) {
	defer close(p.done)
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		for {
			select {
			case c := <-p.ready:
				c.destroy(context.Background(), w.net)
			default:
				return
			}
		}
	}()
	slots := make(chan struct{}, min(cap(p.ready), fillParallel))
	decay := time.NewTicker(growDecay / 4)
	defer decay.Stop()
	for {
		for p.startWarmUp() {
			select {
			case <-p.stop:
				p.abandonWarmUp()
				return
			case slots <- struct{}{}:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.fillOne(p)
				<-slots
				w.kickFiller(p) // count again
			}()
		}
		select {
		case <-p.stop:
			return
		case <-p.kick:
		case <-decay.C:
			p.shrink(w.size, w.net)
		}
	}
}

// fillParallel bounds the clones one pool warms at once: one per core
// (a restore is mostly CPU under emulation), at least two (the rest of a
// warm-up is waiting on the guest).
var fillParallel = max(2, runtime.NumCPU())

// fillOne warms one clone into p.ready; after a failure it records the
// error and pauses before the loop tries again, longer after each failure
// in a row (see failurePause): a host that cannot start VMs for a while
// must not be asked several times a second.
func (w *warmPools) fillOne(p *warmPool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := warm(ctx, w.machines, w.net, p.tmpl)
	cancel()
	if err == nil {
		// Into ready before the warm-up counts as ended: a create waiting
		// for it sees it there when it wakes.
		select {
		case p.ready <- c:
		case <-p.stop:
			c.destroy(context.Background(), w.net)
		}
	}
	failures := p.endWarmUp(err)
	if err != nil {
		pause := failurePause(failures)
		w.log.Warn("warm pool: restore clone", "template", p.tmpl.Name, "err", err, "failures", failures, "retry_in", pause)
		select {
		case <-p.stop:
		case <-time.After(pause):
		}
	}
}

// failurePause is how long a filler waits after the n-th failed warm-up
// in a row: 1 s, doubling, at most maxFailurePause.
func failurePause(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < maxFailurePause; i++ {
		d *= 2
	}
	return min(d, maxFailurePause)
}

// maxFailurePause bounds failurePause.
const maxFailurePause = 30 * time.Second

// waitFull blocks until tmpl's pool holds every clone it keeps (see
// waitReady).
func (w *warmPools) waitFull(ctx context.Context, tmpl *template.Template) error {
	p := w.pool(tmpl)
	if p == nil {
		return nil
	}
	return w.waitReady(ctx, p, p.targetNow)
}

// waitReady blocks until p holds want() clones. When a warm-up fails it
// stops waiting: with the warm-up's error if no clone is ready (a create
// would fail the same way), else with nil (creates can start; the filler
// keeps trying). It returns ctx's error when ctx ends.
func (w *warmPools) waitReady(ctx context.Context, p *warmPool, want func() int) error {
	for {
		changed, _, err := p.snapshot()
		switch {
		case len(p.ready) >= want():
			return nil
		case err != nil && len(p.ready) > 0:
			return nil
		case err != nil:
			return fmt.Errorf("warm a %s clone: %w", p.tmpl.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.stop:
			return nil
		case <-changed:
		}
	}
}

// close stops every pool and waits until each has destroyed its clones,
// retired ones included.
func (w *warmPools) close() {
	w.mu.Lock()
	w.closed = true
	pools, retired := w.pools, w.retired
	w.pools, w.retired = map[string]*warmPool{}, nil
	w.mu.Unlock()
	for _, p := range pools {
		close(p.stop)
		<-p.done
	}
	for _, p := range retired {
		<-p.done
	}
}
