package multinode

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
)

// An API process killed at each step of a create (after the catalog row,
// after the node answered, just before the row is marked running) leaves
// no row creating and no VM without a row: another replica's reconciler
// asks the node and resolves each.
func TestClusterAPIFailpoints(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4,
		CreateTimeout: time.Second, ReconcileAfter: 1500 * time.Millisecond})
	ctx := context.Background()
	var resolve []time.Duration
	for _, fp := range []string{"after_row", "after_node", "before_update"} {
		for it := range iterations {
			c.StartAPI(1, "AIRLOCK_API_FAILPOINT="+fp)
			_, err := c.Client(1, client.WithRetries(0)).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
			if err == nil {
				t.Fatalf("%s %d: the create answered although its API process died", fp, it)
			}
			<-c.APIExited(1)
		}
		began := time.Now()
		c.WaitFor("every creating row resolved", func() bool {
			n, err := c.Store.CountByState(ctx)
			return err == nil && n[pgstore.StateCreating] == 0
		})
		resolve = append(resolve, time.Since(began))
		counts, _ := c.Store.CountByState(ctx)
		t.Logf("FAULT API SIGKILL at %s x%d: states now %v", fp, iterations, counts)
		killAll(t, c)
		check(t, c, "API killed at "+fp, iterations)
	}
	c.StartAPI(1, "AIRLOCK_API_FAILPOINT=")
	t.Logf("FAULT API SIGKILL at 3 create failpoints x%d each: all creating rows resolved by the other replica %s after the last kill (reconcile after 1.5 s)",
		iterations, stats(resolve))
}

// PostgreSQL stopped under load for longer than a lease: creates are
// refused (503) meanwhile, execs into running sandboxes go on (cached
// keys and routes), and when it is back creates recover, no node is
// swept (amnesty) and shipping catches up.
func TestClusterPostgresRestart(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4})
	ctx := context.Background()
	var recover []time.Duration
	var execsOK, execsFailed, refused atomic.Int64
	var outage atomic.Bool
	for it := range iterations {
		epochs := map[string]int64{}
		for _, n := range c.Nodes {
			_, epochs[n.ID] = nodeRow(t, c, n.ID)
		}
		sb, err := c.Client(it%2).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Exec(ctx, "true"); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // load: execs into a running sandbox, and creates
			defer wg.Done()
			cl := c.Client(it%2, client.WithRetries(0))
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err := cl.Sandbox(sb.ID).Exec(cctx, "true")
				switch {
				case !outage.Load():
				case err != nil:
					execsFailed.Add(1)
				default:
					execsOK.Add(1)
				}
				if k%4 == 0 {
					if s, err := cl.CreateSandbox(cctx, client.CreateOptions{Template: "base"}); err == nil {
						_ = s.Kill(cctx)
					} else if errors.Is(err, client.ErrUnavailable) {
						refused.Add(1)
					}
				}
				cancel()
				time.Sleep(20 * time.Millisecond)
			}
		}()
		outage.Store(true)
		if err := c.PG.Stop(); err != nil {
			t.Fatal(err)
		}
		down := time.Now()
		// Down for longer than TTL + grace: without amnesty every node
		// would be swept when it comes back.
		for time.Since(down) < multiproc.TestLease.TTL+multiproc.TestLease.Grace {
			time.Sleep(50 * time.Millisecond)
		}
		outage.Store(false)
		if err := c.PG.Start(); err != nil {
			t.Fatal(err)
		}
		up := time.Now()
		c.WaitFor("creates recover", func() bool {
			s, err := c.Client(0, client.WithRetries(0)).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
			if err != nil {
				return false
			}
			_ = s.Kill(ctx)
			return true
		})
		recover = append(recover, time.Since(up))
		close(stop)
		wg.Wait()
		for _, n := range c.Nodes {
			if st, e := nodeRow(t, c, n.ID); st != lease.Ready || e != epochs[n.ID] {
				t.Fatalf("iteration %d: node %s is %s epoch %d after the outage, want ready epoch %d (swept)", it, n.ID, st, e, epochs[n.ID])
			}
		}
		killAll(t, c)
		check(t, c, "postgres restart", it)
	}
	t.Logf("FAULT postgres down %s x%d: creates back %s after it; while it was down %d execs into a running sandbox ok, %d failed, %d creates refused 503; no node swept",
		multiproc.TestLease.TTL+multiproc.TestLease.Grace, iterations, stats(recover), execsOK.Load(), execsFailed.Load(), refused.Load())
}
