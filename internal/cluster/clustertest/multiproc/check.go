package multiproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/store"
)

// Check verifies, once the cluster is quiet, what must hold after any
// fault: no stand-in VMM and no machine directory without a running
// catalog row of its node under the node's current epoch, no live row
// on a node that holds no lease under the row's epoch, no row left
// creating, every node's audit chain equal to its copy in PostgreSQL
// (after waiting for shipping to catch up), and `airlock audit verify
// --cluster` clean. It returns every problem found, joined.
func (c *Cluster) Check(ctx context.Context) error {
	var errs []error
	if n, err := c.Store.LiveOffLease(ctx); err != nil || n > 0 {
		errs = append(errs, fmt.Errorf("%d live rows on nodes without their lease (%v)", n, err))
	}
	// A create cut off from its API process (or the database) is left
	// creating until a reconciler resolves it: wait for that, 30 s at most.
	deadline := time.Now().Add(30 * time.Second)
	for {
		counts, err := c.Store.CountByState(ctx)
		if err == nil && counts[pgstore.StateCreating] == 0 {
			break
		}
		if time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("rows still creating after 30 s: %v (%v)", counts, err))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A sandbox whose create was resolved running after its caller gave
	// up is the tenant's to kill, like any other: the checks below hold
	// for it as for the rest. A machine made by a create request that a
	// partition held until after its row was failed is an orphan, which
	// its node kills when its next heartbeat names it: wait for that too,
	// 30 s at most.
	deadline = time.Now().Add(30 * time.Second)
	for {
		merrs := c.checkMachines(ctx)
		if len(merrs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			errs = append(errs, merrs...)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range c.Nodes {
		if err := c.checkChain(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	out, err := exec.CommandContext(ctx, c.bin.airlock, "audit", "verify", "--cluster", "--dsn", c.DSN).CombinedOutput()
	if err != nil {
		errs = append(errs, fmt.Errorf("audit verify --cluster: %v: %s", err, out))
	}
	return errors.Join(errs...)
}

// checkMachines compares every node's machines with the catalog.
func (c *Cluster) checkMachines(ctx context.Context) []error {
	var errs []error
	nodes, err := c.Store.ListNodes(ctx)
	if err != nil {
		return []error{err}
	}
	epochs := map[string]int64{}
	for _, n := range nodes {
		epochs[n.ID] = n.Epoch
	}
	live := map[int]bool{}
	for _, pid := range c.VMMs() {
		live[pid] = true
	}
	claimed := map[int]bool{}
	for _, n := range c.Nodes {
		dirs, _ := os.ReadDir(filepath.Join(n.StateDir, "run"))
		for _, d := range dirs {
			if !d.IsDir() || !strings.HasPrefix(d.Name(), "sbx-") {
				continue
			}
			dir := filepath.Join(n.StateDir, "run", d.Name())
			b, _ := os.ReadFile(filepath.Join(dir, "pid"))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			idb, _ := os.ReadFile(filepath.Join(dir, "identity"))
			id := strings.TrimSpace(string(idb))
			claimed[pid] = true
			sb, err := c.Store.GetSandbox(ctx, "", id)
			switch {
			case !live[pid]:
				errs = append(errs, fmt.Errorf("node %s: machine directory %s without a live VMM", n.ID, d.Name()))
			case err != nil:
				errs = append(errs, fmt.Errorf("node %s: machine %s (sandbox %q) has no catalog row: %v", n.ID, d.Name(), id, err))
			case sb.State != pgstore.StateRunning || sb.NodeID != n.ID || sb.NodeEpoch != epochs[n.ID]:
				errs = append(errs, fmt.Errorf("node %s: machine %s runs sandbox %s, whose row is %s on %s epoch %d (node epoch %d)",
					n.ID, d.Name(), id, sb.State, sb.NodeID, sb.NodeEpoch, epochs[n.ID]))
			}
		}
	}
	for pid := range live {
		if !claimed[pid] {
			errs = append(errs, fmt.Errorf("stand-in VMM %d runs with no machine directory", pid))
		}
	}
	return errs
}

// checkChain waits (30 s at most) until node n's local audit chain is
// shipped whole, then compares it record by record with PostgreSQL's.
func (c *Cluster) checkChain(ctx context.Context, n *NodeProc) error {
	b, err := os.ReadFile(filepath.Join(n.StateDir, "cluster-node.json"))
	if err != nil {
		return fmt.Errorf("node %s identity: %w", n.ID, err)
	}
	var id struct {
		Chain string `json:"chain"`
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(n.StateDir, "airlock.db"))
	if err != nil {
		return fmt.Errorf("node %s store: %w", n.ID, err)
	}
	defer st.Close()
	var local []store.AuditRecord
	deadline := time.Now().Add(30 * time.Second)
	for {
		if local, err = st.QueryAudit(ctx, store.AuditFilter{}); err != nil {
			return err
		}
		head, err := c.Store.GetChainHead(ctx, id.Chain)
		if err != nil {
			return err
		}
		if len(local) > 0 && head.Seq == local[len(local)-1].Seq || len(local) == 0 && head.Seq == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: chain head in PostgreSQL at %d, local chain at %d after 30 s", n.ID, head.Seq, len(local))
		}
		time.Sleep(50 * time.Millisecond)
	}
	remote, err := c.Store.ChainRecords(ctx, id.Chain, 0, len(local)+1)
	if err != nil {
		return err
	}
	if len(remote) != len(local) {
		return fmt.Errorf("node %s: %d records locally, %d in PostgreSQL", n.ID, len(local), len(remote))
	}
	for i := range local {
		if local[i].Seq != remote[i].Seq || local[i].Hash != remote[i].Hash {
			return fmt.Errorf("node %s: record %d differs (local %s, PostgreSQL %s)", n.ID, local[i].Seq, local[i].Hash, remote[i].Hash)
		}
	}
	return nil
}
