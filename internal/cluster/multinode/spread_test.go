package multinode

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of processes")
	}
}

// 200 creates through two API processes land on four nodes within 15 %
// of the mean each; every one is named by its node in its record.
func TestClusterSpread(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4})
	ctx := context.Background()
	const creates, workers = 200, 8
	perNode := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var ids []string
	errs := make(chan error, creates)
	lat := make([]time.Duration, 0, creates)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.Client(w % 2)
			for i := w; i < creates; i += workers {
				began := time.Now()
				sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
				if err != nil {
					errs <- err
					continue
				}
				got, err := cl.GetSandbox(ctx, sb.ID)
				if err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				lat = append(lat, time.Since(began))
				perNode[got.Node]++
				ids = append(ids, sb.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("create: %v", err)
	}
	mean := float64(creates) / float64(len(c.Nodes))
	worst := 0.0
	for _, n := range c.Nodes {
		dev := math.Abs(float64(perNode[n.ID])-mean) / mean
		worst = max(worst, dev)
		if dev > 0.15 {
			t.Errorf("node %s got %d creates, mean %.0f: %.0f%% off", n.ID, perNode[n.ID], mean, dev*100)
		}
	}
	t.Logf("SPREAD 200 creates over 4 nodes: %v (mean %.0f, worst %.1f%% off)", perNode, mean, worst*100)
	cl := c.Client(0)
	for _, id := range ids {
		if err := cl.Sandbox(id).Kill(ctx); err != nil {
			t.Errorf("kill %s: %v", id, err)
		}
	}
	if err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println()
}
