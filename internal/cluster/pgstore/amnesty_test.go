package pgstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// fleet runs a sweeper and heartbeating nodes against a store on their
// own schedule (lease.Config's heartbeat and sweep interval), as API
// replicas and node daemons do.
type fleet struct {
	s   *Store
	c   lease.Config
	ids []string
	// epochs are the nodes' registered epochs; immutable.
	epochs []int64
	// beating[i] is whether node i still heartbeats; cleared to kill it.
	beating []atomic.Bool
	// hold pauses every heartbeat (nodes slower to reconnect than the
	// sweeper).
	hold atomic.Bool

	mu        sync.Mutex
	lastAck   []time.Time // guarded by mu; wall time each node's last heartbeat was sent and then accepted
	amnesties []time.Time // guarded by mu; when sweeps that granted amnesty returned
	lostAt    map[string]time.Time
	errs      []error // guarded by mu; every failed call
	stop      chan struct{}
	wg        sync.WaitGroup
}

func startFleet(t *testing.T, s *Store, n int) *fleet {
	ids, epochs := registerNodes(t, s, "fleet", n)
	f := &fleet{s: s, c: s.lease, ids: ids, epochs: epochs, beating: make([]atomic.Bool, n),
		lastAck: make([]time.Time, n), lostAt: map[string]time.Time{}, stop: make(chan struct{})}
	for i := range n {
		f.beating[i].Store(true)
		f.lastAck[i] = time.Now()
		f.wg.Add(1)
		go f.heartbeat(i)
	}
	f.wg.Add(1)
	go f.sweep()
	t.Cleanup(f.close)
	return f
}

func (f *fleet) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.wg.Wait()
}

func (f *fleet) call(timeout time.Duration, fn func(context.Context) error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := fn(cctx); err != nil {
		f.mu.Lock()
		f.errs = append(f.errs, err)
		f.mu.Unlock()
	}
}

func (f *fleet) heartbeat(i int) {
	defer f.wg.Done()
	tick := time.NewTicker(f.c.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		if !f.beating[i].Load() || f.hold.Load() {
			continue
		}
		sent := time.Now()
		f.call(f.c.Heartbeat, func(ctx context.Context) error {
			_, err := f.s.Heartbeat(ctx, f.ids[i], f.epochs[i], Usage{})
			if err == nil {
				f.mu.Lock()
				f.lastAck[i] = sent
				f.mu.Unlock()
			}
			return err
		})
	}
}

func (f *fleet) sweep() {
	defer f.wg.Done()
	tick := time.NewTicker(f.c.SweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		f.call(f.c.SweepInterval, func(ctx context.Context) error {
			rep, err := f.s.Sweep(ctx)
			now := time.Now()
			f.mu.Lock()
			defer f.mu.Unlock()
			if rep.Amnesty {
				f.amnesties = append(f.amnesties, now)
			}
			for _, n := range rep.Lost {
				f.lostAt[n.ID] = now
			}
			return err
		})
	}
}

// waitLost waits for node id to be swept and returns when the sweep
// returned; it fails after limit.
func (f *fleet) waitLost(t *testing.T, id string, limit time.Duration) time.Time {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		f.mu.Lock()
		at, ok := f.lostAt[id]
		f.mu.Unlock()
		if ok {
			return at
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not swept within %s", id, limit)
	return time.Time{}
}

// kill stops node i's heartbeats and returns when its last accepted one
// was sent.
func (f *fleet) kill(i int) time.Time {
	f.beating[i].Store(false)
	time.Sleep(f.c.Heartbeat) // let a heartbeat in flight finish
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastAck[i]
}

// TestAmnestyAfterDatabaseOutage stops PostgreSQL for 2 x TTL (TTL 3 s,
// grace 1 s, heartbeat and sweep every 0.5 s) while a sweeper and nodes
// keep calling. After it starts again the first sweep grants amnesty
// although every live lease is past its grace; no live node is swept in
// the next TTL; a node that died before the outage is swept within TTL +
// grace + interval of the amnesty, and one that dies with the database up
// within TTL + grace + interval of its last heartbeat.
func TestAmnestyAfterDatabaseOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 s")
	}
	srv := clustertest.Private(t)
	s, err := Open(ctx, srv.Database(t), Options{Lease: testLease()})
	must(t, err)
	defer s.Close()
	f := startFleet(t, s, 4) // 0 dies with the database up, 1 before the outage; 2 and 3 live
	c := f.c
	// The first sweep a database ever sees is an amnesty (no sweep ran
	// before it); let it pass and the nodes heartbeat under regular
	// sweeps before anything dies.
	waitAmnesty(t, f, time.Time{}, 2*c.TTL)
	time.Sleep(2 * c.Heartbeat)
	bound := c.TTL + c.Grace + c.SweepInterval
	// A sweep's own latency and its ticker's jitter: the bound is the
	// rule's, the slack what two shared cores add to it (measured
	// values are logged).
	slack := 750 * time.Millisecond

	lastBeat := f.kill(0)
	detect := f.waitLost(t, f.ids[0], 3*bound).Sub(lastBeat)
	if detect > bound+slack || detect <= c.TTL+c.Grace-slack {
		t.Errorf("dead node swept %s after its last heartbeat, want in (TTL + grace, TTL + grace + interval] = (%s, %s]",
			detect, c.TTL+c.Grace, bound)
	}

	f.kill(1)
	f.mu.Lock()
	f.errs = nil
	f.mu.Unlock()
	must(t, srv.Stop())
	down := time.Now()
	time.Sleep(2 * c.TTL)
	f.hold.Store(true) // the live nodes come back after the sweeper does
	must(t, srv.Start())
	up := time.Now()
	amnesty := waitAmnesty(t, f, up, 2*c.TTL)
	f.mu.Lock()
	liveAck := f.lastAck[2]
	f.mu.Unlock()
	if expiredBy := liveAck.Add(c.TTL + c.Grace); !expiredBy.Before(amnesty) {
		t.Fatalf("live leases were not past their grace when the sweeps resumed: the outage tests nothing")
	}
	f.hold.Store(false)
	time.Sleep(c.TTL)
	sweptLive := f.sweptSince(down, f.ids[2], f.ids[3])
	afterAmnesty := f.waitLost(t, f.ids[1], 3*bound).Sub(amnesty)
	if afterAmnesty > bound+slack {
		t.Errorf("node dead before the outage swept %s after the amnesty, want at most %s", afterAmnesty, bound)
	}
	f.close()
	outageErrs, unclassed := f.outageErrors()
	if sweptLive != 0 || unclassed != nil {
		t.Fatalf("%d live nodes swept after the outage; a failed call that is not unavailable: %v", sweptLive, unclassed)
	}
	t.Logf("outage %s (2 x TTL %s); amnesty %s after restart; 0 live nodes swept in the next TTL; "+
		"dead node swept %s after its last heartbeat and %s after the amnesty (bound %s); %d calls failed unavailable during the outage",
		up.Sub(down).Round(time.Millisecond), c.TTL, amnesty.Sub(up).Round(time.Millisecond),
		detect.Round(time.Millisecond), afterAmnesty.Round(time.Millisecond), bound, outageErrs)
}

func waitAmnesty(t *testing.T, f *fleet, after time.Time, limit time.Duration) time.Time {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		f.mu.Lock()
		for _, a := range f.amnesties {
			if a.After(after) {
				f.mu.Unlock()
				return a
			}
		}
		f.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no amnesty within %s of the restart", limit)
	return time.Time{}
}

func (f *fleet) sweptSince(since time.Time, ids ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, id := range ids {
		if at, ok := f.lostAt[id]; ok && at.After(since) {
			n++
		}
	}
	return n
}

// outageErrors counts the calls that failed, and returns one that was
// not Unavailable (or a deadline), if any.
func (f *fleet) outageErrors() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, err := range f.errs {
		if !errdefs.IsUnavailable(err) && !errdefs.IsDeadlineExceeded(err) {
			return len(f.errs), fmt.Errorf("%w (class %v)", err, errdefs.Class(err))
		}
	}
	return len(f.errs), nil
}
