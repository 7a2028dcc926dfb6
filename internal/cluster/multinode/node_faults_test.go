package multinode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
)

const iterations = 10

// A node daemon SIGKILLed and restarted within its lease loses nothing:
// it renews under the same epoch and adopts its sandboxes, whose files
// are still there.
func TestClusterNodeKillRestart(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4})
	ctx := context.Background()
	var back []time.Duration
	for it := range iterations {
		by := spread(t, c, 8)
		x := busiest(c, by, it%len(c.Nodes))
		id := c.Nodes[x].ID
		_, epoch := nodeRow(t, c, id)
		began := time.Now()
		c.SignalNode(x, syscall.SIGKILL)
		c.StartNode(x)
		for _, sb := range by[id] {
			c.WaitFor("adopted sandbox answers", func() bool {
				r, err := sb.Exec(ctx, "cat state")
				return err == nil && r.Stdout == "kept\n"
			})
		}
		back = append(back, time.Since(began))
		if st, e := nodeRow(t, c, id); st != lease.Ready || e != epoch {
			t.Fatalf("iteration %d: node %s is %s epoch %d after a restart within its lease, want ready epoch %d", it, id, st, e, epoch)
		}
		killAll(t, c)
		check(t, c, "node kill-restart", it)
	}
	t.Logf("FAULT sigkill+restart x%d: sandboxes answering again after %s; epoch kept, nothing lost", iterations, stats(back))
}

// A frozen node (SIGSTOP) is written off: its sandboxes read lost and
// refuse calls, creates land elsewhere; thawed, it fences at its next
// heartbeat (its VMMs gone) and registers under a new epoch.
func TestClusterNodeFreeze(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4})
	ctx := context.Background()
	var detect, fence []time.Duration
	for it := range iterations {
		by := spread(t, c, 8)
		x := busiest(c, by, it%len(c.Nodes))
		id := c.Nodes[x].ID
		_, epoch := nodeRow(t, c, id)
		began := time.Now()
		c.SignalNode(x, syscall.SIGSTOP)
		c.WaitFor("node lost", func() bool { st, _ := nodeRow(t, c, id); return st == lease.Lost })
		detect = append(detect, time.Since(began))
		// Every replica learns of the sweep at its next view refresh.
		c.WaitView(func(v []nodewireView) bool { return !readyIn(v, id) })
		cl := c.Client(1)
		for _, sb := range by[id] {
			got, err := cl.GetSandbox(ctx, sb.ID)
			if err != nil || got.State != "lost" {
				t.Fatalf("iteration %d: sandbox on the lost node: %+v, %v", it, got, err)
			}
			if _, err := c.Client(0).Sandbox(sb.ID).Exec(ctx, "true"); !errors.Is(err, client.ErrFailedPrecondition) {
				t.Fatalf("iteration %d: exec into a lost sandbox: %v, want failed_precondition", it, err)
			}
		}
		for range 4 {
			sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
			if err != nil {
				t.Fatalf("iteration %d: create while a node is lost: %v", it, err)
			}
			if sb.Node == id {
				t.Fatalf("iteration %d: create placed on the lost node", it)
			}
		}
		thawed := time.Now()
		c.SignalNode(x, syscall.SIGCONT)
		c.WaitFor("node fenced and registered again", func() bool {
			st, e := nodeRow(t, c, id)
			return st == lease.Ready && e > epoch+1 && machines(c.Nodes[x]) == 0
		})
		fence = append(fence, time.Since(thawed))
		killAll(t, c)
		check(t, c, "node freeze", it)
	}
	t.Logf("FAULT sigstop x%d: node lost after %s (TTL 3 s + grace 1 s + sweep 0.5 s)", iterations, stats(detect))
	t.Logf("FAULT sigcont x%d: fenced (VMMs gone) and registered under a new epoch after %s (heartbeat 0.5 s)", iterations, stats(fence))
}

// machines counts the machine directories a node has.
func machines(n *multiproc.NodeProc) int {
	ents, _ := os.ReadDir(filepath.Join(n.StateDir, "run"))
	k := 0
	for _, e := range ents {
		if e.IsDir() {
			k++
		}
	}
	return k
}
