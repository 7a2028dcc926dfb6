package apitier

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/cluster/templatepub"
)

// builds is the replica's copy of the published templates: every
// template's current build and what each node reported of it. It is read
// again on every node view refresh and on each NOTIFY of a publish.
type builds struct {
	mu      sync.Mutex
	current map[string]pgstore.Build       // guarded by mu; by template name
	byClass map[string][]nodewire.Build    // guarded by mu; by host class
	onNode  map[string][]pgstore.NodeBuild // guarded by mu; by node id
}

func newBuilds() *builds {
	return &builds{current: map[string]pgstore.Build{}, byClass: map[string][]nodewire.Build{}, onNode: map[string][]pgstore.NodeBuild{}}
}

// read reads the current builds and the nodes' reports of them.
func (b *builds) read(ctx context.Context, st *pgstore.Store) error {
	cur, err := st.CurrentBuilds(ctx)
	if err != nil {
		return err
	}
	reps, err := st.NodeBuilds(ctx)
	if err != nil {
		return err
	}
	current := make(map[string]pgstore.Build, len(cur))
	byClass := map[string][]nodewire.Build{}
	for _, c := range cur {
		current[c.Name] = c
		byClass[c.HostClass] = append(byClass[c.HostClass], templatepub.Offer(c))
	}
	onNode := map[string][]pgstore.NodeBuild{}
	for _, r := range reps {
		onNode[r.Node] = append(onNode[r.Node], r)
	}
	b.mu.Lock()
	b.current, b.byClass, b.onNode = current, byClass, onNode
	b.mu.Unlock()
	return nil
}

// forClass returns the current builds nodes of class pull.
func (b *builds) forClass(class string) []nodewire.Build {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]nodewire.Build{}, b.byClass[class]...)
}

// currentOf returns template name's current build, if it was published.
func (b *builds) currentOf(name string) (pgstore.Build, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.current[name]
	return c, ok
}

// states returns node's builds for placement: ready, or pulling (a failed
// pull is not reported: it is not on its way).
func (b *builds) states(node string) []placement.BuildState {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []placement.BuildState
	for _, r := range b.onNode[node] {
		if r.State == nodewire.BuildReady || r.State == nodewire.BuildPulling {
			out = append(out, placement.BuildState{Build: r.Build, Ready: r.State == nodewire.BuildReady})
		}
	}
	return out
}

// listenBuilds refreshes the view at every publish, listening again
// after a lost connection, until ctx ends.
func (t *Tier) listenBuilds(ctx context.Context) {
	for ctx.Err() == nil {
		err := t.st.ListenTemplates(ctx, func() {
			if err := t.refresh(ctx); err != nil && ctx.Err() == nil {
				t.cfg.Log.Warn("node view after a publish", "err", err)
			}
		})
		if err != nil && ctx.Err() == nil {
			t.cfg.Log.Warn("listening for template publishes", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// handleBuild records a node's state of one build.
func (t *Tier) handleBuild(w http.ResponseWriter, r *http.Request, node string, _ int64) {
	var req nodewire.BuildReport
	if err := nodewire.Decode(r.Body, &req); err != nil {
		writeErr(w, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeErr(w, err)
		return
	}
	if err := t.st.SetNodeBuild(r.Context(), node, req.Build, req.State, req.Detail); err != nil {
		writeErr(w, err)
		return
	}
	t.cfg.Log.Info("node build", "node", node, "build", req.Build, "state", req.State, "detail", req.Detail)
	if err := t.refresh(r.Context()); err != nil {
		t.cfg.Log.Warn("node view after a build report", "err", err)
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// target is what a create of template name is placed for: its published
// current build (on nodes of the build's host class holding it ready),
// or else the template as nodes reported it at registration (any node
// that has it, by name).
func (t *Tier) target(name string) (nodewire.Template, placement.Request, bool) {
	if b, ok := t.builds.currentOf(name); ok {
		return templateOf(b), placement.Request{Template: b.Name, Build: b.BuildID, HostClass: b.HostClass,
			MemMiB: int64(b.MemoryMiB), VCPUs: b.VCPUs}, true
	}
	tm, ok := t.templates()[name]
	return tm, placement.Request{Template: tm.Name, Build: tm.Name, MemMiB: int64(tm.MemoryMiB), VCPUs: tm.VCPUs}, ok
}

// templateOf is a published build as the API lists its template.
func templateOf(b pgstore.Build) nodewire.Template {
	return nodewire.Template{Name: b.Name, Hash: b.BuildID, MemoryMiB: b.MemoryMiB, VCPUs: b.VCPUs,
		DefaultTTLSeconds: int(b.DefaultTTL / time.Second), BuiltAt: b.PublishedAt}
}

// published returns the current build of every published template.
func (b *builds) published() []pgstore.Build {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]pgstore.Build, 0, len(b.current))
	for _, c := range b.current {
		out = append(out, c)
	}
	return out
}
