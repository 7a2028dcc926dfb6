package nodeagent

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
)

// tier is a scripted cluster API on an httptest server: it registers
// the node under epoch (one more at each registration), answers
// heartbeats with heartbeatCode (200 when 0), and takes every ship,
// answering the head it holds. The agent is what is tested; the tier's
// own behaviour is the multi-process tests'.
type tier struct {
	master []byte

	mu            sync.Mutex
	epoch         int64
	registers     int
	heartbeatCode int
	ships         []nodewire.ShipRequest
	head          int64 // the chain head it answers; moved by each ship
	accept        int   // records of a ship it takes (0: all), as if the rest failed its checks
}

func (tr *tier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == nodewire.PathRegister:
		var req nodewire.RegisterRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		tr.registers++
		tr.epoch++
		_ = json.NewEncoder(w).Encode(nodewire.RegisterResponse{Epoch: tr.epoch, Token: "session",
			AssertKey: nodewire.AssertKey(tr.master, req.NodeID, tr.epoch), HeartbeatMS: 500, TTLMS: 3000, GraceMS: 1000,
			ChainSeq: tr.head})
	case strings.HasSuffix(r.URL.Path, "/heartbeat"):
		if tr.heartbeatCode != 0 {
			code := "unavailable"
			if tr.heartbeatCode == http.StatusConflict {
				code = "failed_precondition"
			}
			w.WriteHeader(tr.heartbeatCode)
			_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"scripted"}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(nodewire.HeartbeatResponse{State: "ready"})
	case strings.HasSuffix(r.URL.Path, "/ship"):
		var req nodewire.ShipRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		tr.ships = append(tr.ships, req)
		if n := len(req.Audit); n > 0 {
			if tr.accept > 0 {
				n = min(n, tr.accept)
			}
			tr.head = req.Audit[n-1].Seq
		}
		_ = json.NewEncoder(w).Encode(nodewire.ShipResponse{ChainSeq: tr.head})
	default:
		http.NotFound(w, r)
	}
}

// testAgent is an Agent over a real Manager (stand-in machines) and a
// real store, registered with a scripted tier, serving its API on an
// httptest server.
type testAgent struct {
	*Agent
	tier *tier
	st   *store.Store
	url  string // the node's API
}

const testNode = "node1"

func newTestAgent(t *testing.T) *testAgent {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	layer, err := localmachines.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, nil); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	mgr, err := sandbox.New(ctx, sandbox.Config{Machines: layer, TemplateSource: layer, Store: st, Metrics: m, MaxTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Fence(context.Background()); mgr.Close() })
	tr := &tier{master: []byte("0123456789abcdef0123456789abcdef")}
	ts := httptest.NewServer(tr)
	t.Cleanup(ts.Close)
	a, err := New(Config{TierURL: ts.URL, JoinToken: "join-token-for-tests", NodeID: testNode, Addr: "127.0.0.1:1",
		StateDir: dir, Manager: mgr, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.register(ctx); err != nil {
		t.Fatal(err)
	}
	node := httptest.NewServer(a.Handler(api.Config{Metrics: m, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(node.Close)
	return &testAgent{Agent: a, tier: tr, st: st, url: node.URL}
}

// assertion is what the tier would send for tenant, with this node's
// key under epoch, for node, expiring at exp.
func (ta *testAgent) assertion(master []byte, node string, epoch int64, exp time.Time) string {
	return nodewire.Assert(nodewire.AssertKey(master, node, epoch), node, epoch, "acme", exp)
}

// call makes one request to the node's API with bearer token auth and,
// for a create, the tier's id header; it returns the status and the
// error code.
func (ta *testAgent) call(t *testing.T, method, path, auth, id string) (int, string) {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"template":"base"}`)
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, ta.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if id != "" {
		req.Header.Set(nodewire.HeaderSandboxID, id)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&e)
	return res.StatusCode, e.Error.Code
}

// Every call to the node's API needs a valid, unexpired assertion for
// this node and its current epoch: forged, expired, another node's,
// another epoch's, too long-lived or none are all refused before the
// Manager is asked; after the node registers again, the old epoch's
// assertions are refused too.
func TestAssertionsRefused(t *testing.T) {
	ta := newTestAgent(t)
	master, epoch, now := ta.tier.master, ta.Epoch(), time.Now()
	valid := ta.assertion(master, testNode, epoch, now.Add(nodewire.AssertionTTL))
	if code, _ := ta.call(t, http.MethodGet, "/v1/sandboxes", valid, ""); code != http.StatusOK {
		t.Fatalf("a valid assertion: %d", code)
	}
	for _, tc := range []struct{ name, auth string }{
		{"none", ""},
		{"garbage", "not-an-assertion"},
		{"forged (another master)", ta.assertion([]byte("another-master-secret-0123456789"), testNode, epoch, now.Add(time.Minute))},
		{"expired", ta.assertion(master, testNode, epoch, now.Add(-time.Second))},
		{"too long-lived", ta.assertion(master, testNode, epoch, now.Add(nodewire.MaxAssertionTTL+time.Minute))},
		{"another node's", ta.assertion(master, "node2", epoch, now.Add(time.Minute))},
		{"another node's, signed with this node's key", nodewire.Assert(nodewire.AssertKey(master, testNode, epoch), "node2", epoch, "acme", now.Add(time.Minute))},
		{"a later epoch's", ta.assertion(master, testNode, epoch+1, now.Add(time.Minute))},
		{"an API key", "ak_live_0123456789abcdef"},
	} {
		for _, p := range []struct{ method, path string }{{http.MethodGet, "/v1/sandboxes"}, {http.MethodPost, "/v1/sandboxes"}} {
			code, ecode := ta.call(t, p.method, p.path, tc.auth, sandbox.NewSandboxID())
			if code != http.StatusUnauthorized && code != http.StatusForbidden {
				t.Errorf("%s: %s %s answered %d %s, want refused", tc.name, p.method, p.path, code, ecode)
			}
		}
	}
	if n := len(ta.cfg.Manager.Running()); n != 0 {
		t.Fatalf("%d sandboxes made by refused calls", n)
	}
	// Registered again (the tier gives epoch+1): yesterday's assertion
	// is refused, the new epoch's accepted.
	if err := ta.register(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := ta.call(t, http.MethodGet, "/v1/sandboxes", valid, ""); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Fatalf("the previous epoch's assertion after re-registration: %d", code)
	}
	if code, _ := ta.call(t, http.MethodGet, "/v1/sandboxes", ta.assertion(master, testNode, epoch+1, now.Add(time.Minute)), ""); code != http.StatusOK {
		t.Fatalf("the new epoch's assertion: %d", code)
	}
}

// The node takes creates only while its lease is confirmed (an
// acknowledgement within TTL/2), serves calls into running sandboxes
// meanwhile, answers 503 to everything while it fences, and fences
// (destroys its sandboxes, registers under a new epoch) when the tier
// refuses its heartbeat as swept, but not when the tier merely does not
// answer.
func TestLeaseAndFencing(t *testing.T) {
	ctx := context.Background()
	ta := newTestAgent(t)
	auth := func() string {
		return ta.assertion(ta.tier.master, testNode, ta.Epoch(), time.Now().Add(time.Minute))
	}
	id := sandbox.NewSandboxID()
	if code, ecode := ta.call(t, http.MethodPost, "/v1/sandboxes", auth(), id); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("create with the lease confirmed: %d %s", code, ecode)
	}
	if code, ecode := ta.call(t, http.MethodPost, "/v1/sandboxes", auth(), ""); code != http.StatusBadRequest {
		t.Fatalf("create without the tier's id: %d %s, want 400", code, ecode)
	}
	// No acknowledgement for more than TTL/2: no creates, calls go on.
	ta.mu.Lock()
	ta.lastAck = time.Now().Add(-ta.lease.TTL/2 - 100*time.Millisecond)
	ta.mu.Unlock()
	if code, ecode := ta.call(t, http.MethodPost, "/v1/sandboxes", auth(), sandbox.NewSandboxID()); code != http.StatusServiceUnavailable || ecode != "unavailable" {
		t.Fatalf("create with the lease unconfirmed: %d %s, want 503 unavailable", code, ecode)
	}
	if code, _ := ta.call(t, http.MethodGet, "/v1/sandboxes/"+id, auth(), ""); code != http.StatusOK {
		t.Fatalf("a running sandbox with the lease unconfirmed: %d", code)
	}
	// The tier does not answer the heartbeat (no fence-after): nothing
	// is destroyed.
	ta.tier.mu.Lock()
	ta.tier.heartbeatCode = http.StatusServiceUnavailable
	ta.tier.mu.Unlock()
	ta.beat(ctx)
	if n := len(ta.cfg.Manager.Running()); n != 1 || ta.Epoch() != 1 {
		t.Fatalf("after an unanswered heartbeat: %d running, epoch %d; want 1, 1", n, ta.Epoch())
	}
	// While fencing, everything but /healthz answers 503.
	ta.fencing.Store(true)
	if code, ecode := ta.call(t, http.MethodGet, "/v1/sandboxes/"+id, auth(), ""); code != http.StatusServiceUnavailable || ecode != "unavailable" {
		t.Fatalf("a call while fencing: %d %s", code, ecode)
	}
	if code, _ := ta.call(t, http.MethodGet, "/healthz", "", ""); code != http.StatusOK {
		t.Fatalf("healthz while fencing: %d", code)
	}
	ta.fencing.Store(false)
	// Swept: the tier refuses the heartbeat. The node destroys its
	// sandboxes and registers again under the next epoch.
	ta.tier.mu.Lock()
	ta.tier.heartbeatCode = http.StatusConflict
	ta.tier.mu.Unlock()
	ta.beat(ctx)
	if n := len(ta.cfg.Manager.Running()); n != 0 || ta.Epoch() != 2 || ta.fencing.Load() {
		t.Fatalf("after a refused heartbeat: %d running, epoch %d, fencing %v; want 0, 2, false", n, ta.Epoch(), ta.fencing.Load())
	}
	if code, _ := ta.call(t, http.MethodGet, "/v1/sandboxes/"+id, auth(), ""); code != http.StatusOK && code != http.StatusNotFound {
		t.Fatalf("after the fence: %d", code)
	}
}

// Shipping sends the audit records after the head the tier holds, in
// batches of at most nodewire.MaxShipAudit, each starting where the
// tier's answer put the head, until a short batch; an end once; and
// after a registration that gives an earlier head (the shared store lost
// its tail), the records after that head again.
func TestShipBatches(t *testing.T) {
	ctx := context.Background()
	ta := newTestAgent(t)
	const extra = 2*nodewire.MaxShipAudit + 7
	for range extra {
		if _, err := ta.st.AppendAudit(ctx, store.AuditRecord{Event: "exec", Outcome: "ok", Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	id := sandbox.NewSandboxID()
	if _, err := ta.cfg.Manager.Create(ctx, sandbox.CreateRequest{Tenant: "acme", Template: "base", ID: id}); err != nil {
		t.Fatal(err)
	}
	if err := ta.cfg.Manager.Kill(ctx, "acme", id); err != nil {
		t.Fatal(err)
	}
	all, err := ta.st.QueryAudit(ctx, store.AuditFilter{Limit: 10 * extra})
	if err != nil {
		t.Fatal(err)
	}
	total := int64(len(all))
	ta.ship(ctx)
	ships := ta.tier.shipped()
	want := int((total + nodewire.MaxShipAudit - 1) / nodewire.MaxShipAudit)
	if len(ships) != want {
		t.Fatalf("%d records went in %d ships, want %d", total, len(ships), want)
	}
	next, ended := int64(1), 0
	for i, s := range ships {
		if len(s.Audit) > nodewire.MaxShipAudit || (i < len(ships)-1 && len(s.Audit) != nodewire.MaxShipAudit) {
			t.Fatalf("ship %d carried %d records", i, len(s.Audit))
		}
		for _, r := range s.Audit {
			if r.Seq != next {
				t.Fatalf("ship %d: record %d where %d was next", i, r.Seq, next)
			}
			next++
		}
		for _, e := range s.Ended {
			if e.ID == id && e.State == store.StateKilled {
				ended++
			}
		}
	}
	if next != total+1 || ended != 1 {
		t.Fatalf("shipped records up to %d of %d, the end %d times; want all, once", next-1, total, ended)
	}
	ta.ship(ctx)
	if n := len(ta.tier.shipped()); n != len(ships) {
		t.Fatalf("nothing new, yet %d more ships", n-len(ships))
	}
	// The shared store's head is back at 900 (a failover lost the tail):
	// the node learns it at registration and ships from there.
	ta.tier.mu.Lock()
	ta.tier.head = 900
	ta.tier.mu.Unlock()
	if err := ta.register(ctx); err != nil {
		t.Fatal(err)
	}
	ta.ship(ctx)
	again := ta.tier.shipped()[len(ships):]
	if len(again) != 1 || len(again[0].Audit) != int(total-900) || again[0].Audit[0].Seq != 901 {
		t.Fatalf("after the head went back to 900: %d ships, want one of records 901..%d", len(again), total)
	}
	// The tier takes only part of each ship: the next starts after what
	// it took, not after what was sent.
	ta.tier.mu.Lock()
	ta.tier.accept = 250
	ta.tier.mu.Unlock()
	for range 600 {
		if _, err := ta.st.AppendAudit(ctx, store.AuditRecord{Event: "exec", Outcome: "ok", Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	before := len(ta.tier.shipped())
	ta.ship(ctx)
	part := ta.tier.shipped()[before:]
	if len(part) != 2 || part[0].Audit[0].Seq != total+1 || part[1].Audit[0].Seq != total+251 {
		t.Fatalf("with the tier taking 250 of each: %d ships starting at %v, want 2 starting at %d and %d",
			len(part), firstSeqs(part), total+1, total+251)
	}
}

func firstSeqs(ships []nodewire.ShipRequest) []int64 {
	var out []int64
	for _, s := range ships {
		if len(s.Audit) > 0 {
			out = append(out, s.Audit[0].Seq)
		}
	}
	return out
}

func (tr *tier) shipped() []nodewire.ShipRequest {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]nodewire.ShipRequest(nil), tr.ships...)
}
