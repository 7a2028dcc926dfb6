package nodeagent

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// Handler is the node's API: internal/api over the Manager, behind the
// guard, authenticated by the tier's assertions only. cfg's Backend,
// Store, Ready and MCP are set here.
func (a *Agent) Handler(cfg api.Config) http.Handler {
	cfg.Backend = &guard{Manager: a.cfg.Manager, a: a}
	cfg.Store = assertionStore{a: a}
	cfg.Ready = a.ready
	cfg.MCP = nil
	h := api.New(cfg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.fencing.Load() && r.URL.Path != "/healthz" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"node is fencing: its lease was lost"}}` + "\n"))
			return
		}
		if v := r.Header.Get(nodewire.HeaderSandboxID); v != "" {
			r = r.WithContext(context.WithValue(r.Context(), idsKey{}, v))
		}
		h.ServeHTTP(w, r)
	})
}

type idsKey struct{}

// guard is the Manager as the node serves it: creates and forks take
// the tier's ids and only while the lease is confirmed.
type guard struct {
	*sandbox.Manager
	a *Agent
}

func (g *guard) Create(ctx context.Context, req sandbox.CreateRequest) (sandbox.Info, error) {
	if err := g.a.creatable(); err != nil {
		return sandbox.Info{}, err
	}
	id, _ := ctx.Value(idsKey{}).(string)
	if !nodewire.ValidSandboxID(id) {
		return sandbox.Info{}, errdefs.InvalidArgument("a cluster node creates only under the id its API chose (%s)", nodewire.HeaderSandboxID)
	}
	req.ID = id
	return g.Manager.Create(ctx, req)
}

func (g *guard) Fork(ctx context.Context, tenant, id string, count int) ([]sandbox.Info, error) {
	if err := g.a.creatable(); err != nil {
		return nil, err
	}
	v, _ := ctx.Value(idsKey{}).(string)
	ids := strings.Split(v, ",")
	if v == "" || len(ids) != count {
		return nil, errdefs.InvalidArgument("a cluster node forks only under the ids its API chose (%s, one per child)", nodewire.HeaderSandboxID)
	}
	for _, c := range ids {
		if !nodewire.ValidSandboxID(c) {
			return nil, errdefs.InvalidArgument("fork child id %q is not a sandbox id", c)
		}
	}
	return g.Manager.ForkWithIDs(ctx, tenant, id, ids)
}

// creatable refuses new sandboxes unless the lease is confirmed.
func (a *Agent) creatable() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.assertKey == nil || a.fencing.Load() {
		return errdefs.Unavailable("node is not registered")
	}
	if lease.NodeAction(a.lastAck, false, time.Now(), a.lease) != lease.Serve {
		return errdefs.Unavailable("node lease not confirmed")
	}
	return nil
}

// ready: registered, not fencing, lease confirmed.
func (a *Agent) ready(context.Context) error { return a.creatable() }

// assertionStore authenticates the tier's assertions for this node and
// epoch, and nothing else; keys and audit are the tier's.
type assertionStore struct{ a *Agent }

func (s assertionStore) AuthenticateKey(_ context.Context, token string) (store.Key, error) {
	s.a.mu.Lock()
	key, node, epoch := s.a.assertKey, s.a.cfg.NodeID, s.a.id.Epoch
	s.a.mu.Unlock()
	if key == nil {
		return store.Key{}, errdefs.PermissionDenied("node is not registered")
	}
	tenant, err := nodewire.Verify(key, node, epoch, token, time.Now())
	if err != nil {
		return store.Key{}, err
	}
	return store.Key{ID: "cluster-assertion", Tenant: tenant, Name: "cluster assertion", Prefix: "v1"}, nil
}

func (assertionStore) ListKeys(context.Context, string) ([]store.Key, error) {
	return nil, errdefs.NotFound("a cluster node serves no keys: ask the cluster API")
}

func (assertionStore) QueryAudit(context.Context, store.AuditFilter) ([]store.AuditRecord, error) {
	return nil, errdefs.NotFound("a cluster node serves no audit log: ask the cluster API")
}

// Epoch is the epoch the node last registered under (0 before).
func (a *Agent) Epoch() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.id.Epoch
}
