package multinode

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
)

// An API process killed at each step of a create or a fork leaves no row
// creating and no VM without a row: another replica's reconciler asks
// the node and resolves each. The two share one cluster (the package's
// time is bounded).
func TestClusterAPIFailpoints(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4,
		CreateTimeout: time.Second, ReconcileAfter: 1500 * time.Millisecond})
	t.Run("create", func(t *testing.T) { createFailpoints(t, c) })
	t.Run("fork", func(t *testing.T) { forkFailpoints(t, c) })
	c.StartAPI(1, "AIRLOCK_API_FAILPOINT=")
}

// createFailpoints kills at each step of a create: after the catalog row,
// after the node answered, just before the row is marked running.
func createFailpoints(t *testing.T, c *multiproc.Cluster) {
	ctx := context.Background()
	var resolve []time.Duration
	for _, fp := range []string{"after_row", "after_node", "before_update"} {
		resolve = append(resolve, killAt(t, c, fp, iterations, func(cl *client.Client) error {
			_, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
			return err
		}))
		counts, _ := c.Store.CountByState(ctx)
		t.Logf("FAULT API SIGKILL at %s x%d: states now %v", fp, iterations, counts)
		killAll(t, c)
		check(t, c, "API killed at "+fp, iterations)
	}
	t.Logf("FAULT API SIGKILL at 3 create failpoints x%d each: all creating rows resolved by the other replica %s after the last kill (reconcile after 1.5 s)",
		iterations, stats(resolve))
}

// forkIterations is how often TestClusterAPIFailpoints kills at each
// fork step.
const forkIterations = 3

// forkFailpoints kills at each step of a fork of two (after the first
// child's row, after the node forked, before the last child's row is
// confirmed): the reconciler fails the children the node never made and
// confirms the ones it made.
func forkFailpoints(t *testing.T, c *multiproc.Cluster) {
	ctx := context.Background()
	var resolve []time.Duration
	for _, step := range []struct {
		fp                string
		running, failures int // children per fork in each end state
	}{{"fork_after_row", 0, 1}, {"fork_after_node", 2, 0}, {"fork_before_update", 2, 0}} {
		parent, err := c.Client(0).CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		before, err := c.Store.CountByState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resolve = append(resolve, killAt(t, c, step.fp, forkIterations, func(cl *client.Client) error {
			_, err := cl.Sandbox(parent.ID).Fork(ctx, 2)
			return err
		}))
		after, err := c.Store.CountByState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		running := after[pgstore.StateRunning] - before[pgstore.StateRunning]
		failed := after[pgstore.StateFailed] - before[pgstore.StateFailed]
		if running != step.running*forkIterations || failed != step.failures*forkIterations {
			t.Fatalf("killed at %s x%d: %d children running and %d failed, want %d and %d (states %v)", step.fp, forkIterations,
				running, failed, step.running*forkIterations, step.failures*forkIterations, after)
		}
		t.Logf("FAULT API SIGKILL at %s x%d: %d children running, %d failed", step.fp, forkIterations, running, failed)
		killAll(t, c)
		check(t, c, "API killed at "+step.fp, forkIterations)
	}
	t.Logf("FAULT API SIGKILL at 3 fork failpoints x%d each: all children's rows resolved by the other replica %s after the last kill (reconcile after 1.5 s)",
		forkIterations, stats(resolve))
}

// killAt runs call through API process 1 started with failpoint fp, n
// times (each must fail: the process dies at fp), then waits until the
// other replica has resolved every row left creating, and returns how
// long that took after the last kill.
func killAt(t *testing.T, c *multiproc.Cluster, fp string, n int, call func(*client.Client) error) time.Duration {
	t.Helper()
	for it := range n {
		c.StartAPI(1, "AIRLOCK_API_FAILPOINT="+fp)
		if err := call(c.Client(1, client.WithRetries(0))); err == nil {
			t.Fatalf("%s %d: the call answered although its API process died", fp, it)
		}
		<-c.APIExited(1)
	}
	began := time.Now()
	c.WaitFor("every creating row resolved", func() bool {
		n, err := c.Store.CountByState(context.Background())
		return err == nil && n[pgstore.StateCreating] == 0
	})
	return time.Since(began)
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
	load := &dbLoad{}
	for it := range iterations {
		epochs := nodeEpochs(t, c)
		sb, err := c.Client(it%2).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Exec(ctx, "true"); err != nil {
			t.Fatal(err)
		}
		stop := load.run(c, it%2, sb.ID)
		load.outage.Store(true)
		if err := c.PG.Stop(); err != nil {
			t.Fatal(err)
		}
		outlastLease(time.Now())
		load.outage.Store(false)
		if err := c.PG.Start(); err != nil {
			t.Fatal(err)
		}
		recover = append(recover, createsBack(c, time.Now()))
		stop()
		unswept(t, c, epochs, it)
		killAll(t, c)
		check(t, c, "postgres restart", it)
	}
	t.Logf("FAULT postgres down %s x%d: creates back %s after it; while it was down %d execs into a running sandbox ok, %d failed, %d creates refused 503; no node swept",
		multiproc.TestLease.TTL+multiproc.TestLease.Grace, iterations, stats(recover), load.execsOK.Load(), load.execsFailed.Load(), load.refused.Load())
}
