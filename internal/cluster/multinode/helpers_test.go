package multinode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
)

// spread creates n sandboxes through API 0 and returns them by node.
func spread(t *testing.T, c *multiproc.Cluster, n int) map[string][]*client.Sandbox {
	t.Helper()
	ctx := context.Background()
	out := map[string][]*client.Sandbox{}
	cl := c.Client(0)
	for range n {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, err := sb.Exec(ctx, "echo kept > state"); err != nil {
			t.Fatalf("exec: %v", err)
		}
		out[sb.Node] = append(out[sb.Node], sb)
	}
	return out
}

// busiest is the index of the node holding the most of by, preferring
// want when it holds any.
func busiest(c *multiproc.Cluster, by map[string][]*client.Sandbox, want int) int {
	if len(by[c.Nodes[want].ID]) > 0 {
		return want
	}
	best := 0
	for i, n := range c.Nodes {
		if len(by[n.ID]) > len(by[c.Nodes[best].ID]) {
			best = i
		}
	}
	return best
}

// node reads node id's row.
func nodeRow(t *testing.T, c *multiproc.Cluster, id string) (lease.State, int64) {
	t.Helper()
	nodes, err := c.Store.ListNodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.ID == id {
			return n.State, n.Epoch
		}
	}
	t.Fatalf("node %s has no row", id)
	return "", 0
}

// killAll kills every running sandbox of the tenant through API 0 and
// waits until the catalog has none.
func killAll(t *testing.T, c *multiproc.Cluster) {
	t.Helper()
	ctx := context.Background()
	cl := c.Client(0)
	sbs, err := cl.ListSandboxes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range sbs {
		if err := sb.Kill(ctx); err != nil && !errors.Is(err, client.ErrFailedPrecondition) && !errors.Is(err, client.ErrNotFound) {
			t.Errorf("kill %s: %v", sb.ID, err)
		}
	}
}

// check runs the cluster's invariants after iteration it of what.
func check(t *testing.T, c *multiproc.Cluster, what string, it int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("%s, iteration %d: %v", what, it, err)
	}
}

// stats describes durations: min, median, p90, max.
func stats(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	r := func(x time.Duration) time.Duration { return x.Round(10 * time.Millisecond) }
	return fmt.Sprintf("n=%d min %s median %s p90 %s max %s", len(s), r(s[0]), r(s[len(s)/2]), r(s[min(len(s)-1, len(s)*9/10)]), r(s[len(s)-1]))
}

type nodewireView = nodewire.ViewNode

// readyIn reports whether node id is ready in view v.
func readyIn(v []nodewire.ViewNode, id string) bool {
	for _, n := range v {
		if n.ID == id && n.State == string(lease.Ready) {
			return true
		}
	}
	return false
}

// nodeEpochs is every node's epoch now.
func nodeEpochs(t *testing.T, c *multiproc.Cluster) map[string]int64 {
	t.Helper()
	epochs := map[string]int64{}
	for _, n := range c.Nodes {
		_, epochs[n.ID] = nodeRow(t, c, n.ID)
	}
	return epochs
}

// unswept fails iteration it unless every node is ready under the epoch
// epochs has for it: no node was swept.
func unswept(t *testing.T, c *multiproc.Cluster, epochs map[string]int64, it int) {
	t.Helper()
	for _, n := range c.Nodes {
		if st, e := nodeRow(t, c, n.ID); st != lease.Ready || e != epochs[n.ID] {
			t.Fatalf("iteration %d: node %s is %s epoch %d after the outage, want ready epoch %d (swept)", it, n.ID, st, e, epochs[n.ID])
		}
	}
}
