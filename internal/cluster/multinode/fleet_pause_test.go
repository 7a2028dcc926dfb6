package multinode

import (
	"context"
	"testing"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

// A pause through the tier is recorded in the catalog: the list (which
// the tier answers from PostgreSQL), a get, `node ls` and the catalog row
// say paused; a resume says running again; a pause the tier missed is
// corrected by the next get; a kill while paused ends it as killed.
func TestFleetPausedInCatalog(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 1, Nodes: 1})
	ctx := context.Background()
	cl := c.Client(0)
	sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Exec(ctx, "echo kept > state"); err != nil {
		t.Fatal(err)
	}
	listed := func() string {
		t.Helper()
		sbs, err := cl.ListSandboxes(ctx, nil)
		if err != nil || len(sbs) != 1 || sbs[0].ID != sb.ID {
			t.Fatalf("list: %v, %v", sbs, err)
		}
		return sbs[0].State
	}
	if err := sb.Pause(ctx); err != nil {
		t.Fatalf("pause: %v", err)
	}
	row, err := c.Store.GetSandbox(ctx, multiproc.Tenant, sb.ID)
	if err != nil || row.PausedAt == nil || row.State != "running" {
		t.Fatalf("catalog row after pause: %+v, %v", row, err)
	}
	got, err := cl.GetSandbox(ctx, sb.ID)
	if err != nil || got.State != "paused" {
		t.Fatalf("get after pause: %+v, %v", got, err)
	}
	if st := listed(); st != "paused" {
		t.Fatalf("list after pause: state %s, want paused", st)
	}
	n, err := c.Store.NodeStatusOf(ctx, c.Nodes[0].ID)
	if err != nil || n.Live != 1 || n.Paused != 1 {
		t.Fatalf("node status: %+v, %v; want 1 live, 1 paused", n, err)
	}

	if err := sb.Resume(ctx); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if row, err := c.Store.GetSandbox(ctx, multiproc.Tenant, sb.ID); err != nil || row.PausedAt != nil {
		t.Fatalf("catalog row after resume: %+v, %v", row, err)
	}
	if st := listed(); st != "running" {
		t.Fatalf("list after resume: state %s, want running", st)
	}
	if out, err := sb.Exec(ctx, "cat state"); err != nil || out.Stdout != "kept\n" {
		t.Fatalf("exec after resume: %+v, %v", out, err)
	}

	// A pause the tier did not record (as if its replica died after the
	// node paused): the next get through the tier, answered by the node,
	// corrects the catalog.
	if err := c.NodeClient(0).Sandbox(sb.ID).Pause(ctx); err != nil {
		t.Fatalf("pause straight on the node: %v", err)
	}
	if st := listed(); st != "running" {
		t.Fatalf("list before the catalog learnt of the pause: %s", st)
	}
	if got, err := cl.GetSandbox(ctx, sb.ID); err != nil || got.State != "paused" {
		t.Fatalf("get after a pause on the node: %+v, %v", got, err)
	}
	if st := listed(); st != "paused" {
		t.Fatalf("list after a get saw the pause: state %s, want paused", st)
	}
	if err := sb.Kill(ctx); err != nil {
		t.Fatalf("kill while paused: %v", err)
	}
	row, err = c.Store.GetSandbox(ctx, multiproc.Tenant, sb.ID)
	if err != nil || row.State != "killed" {
		t.Fatalf("catalog row after a kill while paused: %+v, %v", row, err)
	}
	if got, err := cl.GetSandbox(ctx, sb.ID); err != nil || got.State != "killed" {
		t.Fatalf("get after a kill while paused: %+v, %v", got, err)
	}
	check(t, c, "pause", 0)
}
