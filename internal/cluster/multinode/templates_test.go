package multinode

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/template"
)

// Blob sizes of the stand-in bake: 64 MiB memory, 2 MiB state, 32 MiB
// root image.
const (
	memBytes   = 64 << 20
	stateBytes = 2 << 20
	rootBytes  = 32 << 20
)

var uploadedRE = regexp.MustCompile(`(\d+) bytes uploaded of (\d+)\t([0-9.]+) s`)

// uploaded parses a publish line: bytes uploaded, total size.
func uploaded(t *testing.T, line string) (int64, int64) {
	t.Helper()
	m := uploadedRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("publish printed %q", line)
	}
	up, _ := strconv.ParseInt(m[1], 10, 64)
	size, _ := strconv.ParseInt(m[2], 10, 64)
	return up, size
}

// buildStates reads node_templates for build: node -> state.
func buildStates(t *testing.T, c *multiproc.Cluster) map[string]pgstore.NodeBuild {
	t.Helper()
	nbs, err := c.Store.NodeBuilds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pgstore.NodeBuild{}
	for _, nb := range nbs {
		out[nb.Node] = nb
	}
	return out
}

// TestTemplatePublishToFourNodes publishes a 98 MiB stand-in bake over
// HTTP to 4 nodes and measures the seconds and bytes until it is ready on
// every one; publishing it again moves no byte, up or down.
func TestTemplatePublishToFourNodes(t *testing.T) {
	store := &countingStore{}
	var err error
	if store.dir, err = blobs.NewDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(store.handler("blob-put-token"))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "blob-token")
	if err := os.WriteFile(tokenFile, []byte("blob-put-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	class := template.HostClass(testHost)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4, HostClass: class,
		NodeBlobs: []string{srv.URL, srv.URL, srv.URL, srv.URL}})
	ctx := context.Background()
	nodes, err := c.Store.ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.HostClass != class {
			t.Fatalf("node %s reports host class %q, want %q", n.ID, n.HostClass, class)
		}
	}
	builder, m := bake(t, "pub", memBytes, stateBytes, rootBytes)

	start := time.Now()
	line := publish(t, c, builder, "pub", srv.URL, tokenFile)
	published := time.Since(start)
	up, size := uploaded(t, line)
	if up != size || size != memBytes+stateBytes+rootBytes {
		t.Fatalf("first publish uploaded %d of %d bytes, want all %d", up, size, memBytes+stateBytes+rootBytes)
	}
	c.WaitFor("the build ready on 4 nodes", func() bool {
		ids, err := c.Store.NodesWithBuild(ctx, m.Key)
		return err == nil && len(ids) == 4
	})
	ready := time.Since(start)
	down := store.sent.Load()
	if down != 4*size {
		t.Errorf("nodes downloaded %d bytes, want 4 x %d", down, size)
	}
	t.Logf("publish %d bytes: %.2f s; ready on 4 nodes %.2f s after the publish began; %d bytes downloaded (%.0f MB/s into the nodes)",
		up, published.Seconds(), ready.Seconds(), down, float64(down)/1e6/(ready-published).Seconds())
	for _, n := range c.Nodes {
		reg, err := template.NewRegistry(filepath.Join(n.StateDir, "templates"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := reg.Get("pub")
		if err != nil {
			t.Fatalf("%s: %v", n.ID, err)
		}
		if got.Key != m.Key || got.RootImage != filepath.Join(got.Dir, template.ImportRoot) {
			t.Fatalf("%s holds %s with root %s", n.ID, got.Key, got.RootImage)
		}
	}

	// The API lists the published build; sandboxes of the template land
	// on the nodes that hold it.
	cl := c.Client(0)
	c.WaitFor("the API listing the published build", func() bool {
		ts, err := cl.Templates(ctx)
		if err != nil {
			t.Fatalf("templates: %v", err)
		}
		for _, tm := range ts {
			if tm.Name == "pub" && tm.Hash == m.Key {
				return true
			}
		}
		return false
	})
	firstCreate(t, c, "pub")
	for range 8 {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "pub", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create pub: %v", err)
		}
		if out, err := sb.Exec(ctx, "cat etc/airlock-build"); err != nil || strings.TrimSpace(out.Stdout) != m.Key {
			t.Fatalf("exec in %s on %s: %v %q", sb.ID, sb.Node, err, out.Stdout)
		}
	}

	// The same build again: nothing uploaded, nothing pulled.
	again := time.Now()
	line = publish(t, c, builder, "pub", srv.URL, tokenFile)
	if up, _ := uploaded(t, line); up != 0 {
		t.Fatalf("second publish uploaded %d bytes: %s", up, line)
	}
	c.WaitFor("every node heartbeating twice after the second publish", func() bool {
		ns, err := c.Store.ListNodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range ns {
			if n.HeartbeatAt.Before(again.Add(2 * multiproc.TestLease.Heartbeat)) {
				return false
			}
		}
		return true
	})
	if got := store.sent.Load(); got != down {
		t.Fatalf("the second publish moved %d bytes to the nodes", got-down)
	}
	t.Logf("second publish: %s", line)
	killAll(t, c)
}

// flipByte copies the blob store in src to a new directory with one byte
// of blob digest flipped, and returns its file:// URL.
func flipByte(t *testing.T, src, digest string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dst, "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(src, "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, "sha256", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == digest {
			b[len(b)/3] ^= 0x01
		}
		if err := os.WriteFile(filepath.Join(dst, "sha256", e.Name()), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + dst
}

// TestTemplatePullRefusesBadBlobs: five nodes pull one build, four of
// them from a bad store: one byte flipped in the memory file, the device
// state or the root image, or a server that cuts the memory file off
// half-way. Those four refuse it (failed, with the blob named), hold
// nothing of it, and get no sandbox of it; while the good node's pull is
// held, a create fails naming how many nodes are pulling.
func TestTemplatePullRefusesBadBlobs(t *testing.T) {
	srcDir := t.TempDir()
	good := &countingStore{gate: make(chan struct{})}
	var err error
	if good.dir, err = blobs.NewDir(srcDir); err != nil {
		t.Fatal(err)
	}
	goodSrv := httptest.NewServer(good.handler("tok-tok-tok"))
	defer goodSrv.Close()
	builder, m := bake(t, "pub", 8<<20, 1<<20, 4<<20)
	// The blobs go in first (the publish below finds them present), so
	// that the bad stores can be made from them.
	bs, err := blobs.Open("file://"+srcDir, "")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.NewRegistry(filepath.Join(builder, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	bt, err := tmpl.Get("pub")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bt.MemPath(), bt.StatePath(), bt.RootImage} {
		if _, _, err := blobs.Upload(context.Background(), bs, p); err != nil {
			t.Fatal(err)
		}
	}
	cut := &countingStore{dir: good.dir, cut: m.MemSHA256, gate: good.gate}
	cutSrv := httptest.NewServer(cut.handler(""))
	defer cutSrv.Close()
	// Deferred after the servers' Close, so it runs first: a test that
	// fails before it opens the gate must not leave Close waiting forever
	// on the pulls the gate holds.
	var openGate sync.Once
	defer openGate.Do(func() { close(good.gate) })
	urls := []string{goodSrv.URL, flipByte(t, srcDir, m.MemSHA256), flipByte(t, srcDir, m.StateSHA256),
		flipByte(t, srcDir, m.RootImageSHA256), cutSrv.URL}
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 1, Nodes: 5, HostClass: template.HostClass(testHost), NodeBlobs: urls})
	ctx := context.Background()
	// An import an earlier process left half-done on node0: the next
	// pull removes it.
	stale := filepath.Join(c.Nodes[0].StateDir, "templates", "pub", ".import-"+m.Key)
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "mem"), []byte("half a memory file"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tokenFile, []byte("tok-tok-tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if up, _ := uploaded(t, publish(t, c, builder, "pub", goodSrv.URL, tokenFile)); up != 0 {
		t.Fatalf("publish uploaded %d bytes of blobs already present", up)
	}
	want := map[string]string{"node1": "memory file", "node2": "device state", "node3": "root image"}
	c.WaitFor("three bad stores refused, two pulls held", func() bool {
		st := buildStates(t, c)
		for node, what := range want {
			if st[node].State != "failed" || !strings.Contains(st[node].Detail, what) || !strings.Contains(st[node].Detail, "hashes to") {
				return false
			}
		}
		return st["node0"].State == "pulling" && st["node4"].State == "pulling"
	})
	// The tier reads the nodes' reports after they are written: wait for
	// its answer to name the two pulls; no create may succeed meanwhile.
	c.WaitFor("a create refused, naming 2 nodes pulling", func() bool {
		_, err = c.Client(0).CreateSandbox(ctx, client.CreateOptions{Template: "pub"})
		if !errors.Is(err, client.ErrFailedPrecondition) {
			t.Fatalf("create with the build ready nowhere: %v, want failed_precondition", err)
		}
		return strings.Contains(err.Error(), "pulling on 2")
	})
	t.Logf("create while pulling: %v", err)
	openGate.Do(func() { close(good.gate) })
	c.WaitFor("node0 ready, node4 cut off", func() bool {
		st := buildStates(t, c)
		return st["node0"].State == "ready" && st["node4"].State == "failed"
	})
	st := buildStates(t, c)
	if !strings.Contains(st["node4"].Detail, "cut off") {
		t.Errorf("node4's detail: %q", st["node4"].Detail)
	}
	for node, nb := range st {
		t.Logf("%s: %s %s", node, nb.State, nb.Detail)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("node0's stale import is still there: %v", err)
	}
	for _, n := range c.Nodes[1:] {
		entries, _ := os.ReadDir(filepath.Join(n.StateDir, "templates", "pub"))
		if len(entries) != 0 {
			t.Errorf("%s holds %d entries of the refused build (%s...)", n.ID, len(entries), entries[0].Name())
		}
	}
	cl := c.Client(0)
	if sb := firstCreate(t, c, "pub"); sb.Node != "node0" {
		t.Fatalf("a sandbox of pub was placed on %s, which refused the build", sb.Node)
	}
	for range 10 {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "pub", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if sb.Node != "node0" {
			t.Fatalf("a sandbox of pub was placed on %s, which refused the build", sb.Node)
		}
	}
	killAll(t, c)
}

// firstCreate waits until API 0 places a sandbox of name: the tier reads
// a node's report of a build after the report is written, so a create
// right after the database shows it ready may still find it pulling.
func firstCreate(t *testing.T, c *multiproc.Cluster, name string) *client.Sandbox {
	t.Helper()
	var sb *client.Sandbox
	c.WaitFor("a first sandbox of "+name+" placed", func() bool {
		var err error
		sb, err = c.Client(0).CreateSandbox(context.Background(), client.CreateOptions{Template: name, TTLSeconds: 600})
		if err != nil && !errors.Is(err, client.ErrFailedPrecondition) {
			t.Fatalf("create %s: %v", name, err)
		}
		return err == nil
	})
	return sb
}
