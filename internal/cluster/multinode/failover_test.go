package multinode

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

// promoteIterations is how many failovers TestClusterPromoteReplica
// makes: each costs about 8 s here (4 s of it the outage), so 3 rather
// than iterations keeps the package within its time; 10 were measured
// (README).
const promoteIterations = 3

// The primary PostgreSQL killed as its host dies under load, its
// synchronous standby promoted after longer than a lease: creates are
// refused (503, never held) meanwhile, execs into running sandboxes go
// on, and once it is promoted the tier finds it through its multi-host
// DSN, creates recover, no node is swept (amnesty, as after a restart)
// and shipping catches up. The dead primary is rebuilt as the new one's
// standby for the next iteration, so the two alternate.
func TestClusterPromoteReplica(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4, Standby: true})
	ctx := context.Background()
	var recover, total, rebuild []time.Duration
	load := &dbLoad{}
	for it := range promoteIterations {
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
		if err := c.PG.Kill(); err != nil {
			t.Fatal(err)
		}
		down := time.Now()
		outlastLease(down)
		if err := c.Standby.Promote(); err != nil {
			t.Fatal(err)
		}
		promoted := time.Now()
		load.outage.Store(false)
		recover = append(recover, createsBack(c, promoted))
		total = append(total, time.Since(down))
		stop()
		unswept(t, c, epochs, it)
		c.PG, c.Standby = c.Standby, c.PG
		began := time.Now()
		if err := c.Standby.Rebuild(c.PG); err != nil {
			t.Fatal(err)
		}
		if err := c.PG.RequireSync(); err != nil {
			t.Fatal(err)
		}
		rebuild = append(rebuild, time.Since(began))
		killAll(t, c)
		check(t, c, "replica promoted", it)
	}
	if load.refused.Load() == 0 || load.execsOK.Load() == 0 {
		t.Fatalf("while no server took writes: %d creates refused 503, %d execs ok; want some of each", load.refused.Load(), load.execsOK.Load())
	}
	if load.hung.Load() > 0 || load.other.Load() > 0 {
		t.Fatalf("while no server took writes: %d creates held past 2 s and %d failed otherwise than 503 (first: %v)", load.hung.Load(), load.other.Load(), load.firstOther.Load())
	}
	t.Logf("FAULT postgres primary SIGKILLed, standby promoted after %s x%d: creates back %s after the promotion (%s after the kill); "+
		"meanwhile %d execs into a running sandbox ok, %d failed, %d creates refused 503 (slowest %s), none held; no node swept; standby rebuilt in %s",
		multiproc.TestLease.TTL+multiproc.TestLease.Grace, promoteIterations, stats(recover), stats(total),
		load.execsOK.Load(), load.execsFailed.Load(), load.refused.Load(), time.Duration(load.slowest.Load()).Round(time.Millisecond), stats(rebuild))
}
