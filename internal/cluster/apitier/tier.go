package apitier

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/clock"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Config configures a Tier. Store and JoinToken are required.
type Config struct {
	Store *pgstore.Store
	// JoinToken is what a registering node must present.
	JoinToken string
	// Placement tunes placement; zero: placement.DefaultConfig with the
	// lease margin set to one heartbeat.
	Placement placement.Config
	// CreateTimeout bounds one create, placement and node call included;
	// 0: 30 s.
	CreateTimeout time.Duration
	// ReconcileAfter: a row still creating this long after it was made
	// is resolved by asking its node; 0: CreateTimeout + 10 s. It must
	// exceed CreateTimeout, or live creates would be resolved under them.
	ReconcileAfter time.Duration
	// KeyCache is how long an authenticated key is trusted without asking
	// the database (revocation takes up to this long; running sessions
	// ride out a short database outage); 0: 30 s, negative: off.
	KeyCache time.Duration
	// Failpoint names a create or fork step at which the process kills
	// itself (fault-injection tests only): after_row, after_node,
	// before_update; fork_after_row, fork_after_node, fork_before_update.
	Failpoint string
	Log       *slog.Logger
	// NodeClient calls the nodes; nil: one shared transport, no overall
	// timeout (streams last as long as their requests).
	NodeClient *http.Client
}

// Tier is one API replica. New makes it, Run drives its loops, and
// PublicHandler and InternalHandler serve.
type Tier struct {
	cfg    Config         // immutable after New
	st     *pgstore.Store // immutable
	lease  lease.Config   // immutable: the store's
	master []byte         // immutable: the tier's secret (node credentials derive from it)
	placer *placement.Placer
	keys   *keyCache
	routes *routeCache
	builds *builds

	mu   sync.Mutex
	view map[string]nodeInfo // guarded by mu; by node id, as last read
}

// nodeInfo is what the router needs of a node.
type nodeInfo struct {
	id        string
	addr      string
	epoch     int64
	state     lease.State
	templates []nodewire.Template
	hostClass string
}

// masterSecretName names the tier's secret in the database.
const masterSecretName = "node-credentials-v1"

// New opens the tier's secret and placement.
func New(ctx context.Context, cfg Config) (*Tier, error) {
	if cfg.Store == nil || cfg.JoinToken == "" {
		return nil, errdefs.InvalidArgument("apitier: a store and a join token are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.CreateTimeout <= 0 {
		cfg.CreateTimeout = 30 * time.Second
	}
	if cfg.ReconcileAfter <= cfg.CreateTimeout {
		cfg.ReconcileAfter = cfg.CreateTimeout + 10*time.Second
	}
	if cfg.KeyCache == 0 {
		cfg.KeyCache = 30 * time.Second
	}
	if cfg.NodeClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		tr.Proxy = nil
		cfg.NodeClient = &http.Client{Transport: tr}
	}
	lc := cfg.Store.Lease()
	pc := cfg.Placement
	if pc == (placement.Config{}) {
		pc = placement.DefaultConfig()
		pc.LeaseMargin = lc.Heartbeat
	}
	placer, err := placement.NewPlacer(pc, clock.Real{}, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	if err != nil {
		return nil, err
	}
	master, err := cfg.Store.ClusterSecret(ctx, masterSecretName)
	if err != nil {
		return nil, err
	}
	t := &Tier{cfg: cfg, st: cfg.Store, lease: lc, master: master, placer: placer,
		keys: newKeyCache(cfg.Store, cfg.KeyCache), routes: newRouteCache(), builds: newBuilds(), view: map[string]nodeInfo{}}
	if err := t.refresh(ctx); err != nil {
		cfg.Log.Warn("first node view", "err", err)
	}
	return t, nil
}

// PublicHandler is the public API: internal/api with the Router as its
// Backend and the database for keys and audit. cfg's Backend, Store and
// Ready are set here.
func (t *Tier) PublicHandler(cfg api.Config) http.Handler {
	cfg.Backend = &Router{t: t}
	cfg.Store = t.keys
	cfg.Ready = t.st.Ping
	if cfg.Logger == nil {
		cfg.Logger = t.cfg.Log
	}
	return api.New(cfg)
}

// Run drives the replica's loops until ctx ends: the node view, the
// sweeper, the audit sequencer, the creating reconciler and expiry.
func (t *Tier) Run(ctx context.Context) {
	var wg sync.WaitGroup
	loop := func(name string, every time.Duration, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(every):
				}
				if err := f(ctx); err != nil && ctx.Err() == nil {
					t.cfg.Log.Warn("cluster loop failed", "loop", name, "err", err)
				}
			}
		}()
	}
	loop("view", min(time.Second, t.lease.Heartbeat), t.refresh)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.listenBuilds(ctx)
	}()
	loop("sweep", t.lease.SweepInterval, t.sweep)
	loop("sequence", 200*time.Millisecond, func(ctx context.Context) error { _, err := t.st.SequenceAudit(ctx); return err })
	loop("reconcile", min(2*time.Second, t.cfg.ReconcileAfter/2), t.reconcile)
	loop("expire", 5*time.Second, func(ctx context.Context) error { _, err := t.st.ExpireDue(ctx, 500); return err })
	wg.Wait()
}

// sweep runs one sweep and forgets routes into the nodes it wrote off.
func (t *Tier) sweep(ctx context.Context) error {
	rep, err := t.st.Sweep(ctx)
	if err != nil {
		return err
	}
	if rep.Amnesty {
		t.cfg.Log.Warn("sweep granted amnesty: the previous sweep was too long ago", "extended", rep.Extended)
	}
	for _, n := range rep.Lost {
		t.cfg.Log.Warn("node lost", "node", n.ID, "epoch", n.OldEpoch, "sandboxes", len(n.Sandboxes))
		t.routes.dropNode(n.ID)
	}
	if len(rep.Lost) > 0 {
		return t.refresh(ctx)
	}
	return nil
}

// refresh reads every node's row and report and gives placement its view.
func (t *Tier) refresh(ctx context.Context) error {
	nodes, err := t.st.ListNodes(ctx)
	if err != nil {
		return err
	}
	reports, err := t.st.NodeReports(ctx)
	if err != nil {
		return err
	}
	if err := t.builds.read(ctx, t.st); err != nil {
		return err
	}
	views := make([]placement.NodeView, 0, len(nodes))
	infos := make(map[string]nodeInfo, len(nodes))
	for _, n := range nodes {
		rep := reports[n.ID]
		tmpls := templatesOf(rep.Capabilities)
		v := placement.NodeView{ID: n.ID, State: n.State, LeaseExpires: n.LeaseExpires, HeartbeatAt: n.HeartbeatAt,
			HostClass: n.HostClass, Capacity: placement.Resources{Slots: n.Capacity.Slots, MemMiB: n.Capacity.MemMiB, VCPUs: n.Capacity.VCPUs},
			Used: placement.Resources{Slots: n.Used.Slots, MemMiB: n.Used.MemMiB, VCPUs: n.Used.VCPUs}, CPUUsage: n.CPUUsage}
		if net, _ := rep.Capabilities["net"].(bool); net {
			v.Capabilities = []string{"net"}
		}
		for _, tm := range tmpls {
			// A build is a template name until templates are distributed
			// by build (part 3): every node reports what it can restore.
			v.Builds = append(v.Builds, placement.BuildState{Build: tm.Name, Ready: true, Warm: rep.Warm[tm.Name]})
		}
		// Published builds: by build id, as the node's syncer reported them.
		v.Builds = append(v.Builds, t.builds.states(n.ID)...)
		views = append(views, v)
		infos[n.ID] = nodeInfo{id: n.ID, addr: n.Addr, epoch: n.Epoch, state: n.State, templates: tmpls, hostClass: n.HostClass}
	}
	t.placer.SetView(views)
	t.mu.Lock()
	old := t.view
	t.view = infos
	t.mu.Unlock()
	// Another replica may have swept a node, or it registered again: the
	// rows cached as running on it are stale (lost, or killed at fencing).
	for id, was := range old {
		if now, ok := infos[id]; !ok || now.epoch != was.epoch || !now.state.Live() {
			t.routes.dropNode(id)
		}
	}
	return nil
}

// node returns the router's view of node id.
func (t *Tier) node(id string) (nodeInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.view[id]
	return n, ok
}

// templates returns the templates ready nodes report, by name (the first
// node's description of each), and every published template as its
// current build describes it.
func (t *Tier) templates() map[string]nodewire.Template {
	out := map[string]nodewire.Template{}
	for _, b := range t.builds.published() {
		out[b.Name] = templateOf(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.view {
		if !n.state.Live() {
			continue
		}
		for _, tm := range n.templates {
			if _, ok := out[tm.Name]; !ok { // a published build first
				out[tm.Name] = tm
			}
		}
	}
	return out
}

func (n nodeInfo) String() string { return fmt.Sprintf("%s@%s epoch %d", n.id, n.addr, n.epoch) }
