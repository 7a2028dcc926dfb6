package pgstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// registerNodes registers n nodes named prefix-i and returns their ids
// and epochs.
func registerNodes(t testing.TB, s *Store, prefix string, n int) ([]string, []int64) {
	t.Helper()
	var ids []string
	var epochs []int64
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		reg, err := s.RegisterNode(ctx, NodeSpec{ID: id, Addr: "127.0.0.1:1", HostClass: "hc", Version: "test",
			Secret: "secret-" + id, Capacity: Capacity{Slots: 4096, MemMiB: 1 << 20, VCPUs: 1024}})
		must(t, err)
		ids, epochs = append(ids, id), append(epochs, reg.Epoch)
	}
	return ids, epochs
}

// TestCatalogRaceOneTerminalTransitionPerRow races 64 goroutines over
// 1,000 live sandboxes: kills, deadline expiry, node sweeps (lost) and
// nodes shipping an end state. Every row must end exactly once, and end
// as its one winner said.
func TestCatalogRaceOneTerminalTransitionPerRow(t *testing.T) {
	const rows, workers, nodes = 1000, 64, 16
	s, _ := open(t, Options{MaxConns: workers + 4})
	must(t, s.PutTenant(ctx, "race", 2*rows))
	ids, epochs := registerNodes(t, s, "node", nodes)
	now := time.Now()
	sbNode := make([]int, rows)
	for i := range rows {
		sbNode[i] = i % nodes
		sb := Sandbox{ID: fmt.Sprintf("sbx-%04d", i), Tenant: "race", Template: "base", BuildID: "b1",
			NodeID: ids[sbNode[i]], NodeEpoch: epochs[sbNode[i]], State: StateRunning,
			CreatedAt: now.Add(-2 * time.Hour), Deadline: now.Add(time.Hour)}
		if i%2 == 0 { // half are past their deadline: the expirers' share
			sb.Deadline = now.Add(-time.Hour)
		}
		must(t, s.CreateSandbox(ctx, sb))
	}
	rep, err := s.Sweep(ctx) // the first sweep ever is an amnesty; the racing ones are not
	must(t, err)
	if !rep.Amnesty {
		t.Fatal("the first sweep did not grant amnesty")
	}
	// Half the nodes' leases ended long ago: the sweepers' share.
	s.exec(t, `UPDATE nodes SET lease_expires_at = now() - interval '1 hour' WHERE node_id = ANY($1)`, ids[:nodes/2])

	var (
		mu      sync.Mutex
		winners = map[string][]string{} // sandbox id -> the kinds of call that ended it
		fenced  atomic.Int64
	)
	won := func(kind string, sbIDs ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range sbIDs {
			winners[id] = append(winners[id], kind)
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := raceWorker(s, w, rows, ids, epochs, sbNode, won, &fenced); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkOneWinnerEach(t, s, rows, winners)
	kinds := map[string]int{}
	for _, w := range winners {
		kinds[w[0]]++
	}
	t.Logf("%d rows, %d goroutines, %s: terminal transitions by kind %v; %d ships refused after a sweep; 0 rows ended twice",
		rows, workers, elapsed.Round(time.Millisecond), kinds, fenced.Load())
	for _, k := range []string{"kill", "expire", "sweep", "ship"} {
		if kinds[k] == 0 {
			t.Errorf("no row was ended by %s: the race did not exercise it", k)
		}
	}
}

// raceWorker is one of the racing goroutines; its role is w % 4.
func raceWorker(s *Store, w, rows int, ids []string, epochs []int64, sbNode []int, won func(string, ...string), fenced *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(uint64(w), 30))
	order := rng.Perm(rows)
	switch w % 4 {
	case 0:
		for _, i := range order {
			id := fmt.Sprintf("sbx-%04d", i)
			ended, err := s.KillSandbox(ctx, "race", id)
			if err != nil {
				return err
			}
			if ended {
				won("kill", id)
			}
		}
	case 1:
		for {
			got, err := s.ExpireDue(ctx, 4)
			if err != nil {
				return err
			}
			if len(got) == 0 {
				return nil
			}
			won("expire", got...)
		}
	case 2:
		for {
			rep, err := s.Sweep(ctx)
			if err != nil {
				return err
			}
			if rep.Amnesty {
				return errors.New("a racing sweep granted amnesty")
			}
			if len(rep.Lost) == 0 {
				return nil
			}
			for _, n := range rep.Lost {
				won("sweep", n.Sandboxes...)
			}
		}
	case 3:
		for _, i := range order {
			id := fmt.Sprintf("sbx-%04d", i)
			n := sbNode[i]
			ended, err := s.ShipSandboxState(ctx, ids[n], epochs[n], id, StateFailed, "vm_exited", time.Now())
			switch {
			case errors.Is(err, ErrFenced):
				fenced.Add(1) // the node was swept: its reports no longer count
			case err != nil:
				return err
			case ended:
				won("ship", id)
			}
		}
	}
	return nil
}

// checkOneWinnerEach checks every row ended exactly once, in the state
// its winner wrote.
func checkOneWinnerEach(t *testing.T, s *Store, rows int, winners map[string][]string) {
	t.Helper()
	want := map[string]string{"kill": StateKilled, "expire": StateExpired, "sweep": StateLost, "ship": StateFailed}
	double := 0
	for i := range rows {
		id := fmt.Sprintf("sbx-%04d", i)
		sb, err := s.GetSandbox(ctx, "race", id)
		must(t, err)
		w := winners[id]
		switch {
		case len(w) != 1:
			double++
			t.Errorf("%s ended %d times: %v", id, len(w), w)
		case sb.State != want[w[0]] || sb.EndedAt == nil || sb.EndReason == "":
			t.Errorf("%s: %s won but the row is %s (%q)", id, w[0], sb.State, sb.EndReason)
		}
	}
	var lostRecs int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM audit WHERE chain_id = $1 AND event = 'fail'`, ControlChain).Scan(&lostRecs))
	swept := 0
	for _, w := range winners {
		if w[0] == "sweep" {
			swept++
		}
	}
	if lostRecs != swept {
		t.Errorf("%d rows swept but %d control-chain records", swept, lostRecs)
	}
	if double > 0 {
		t.Fatalf("%d rows with other than one terminal transition", double)
	}
}

// TestRenewAndSweepNeverBothWin races a heartbeat against a sweep on a
// node whose lease ended just past its grace, 1,000 times: exactly one of
// them wins each time (the row lock orders them; the loser's predicate
// fails), and both outcomes occur.
func TestRenewAndSweepNeverBothWin(t *testing.T) {
	s, _ := open(t, Options{})
	ids, _ := registerNodes(t, s, "n", 1)
	id := ids[0]
	wins := map[string]int{}
	for i := range 1000 {
		epoch := int64(i + 10)
		s.exec(t, `UPDATE nodes SET state = 'ready', epoch = $2, lease_expires_at = now() - $3::interval - interval '50 ms'
			WHERE node_id = $1`, id, epoch, s.lease.Grace)
		s.exec(t, `UPDATE cluster_state SET last_sweep_at = now()`)
		start := make(chan struct{})
		var renewErr, sweepErr error
		var rep SweepReport
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, renewErr = s.Heartbeat(ctx, id, epoch, Usage{})
		}()
		go func() {
			defer wg.Done()
			<-start
			rep, sweepErr = s.Sweep(ctx)
		}()
		close(start)
		wg.Wait()
		if sweepErr != nil || rep.Amnesty || (renewErr != nil && !errors.Is(renewErr, ErrFenced)) {
			t.Fatalf("race %d: sweep %v (amnesty %v), renew %v", i, sweepErr, rep.Amnesty, renewErr)
		}
		renewed, swept := renewErr == nil, len(rep.Lost) == 1
		switch {
		case renewed && swept:
			t.Fatalf("race %d: both the renewal and the sweep won", i)
		case !renewed && !swept:
			t.Fatalf("race %d: neither won", i)
		case renewed:
			wins["renew"]++
		default:
			wins["sweep"]++
			if !errdefs.IsFailedPrecondition(renewErr) {
				t.Fatalf("race %d: a refused renewal is %v, want failed_precondition", i, renewErr)
			}
		}
	}
	t.Logf("1000 renew-vs-sweep races: %v, 0 both won", wins)
	if wins["renew"] == 0 || wins["sweep"] == 0 {
		t.Errorf("wins %v: the races did not exercise both outcomes", wins)
	}
}
