package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
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

	// target is how many clones the filler keeps ready now: the pools'
	// size, raised by one for every create that found the pool empty (up
	// to max), lowered by one for every growDecay without such a miss.
	target   atomic.Int32
	lastMiss atomic.Int64 // unix nanoseconds of the last create that found the pool empty
	// budget is how many more clones the filler may restore: negative is
	// no limit (a daemon's pools). A batch in this process knows how many
	// sandboxes it will create and sets it (see limit), so the pool never
	// restores clones nobody will take, which on two cores would slow the
	// documents that are running.
	budget atomic.Int64
	// inflight counts the warm-ups the filler has running.
	inflight atomic.Int32

	mu      sync.Mutex
	lastErr error // guarded by mu; the last warm-up's outcome (nil: it worked)
	// failures counts warm-ups that failed since the last one that
	// worked; guarded by mu. It sets the pause before the next try.
	failures int
}

func newWarmPools(ms Machines, net *netpool.Pool, size, maxSize int, log *slog.Logger) *warmPools {
	return &warmPools{machines: ms, net: net, size: size, max: max(size, maxSize), log: log, pools: map[string]*warmPool{}}
}

// growDecay is how long a pool that grew stays at its size without a
// create finding it empty before it gives one clone back.
var growDecay = 30 * time.Second

// missed records a create that found p empty: p keeps one more clone
// ready, up to max.
func (p *warmPool) missed(limit int) {
	p.lastMiss.Store(time.Now().UnixNano())
	for {
		t := p.target.Load()
		if int(t) >= limit || p.target.CompareAndSwap(t, t+1) {
			return
		}
	}
}

// shrink lowers p's target by one towards size when no create found it
// empty for growDecay, and destroys a ready clone beyond the target.
func (p *warmPool) shrink(size int, net *netpool.Pool) {
	t := p.target.Load()
	if int(t) <= size || time.Since(time.Unix(0, p.lastMiss.Load())) < growDecay {
		return
	}
	// A batch's pool (one with a budget) keeps what it restored: each
	// clone is one of the batch's creates, paid for.
	if !p.target.CompareAndSwap(t, t-1) || len(p.ready) < int(t) || p.budget.Load() >= 0 {
		return
	}
	select {
	case c := <-p.ready:
		c.destroy(context.Background(), net)
	default:
	}
}

// spend takes one restore from p's budget; false once it is spent.
func (p *warmPool) spend() bool {
	for {
		b := p.budget.Load()
		switch {
		case b < 0:
			return true
		case b == 0:
			return false
		case p.budget.CompareAndSwap(b, b-1):
			return true
		}
	}
}

// setBudget readies p for exactly uses more creates: it keeps at most
// that many ready, and restores only what the clones it holds do not
// cover (restores in flight are not counted).
func (p *warmPool) setBudget(uses int64) {
	p.target.Store(int32(min(int64(p.target.Load()), uses)))
	p.budget.Store(max(0, uses-int64(len(p.ready))))
}

// refund gives back the restore of a warm-up that failed.
func (p *warmPool) refund() {
	for {
		b := p.budget.Load()
		if b < 0 || p.budget.CompareAndSwap(b, b+1) {
			return
		}
	}
}

// clone is a restored VM and the network slot its NIC is attached to.
type clone struct {
	machine Machine
	slot    *netpool.Slot // nil without networking
	// probedDenyAll is set when the egress self-check passed in this clone
	// while warming, under the slot's deny-all policy, which nothing has
	// changed since (a pooled clone's slot is never touched until Create).
	// A create that asks for deny-all and a probe may then rely on it.
	probedDenyAll bool
	// ca is the TLS inspection CA installed in the clone for the sandbox
	// it becomes (nil unless its policy inspects); pooled clones never
	// have one.
	ca *egress.CA
}

// destroy ends the VM, then releases its slot (the tap goes with the
// namespace; QEMU must be gone first so nothing still writes to it).
func (c *clone) destroy(ctx context.Context, net *netpool.Pool) error {
	err := c.machine.Destroy(ctx)
	if c.slot != nil {
		err = errors.Join(err, net.Release(c.slot))
	}
	return err
}

// startMachine acquires a slot (with net), opens its tap, and starts a
// machine attached to it with start (tap nil without net). On failure
// nothing is left: start leaves nothing of its machine, the slot is
// released.
func startMachine(ctx context.Context, net *netpool.Pool, start func(tap *os.File) (Machine, error)) (Machine, *netpool.Slot, error) {
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(ctx) }() // as before: a failed release is the pool's to log
	var slot *netpool.Slot
	var tap *os.File
	if net != nil {
		var err error
		if slot, err = net.Acquire(ctx); err != nil {
			return nil, nil, err
		}
		cu.Add(func(context.Context) error { return net.Release(slot) })
		if tap, err = slot.OpenTap(); err != nil {
			return nil, nil, err
		}
		defer tap.Close() // the VMM has its own copy once started
	}
	v, err := start(tap)
	if err != nil {
		return nil, nil, err
	}
	cu.Release()
	return v, slot, nil
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
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for p.inflight.Load() > 0 {
		select {
		case c := <-p.ready:
			if alive(c.machine) {
				return c, nil
			}
			c.destroy(context.Background(), w.net)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	// The last one may have landed as the count fell.
	return w.takeReady(p), nil
}

func alive(v Machine) bool {
	select {
	case <-v.Exited():
		return false
	default:
		return true
	}
}

// restoreClone starts a machine (attached to a fresh slot with net) and
// restores tmpl into it.
func restoreClone(ctx context.Context, ms Machines, net *netpool.Pool, tmpl *template.Template) (*clone, error) {
	id := vm.NewID("sbx-")
	v, slot, err := startMachine(ctx, net, func(tap *os.File) (Machine, error) {
		return ms.Restore(ctx, tmpl, id, tap)
	})
	if err != nil {
		return nil, err
	}
	return &clone{machine: v, slot: slot}, nil
}

// warm restores a clone, runs the agent's hot paths once, and runs the
// egress self-check, so a create needs neither on its own path. On
// failure the clone is destroyed.
func warm(ctx context.Context, ms Machines, net *netpool.Pool, tmpl *template.Template) (*clone, error) {
	c, err := restoreClone(ctx, ms, net, tmpl)
	if err != nil {
		return nil, err
	}
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(ctx) }() // as before: a pool refills; the warm-up's error is what counts
	cu.Add(func(ctx context.Context) error { return c.destroy(ctx, net) })
	v := c.machine
	if err := v.Prepare(ctx, v.ID()); err != nil {
		return nil, err
	}
	// The self-check mostly waits (a dropped probe takes its full
	// timeout), so the warm-up exec runs beside it rather than before.
	execDone := make(chan error, 1)
	go func() {
		_, err := v.Exec(ctx, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard)
		execDone <- err
	}()
	var probeErr error
	if c.slot == nil || isDenyAll(c.slot.Policy()) {
		var results []ProbeResult
		results, probeErr = probeVM(ctx, v, c.slot)
		c.probedDenyAll = probeErr == nil && probeError(results) == nil
	}
	if err := errors.Join(<-execDone, probeErr); err != nil {
		return nil, err
	}
	cu.Release()
	return c, nil
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
	return p, min(int(p.target.Load()), uses)
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
		stop: make(chan struct{}), done: make(chan struct{})}
	p.target.Store(int32(w.size))
	p.budget.Store(-1)
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
	inflight := &p.inflight
	decay := time.NewTicker(growDecay / 4)
	defer decay.Stop()
	for {
		for len(p.ready)+int(inflight.Load()) < int(p.target.Load()) && p.spend() {
			// Counted from the spend on: a create that finds the budget
			// spent waits for this clone rather than restore one more.
			inflight.Add(1)
			select {
			case <-p.stop:
				inflight.Add(-1)
				return
			case slots <- struct{}{}:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.fillOne(p)
				inflight.Add(-1)
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
	failures := p.setErr(err)
	if err != nil {
		p.refund()
		pause := failurePause(failures)
		w.log.Warn("warm pool: restore clone", "template", p.tmpl.Name, "err", err, "failures", failures, "retry_in", pause)
		select {
		case <-p.stop:
		case <-time.After(pause):
		}
	} else {
		select {
		case p.ready <- c:
		case <-p.stop:
			c.destroy(context.Background(), w.net)
		}
	}
}

// setErr records a warm-up's outcome and returns the failures in a row.
func (p *warmPool) setErr(err error) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastErr = err
	if err == nil {
		p.failures = 0
	} else {
		p.failures++
	}
	return p.failures
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
	return w.waitReady(ctx, p, func() int { return int(p.target.Load()) })
}

// waitReady blocks until p holds want() clones. When a warm-up fails it
// stops waiting: with the warm-up's error if no clone is ready (a create
// would fail the same way), else with nil (creates can start; the filler
// keeps trying). It returns ctx's error when ctx ends.
func (w *warmPools) waitReady(ctx context.Context, p *warmPool, want func() int) error {
	tmpl := p.tmpl
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for len(p.ready) < want() {
		p.mu.Lock()
		err := p.lastErr
		p.mu.Unlock()
		if err != nil {
			if len(p.ready) > 0 {
				return nil
			}
			return fmt.Errorf("warm a %s clone: %w", tmpl.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.stop:
			return nil
		case <-t.C:
		}
	}
	return nil
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
