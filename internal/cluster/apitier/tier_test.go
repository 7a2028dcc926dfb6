package apitier

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/wire"
)

func TestMain(m *testing.M) { clustertest.Main(m) }

// node is a scripted node API on an httptest server: GET of a sandbox
// answers what answers holds for its id (a state, or an error code), and
// records the calls. The tier is what is tested; the real node agent is
// the multi-process tests'.
type node struct {
	mu      sync.Mutex
	answers map[string]string // id -> state, or "err:<code>:<status>"
	calls   int
}

func (n *node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls++
	id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	w.Header().Set("Content-Type", "application/json")
	a, ok := n.answers[id]
	if !ok {
		a = "err:not_found:404"
	}
	if code, found := strings.CutPrefix(a, "err:"); found {
		c, status, _ := strings.Cut(code, ":")
		w.WriteHeader(map[string]int{"404": 404, "403": 403, "500": 500}[status])
		_ = json.NewEncoder(w).Encode(wire.ErrorResponse{Error: wire.ErrorBody{Code: c, Message: "scripted"}})
		return
	}
	now := time.Now().UTC()
	sb := wire.Sandbox{ID: id, Tenant: "acme", Template: "base", State: a, CreatedAt: now, Deadline: now.Add(time.Hour),
		Metadata: map[string]string{}}
	if a != pgstore.StateRunning {
		sb.EndedAt = &now
	}
	_ = json.NewEncoder(w).Encode(sb)
}

// testTier is a Tier on a new database of the package's PostgreSQL, with
// one registered node served by a scripted node.
type testTier struct {
	*Tier
	scripted *node
	spec     pgstore.NodeSpec
	nodeID   string
	epoch    int64
	dsn      string
}

func newTestTier(t *testing.T) *testTier {
	t.Helper()
	ctx := context.Background()
	dsn := clustertest.Database(t)
	st, err := pgstore.Open(ctx, dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	tr, err := New(ctx, Config{Store: st, JoinToken: "join-token-for-tests"})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{answers: map[string]string{}}
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	spec := pgstore.NodeSpec{ID: "n1", Addr: strings.TrimPrefix(srv.URL, "http://"), Secret: "secret-n1",
		Capacity: pgstore.Capacity{Slots: 10, MemMiB: 4096, VCPUs: 8}}
	reg, err := st.RegisterNode(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	return &testTier{Tier: tr, scripted: n, spec: spec, nodeID: "n1", epoch: reg.Epoch, dsn: dsn}
}

// row makes a catalog row of tenant acme on the test node, creating, and
// confirms it running when running is set.
func (tt *testTier) row(t *testing.T, running bool) pgstore.Sandbox {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	sb := pgstore.Sandbox{ID: sandbox.NewSandboxID(), Tenant: "acme", Template: "base", BuildID: "base", NodeID: tt.nodeID,
		NodeEpoch: tt.epoch, State: pgstore.StateCreating, CreatedAt: now, Deadline: now.Add(time.Hour)}
	if err := tt.st.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if running {
		if err := tt.st.ConfirmSandbox(ctx, sb.ID, now, now.Add(time.Hour), false); err != nil {
			t.Fatal(err)
		}
		sb.State = pgstore.StateRunning
	}
	return sb
}

func (tt *testTier) state(t *testing.T, id string) (string, string) {
	t.Helper()
	sb, err := tt.st.GetSandbox(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return sb.State, sb.EndReason
}

// A create left creating is resolved by what its node says: running
// becomes running, unknown failed (create_lost), ended takes its end; a
// node that answers with an error leaves it for later, and so does a row
// whose node registered again (its sweep writes it off).
func TestReconcileDecisions(t *testing.T) {
	ctx := context.Background()
	tt := newTestTier(t)
	running, unknown, killed, broken := tt.row(t, false), tt.row(t, false), tt.row(t, false), tt.row(t, false)
	tt.scripted.answers[running.ID] = pgstore.StateRunning
	tt.scripted.answers[killed.ID] = pgstore.StateKilled
	tt.scripted.answers[broken.ID] = "err:internal:500"
	for _, sb := range []pgstore.Sandbox{running, unknown, killed, broken} {
		tt.resolve(ctx, sb)
	}
	for _, c := range []struct {
		sb            pgstore.Sandbox
		state, reason string
	}{
		{running, pgstore.StateRunning, ""},
		{unknown, pgstore.StateFailed, "create_lost"},
		{killed, pgstore.StateKilled, pgstore.StateKilled},
		{broken, pgstore.StateCreating, ""},
	} {
		if st, why := tt.state(t, c.sb.ID); st != c.state || why != c.reason {
			t.Errorf("node answered %q: row %s (%q), want %s (%q)", tt.scripted.answers[c.sb.ID], st, why, c.state, c.reason)
		}
	}
	// A row of an epoch the view no longer has is not the node's to
	// answer for: the node is not even asked.
	stale := broken
	stale.NodeEpoch = tt.epoch + 1
	calls := tt.scripted.calls
	tt.resolve(ctx, stale)
	if tt.scripted.calls != calls {
		t.Fatal("a row of another epoch was resolved by asking the node")
	}
}

// The route cache answers calls into running sandboxes without the
// database, but never across tenants; it forgets a sandbox when told,
// every sandbox of a node when told, and entries past their time.
func TestRouteCache(t *testing.T) {
	ctx := context.Background()
	tt := newTestTier(t)
	r := &Router{t: tt.Tier}
	sb := tt.row(t, true)
	if _, err := r.row(ctx, "acme", sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := tt.routes.get(sb.ID); !ok {
		t.Fatal("a running sandbox's row was not cached")
	}
	if _, err := r.row(ctx, "globex", sb.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("another tenant reading a cached row: %v, want not found", err)
	}
	creating := tt.row(t, false)
	if _, err := r.row(ctx, "acme", creating.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := tt.routes.get(creating.ID); ok {
		t.Fatal("a creating row was cached")
	}
	if _, n, err := r.route(ctx, "acme", creating.ID); !errdefs.IsNotFound(err) || n.id != "" {
		t.Fatalf("route to a creating sandbox: %v, want not found", err)
	}
	other := sb
	other.ID, other.NodeID = sandbox.NewSandboxID(), "n2"
	tt.routes.put(other)
	tt.routes.dropNode(tt.nodeID)
	if _, ok := tt.routes.get(sb.ID); ok {
		t.Fatal("dropNode left a row of the node")
	}
	if _, ok := tt.routes.get(other.ID); !ok {
		t.Fatal("dropNode dropped a row of another node")
	}
	tt.routes.drop(other.ID)
	if _, ok := tt.routes.get(other.ID); ok {
		t.Fatal("drop left the row")
	}
	tt.routes.put(sb)
	tt.routes.mu.Lock()
	e := tt.routes.m[sb.ID]
	e.until = time.Now().Add(-time.Millisecond)
	tt.routes.m[sb.ID] = e
	tt.routes.mu.Unlock()
	if _, ok := tt.routes.get(sb.ID); ok {
		t.Fatal("an entry past its time was answered")
	}
	// The node is swept (its lease ended) and registers again under a
	// new epoch: a refresh forgets its rows, and the route answers from
	// the catalog, where the row was written off.
	if _, err := r.row(ctx, "acme", sb.ID); err != nil {
		t.Fatal(err)
	}
	tt.sweepNode(t)
	if err := tt.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := tt.routes.get(sb.ID); ok {
		t.Fatal("the rows of a node that registered again stayed cached")
	}
	if _, _, err := r.route(ctx, "acme", sb.ID); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "is lost") {
		t.Fatalf("a route to a sandbox of a swept node: %v, want failed_precondition: lost", err)
	}
}

// sweepNode ends the test node's lease (its expiry set in the past), has
// it swept, and registers it again under the next epoch.
func (tt *testTier) sweepNode(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := tt.st.Sweep(ctx); err != nil { // the first sweep grants amnesty; this one is spent
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, tt.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE nodes SET lease_expires_at = now() - interval '1 hour' WHERE node_id = $1`, tt.nodeID); err != nil {
		t.Fatal(err)
	}
	if rep, err := tt.st.Sweep(ctx); err != nil || rep.Amnesty {
		t.Fatalf("sweep: %+v, %v", rep, err)
	}
	spec := tt.spec
	spec.Epoch = tt.epoch
	reg, err := tt.st.RegisterNode(ctx, spec)
	if err != nil || reg.Epoch == tt.epoch {
		t.Fatalf("register again: %+v, %v; want a new epoch", reg, err)
	}
	tt.epoch = reg.Epoch
}

// A node's answer reaches the tenant as the node's class, except stale
// credentials (the node registered again: 503, retry) and no answer at
// all (503 naming the sandbox, not the node's address, and the node
// benched for placement).
func TestNodeErr(t *testing.T) {
	ctx := context.Background()
	tt := newTestTier(t)
	r := &Router{t: tt.Tier}
	n, ok := tt.node(tt.nodeID)
	if !ok {
		t.Fatal("the node is not in the view")
	}
	sb := tt.row(t, true)
	tt.routes.put(sb)
	ask := func(n nodeInfo) error {
		_, err := tt.nodeClient(n, "acme").GetSandbox(ctx, sb.ID)
		return r.nodeErr(ctx, n, sb.ID, err)
	}
	tt.scripted.answers[sb.ID] = "err:not_found:404"
	if err := ask(n); !errdefs.IsNotFound(err) {
		t.Fatalf("node said not found: %v", err)
	}
	tt.scripted.answers[sb.ID] = "err:permission_denied:403"
	if err := ask(n); errdefs.Class(err) != errdefs.ErrUnavailable || !strings.Contains(err.Error(), "registered again") {
		t.Fatalf("node refused the credentials: %v (%v), want unavailable", err, errdefs.Class(err))
	}
	if _, ok := tt.routes.get(sb.ID); ok {
		t.Fatal("stale credentials left the route cached")
	}
	// No answer: a closed port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := n
	dead.addr = l.Addr().String()
	l.Close()
	err = ask(dead)
	if errdefs.Class(err) != errdefs.ErrUnavailable || !errors.Is(err, placement.ErrNoAnswer) ||
		strings.Contains(err.Error(), dead.addr) || !strings.Contains(err.Error(), sb.ID) {
		t.Fatalf("node did not answer: %v (%v), want unavailable naming the sandbox, not %s", err, errdefs.Class(err), dead.addr)
	}
	_, err = tt.placer.Place(ctx, placement.Request{Build: "base", MemMiB: 64, VCPUs: 1},
		func(context.Context, placement.Attempt) error { return nil })
	var pe *placement.Error
	if !errors.As(err, &pe) || pe.Rejected[placement.ReasonUnreachable] != 1 {
		t.Fatalf("after no answer the node was still a candidate: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.nodeErr(cctx, n, sb.ID, context.Canceled); errdefs.Class(err) != errdefs.ErrUnavailable {
		t.Fatalf("canceled request: %v", err)
	}
}
