package multinode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
)

// A node cut off from the tier (its heartbeats hang or are reset) is
// written off like a frozen one: its sandboxes read lost, creates land
// elsewhere, and when the partition heals it fences (its machines gone)
// and registers under a new epoch.
func TestClusterPartitionNodeToTier(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4, Proxies: true})
	ctx := context.Background()
	var detect, fence []time.Duration
	for it := range iterations {
		mode := []multiproc.Mode{multiproc.Hang, multiproc.Reset}[it%2]
		by := spread(t, c, 8)
		x := busiest(c, by, it%len(c.Nodes))
		id := c.Nodes[x].ID
		_, epoch := nodeRow(t, c, id)
		began := time.Now()
		for _, p := range c.Nodes[x].ToTier {
			p.Set(mode)
		}
		c.WaitFor("node lost", func() bool { st, _ := nodeRow(t, c, id); return st == lease.Lost })
		detect = append(detect, time.Since(began))
		// Every replica learns of the sweep at its next view refresh
		// (every heartbeat) and forgets its cached routes into the node.
		c.WaitView(func(v []nodewireView) bool { return !readyIn(v, id) })
		for _, sb := range by[id] {
			got, err := c.Client(it%2).GetSandbox(ctx, sb.ID)
			if err != nil || got.State != "lost" {
				t.Fatalf("iteration %d: sandbox on the cut-off node: %+v, %v", it, got, err)
			}
			if _, err := c.Client(1-it%2).Sandbox(sb.ID).Exec(ctx, "true"); !errors.Is(err, client.ErrFailedPrecondition) {
				t.Fatalf("iteration %d: exec into a lost sandbox: %v, want failed_precondition", it, err)
			}
		}
		for range 4 {
			sb, err := c.Client(1).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
			if err != nil {
				t.Fatalf("iteration %d: create while a node is cut off: %v", it, err)
			}
			if sb.Node == id {
				t.Fatalf("iteration %d: create placed on the cut-off node", it)
			}
		}
		healed := time.Now()
		for _, p := range c.Nodes[x].ToTier {
			p.Set(multiproc.Pass)
		}
		c.WaitFor("node fenced and registered again", func() bool {
			st, e := nodeRow(t, c, id)
			return st == lease.Ready && e > epoch && machines(c.Nodes[x]) == 0
		})
		fence = append(fence, time.Since(healed))
		killAll(t, c)
		check(t, c, "partition node->tier", it)
	}
	t.Logf("FAULT partition node->tier (hang, reset alternately) x%d: node lost after %s", iterations, stats(detect))
	t.Logf("FAULT heal node->tier x%d: fenced (machines gone) and registered under a new epoch after %s", iterations, stats(fence))
}

// The tier cut off from a node that still heartbeats: calls into its
// sandboxes fail (hang: at the caller's deadline; reset: at once) but
// nothing is written off, and when the partition heals the same
// sandboxes answer with their state intact.
func TestClusterPartitionTierToNode(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4, Proxies: true})
	ctx := context.Background()
	var back []time.Duration
	var creates, createsFailed int
	for it := range iterations {
		mode := []multiproc.Mode{multiproc.Hang, multiproc.Reset}[it%2]
		by := spread(t, c, 8)
		x := busiest(c, by, it%len(c.Nodes))
		id := c.Nodes[x].ID
		_, epoch := nodeRow(t, c, id)
		c.Nodes[x].ToNode.Set(mode)
		for _, sb := range by[id] {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := c.Client(it%2, client.WithRetries(0)).Sandbox(sb.ID).Exec(cctx, "true")
			cancel()
			if err == nil {
				t.Fatalf("iteration %d: exec through a cut path answered", it)
			}
		}
		for range 4 {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			sb, err := c.Client(1).CreateSandbox(cctx, client.CreateOptions{Template: "base"})
			cancel()
			creates++
			if err != nil {
				createsFailed++
			} else if sb.Node == id {
				t.Fatalf("iteration %d: a create answered from the node the tier cannot reach", it)
			}
		}
		healed := time.Now()
		c.Nodes[x].ToNode.Set(multiproc.Pass)
		for _, sb := range by[id] {
			c.WaitFor("sandbox answers again", func() bool {
				r, err := sb.Exec(ctx, "cat state")
				return err == nil && r.Stdout == "kept\n"
			})
		}
		back = append(back, time.Since(healed))
		if st, e := nodeRow(t, c, id); st != lease.Ready || e != epoch {
			t.Fatalf("iteration %d: node %s is %s epoch %d after a one-way partition, want ready epoch %d", it, id, st, e, epoch)
		}
		killAll(t, c)
		check(t, c, "partition tier->node", it)
	}
	t.Logf("FAULT partition tier->node (hang, reset alternately) x%d: node kept its lease and epoch; %d of %d creates during it failed, none answered from the cut node; its sandboxes answered again %s after the heal",
		iterations, createsFailed, creates, stats(back))
}
