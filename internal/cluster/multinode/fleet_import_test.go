package multinode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/store"
)

// hostDir is a single host's state directory made through the store's
// own API: keys of two tenants (one revoked), ended and running
// sandboxes (one forked), and their audit records.
type hostDir struct {
	dir     string
	keys    map[string]string // tenant -> a valid key
	ended   int
	running int
	records int64
}

func makeHostDir(t *testing.T) hostDir {
	t.Helper()
	ctx := context.Background()
	h := hostDir{dir: t.TempDir(), keys: map[string]string{}}
	st, err := store.Open(filepath.Join(h.dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tenant := range []string{"imp-a", "imp-b"} {
		key, _, err := st.CreateKey(ctx, tenant, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		h.keys[tenant] = key
		_, old, err := st.CreateKey(ctx, tenant, "old")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RevokeKey(ctx, old.ID); err != nil {
			t.Fatal(err)
		}
	}
	audit := func(tenant, id, event string) {
		t.Helper()
		if _, err := st.AppendAudit(ctx, store.AuditRecord{Tenant: tenant, SandboxID: id, Template: "base", Event: event,
			Outcome: "ok", Metadata: map[string]string{"case": "import"}}); err != nil {
			t.Fatal(err)
		}
		h.records++
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 6 {
		tenant := []string{"imp-a", "imp-b"}[i%2]
		sb := store.Sandbox{ID: fmt.Sprintf("host-sbx-%d", i), Tenant: tenant, Template: "base", State: store.StateRunning,
			CreatedAt: now.Add(time.Duration(i) * time.Second), Deadline: now.Add(time.Hour), NetSlot: store.NoNetSlot,
			Metadata: map[string]string{"case": "import"}}
		if i == 2 {
			sb.ParentID = "host-sbx-0"
		}
		if err := st.PutSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
		audit(tenant, sb.ID, store.EventCreate)
		audit(tenant, sb.ID, store.EventExec)
		if i == 5 {
			h.running++
			continue
		}
		if err := st.UpdateSandboxState(ctx, sb.ID, []string{store.StateKilled, store.StateExpired}[i%2], now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		audit(tenant, sb.ID, store.EventKill)
		h.ended++
	}
	return h
}

// importReport is `cluster import --json`.
type importReport struct {
	Chain        string   `json:"chain"`
	Tenants      []string `json:"tenants"`
	Keys         int      `json:"keys"`
	KeysAdded    int      `json:"keys_added"`
	Ended        int      `json:"ended_sandboxes"`
	EndedAdded   int      `json:"ended_sandboxes_added"`
	Running      int      `json:"running_sandboxes_not_imported"`
	AuditRecords int64    `json:"audit_records"`
	AuditAdded   int64    `json:"audit_records_added"`
	LastHash     string   `json:"last_hash"`
}

func runImport(t *testing.T, c *multiproc.Cluster, dir, node string) importReport {
	t.Helper()
	out, stderr, code := airlockCLI(t, c, "cluster", "import", "--state-dir", dir, "--node-id", node, "--json")
	if code != 0 {
		t.Fatalf("cluster import: exit %d: %s", code, stderr)
	}
	var r importReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("cluster import --json: %v: %s", err, out)
	}
	return r
}

// A single host's state directory, made by the store's API, imports into
// the cluster: its keys create sandboxes through the API tier, its chain
// verifies in PostgreSQL (`audit verify --cluster`), importing it again
// adds nothing, and a directory in use or with a tampered chain is
// refused with nothing written.
func TestFleetClusterImport(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 1, Nodes: 1})
	ctx := context.Background()
	h := makeHostDir(t)

	// In use: the daemon's lock is held (here by the test, as a daemon
	// holds it), so the import is refused and writes nothing.
	lock, err := daemon.LockStateDir(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := airlockCLI(t, c, "cluster", "import", "--state-dir", h.dir, "--node-id", "oldhost"); code == 0 ||
		!strings.Contains(stderr, "[failed_precondition]") || !strings.Contains(stderr, "another airlock process") {
		t.Fatalf("import of a directory in use: exit %d, %q", code, stderr)
	}
	lock.Close()
	if _, err := c.Store.GetTenant(ctx, "imp-a"); err == nil {
		t.Fatal("a refused import wrote a tenant")
	}

	first := runImport(t, c, h.dir, "oldhost")
	want := importReport{Chain: first.Chain, Tenants: []string{"imp-a", "imp-b"}, Keys: 4, KeysAdded: 4, Ended: h.ended,
		EndedAdded: h.ended, Running: h.running, AuditRecords: h.records, AuditAdded: h.records, LastHash: first.LastHash}
	if fmt.Sprint(first) != fmt.Sprint(want) || first.Chain == "" || first.LastHash == "" {
		t.Fatalf("first import: %+v\nwant %+v", first, want)
	}
	out, _, _ := airlockCLI(t, c, "cluster", "import", "--state-dir", h.dir, "--node-id", "oldhost")
	t.Logf("IMPORT first: %+v; again, as text:\n%s", first, out)

	// Importing again (above, as text) changed nothing.
	again := runImport(t, c, h.dir, "oldhost")
	if again.KeysAdded != 0 || again.EndedAdded != 0 || again.AuditAdded != 0 || again.Chain != first.Chain || again.LastHash != first.LastHash {
		t.Fatalf("import again: %+v, want nothing added", again)
	}
	head, err := c.Store.GetChainHead(ctx, first.Chain)
	if err != nil || head.Seq != h.records || head.Hash != first.LastHash {
		t.Fatalf("chain head in PostgreSQL %+v (%v), want %d records ending %s", head, err, h.records, first.LastHash)
	}

	// The catalog holds the ended sandboxes, the fork's parent kept.
	child, err := c.Store.GetSandbox(ctx, "imp-a", "host-sbx-2")
	if err != nil || child.State != store.StateKilled || child.ParentID != "host-sbx-0" || child.NodeID != "oldhost" {
		t.Fatalf("imported child %+v, %v", child, err)
	}
	if _, err := c.Store.GetSandbox(ctx, "", "host-sbx-5"); err == nil {
		t.Fatal("a running sandbox was imported")
	}

	// Imported keys work against the API tier.
	for tenant, key := range h.keys {
		cl, err := client.New("http://"+c.APIs[0].Public, key)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create with %s's imported key: %v", tenant, err)
		}
		if sb.Tenant != tenant {
			t.Errorf("create with %s's key made a sandbox of %s", tenant, sb.Tenant)
		}
		old, err := cl.GetSandbox(ctx, fmt.Sprintf("host-sbx-%d", map[string]int{"imp-a": 0, "imp-b": 1}[tenant]))
		if err != nil || old.State == "running" {
			t.Errorf("imported record through the tier: %+v, %v", old, err)
		}
		if err := sb.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}

	out, stderr, code := airlockCLI(t, c, "audit", "verify", "--cluster")
	if code != 0 || !strings.Contains(out, "chain "+first.Chain+" oldhost ok: "+fmt.Sprint(h.records)+" records") {
		t.Fatalf("audit verify --cluster: exit %d:\n%s%s", code, out, stderr)
	}
	t.Logf("audit verify --cluster:\n%s", out)

	tampered := makeHostDir(t)
	tamper(t, tampered.dir)
	if _, stderr, code := airlockCLI(t, c, "cluster", "import", "--state-dir", tampered.dir, "--node-id", "badhost"); code == 0 ||
		!strings.Contains(stderr, "[failed_precondition]") || !strings.Contains(stderr, "fails verification at record 2") {
		t.Fatalf("import of a tampered chain: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tampered.dir, "cluster-node.json")); err == nil {
		t.Error("a refused import left a node identity")
	}
	chains, err := c.Store.ListChains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chains {
		if ch.Node == "badhost" {
			t.Errorf("a refused import made chain %+v", ch)
		}
	}

	// The host joins as the node it was imported as: it registers over
	// its "left" row and ships its chain on from the imported head (Check
	// compares every node's local chain with PostgreSQL's copy).
	c.Nodes = append(c.Nodes, &multiproc.NodeProc{ID: "oldhost", StateDir: h.dir, Listen: multiproc.FreeAddr(t)})
	c.StartNode(len(c.Nodes) - 1)
	c.WaitView(func(v []nodewireView) bool { return readyIn(v, "oldhost") })
	if _, epoch := nodeRow(t, c, "oldhost"); epoch != 2 {
		t.Errorf("oldhost registered under epoch %d, want 2 (the import's 1, then its own)", epoch)
	}
	cl, err := client.New("http://"+c.APIs[0].Public, h.keys["imp-a"])
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitFor("oldhost ships its chain on", func() bool {
		head, err := c.Store.GetChainHead(ctx, first.Chain)
		return err == nil && head.Seq > h.records
	})
	check(t, c, "import", 0)
}

// tamper edits audit record 2 of dir's store in place, as someone with
// write access to the file would (the schema's triggers dropped first).
func tamper(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`DROP TRIGGER audit_no_update`, `UPDATE audit SET outcome = 'internal' WHERE seq = 2`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
