package nodeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/templatesync"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/wire"
)

// Config configures an Agent. Everything but Log and Client is required.
type Config struct {
	// TierURL is the API tier's internal listener, http://host:port;
	// several, comma-separated, are tried in turn when one does not
	// answer (API replicas without a load balancer in front).
	TierURL string
	// JoinToken is the cluster's join token (registration only).
	JoinToken string
	// NodeID names this node; Addr is the host:port the tier reaches
	// this node's API on.
	NodeID, Addr string
	Version      string
	// StateDir holds the node's identity file beside its store.
	StateDir string
	Manager  *sandbox.Manager
	// Store is the node's own store: its sandbox ends and audit chain
	// are shipped from it.
	Store    *store.Store
	Capacity nodewire.Capacity
	Net      bool
	Log      *slog.Logger
	// Client calls the tier; nil: a client with a 10 s timeout.
	Client *http.Client
	// HostClass is the class of bakes this node restores
	// (template.HostClassOf its host): the tier offers it the builds of
	// that class.
	HostClass string
	// Templates and Blobs, both set, make the node pull the current
	// builds of its class from the blob store into its template registry
	// (internal/cluster/templatesync).
	Templates *template.Registry
	Blobs     blobs.Store
}

// Agent is one node's membership of a cluster. Run drives it; Handler
// serves the node's API through it.
type Agent struct {
	cfg  Config   // immutable after New
	urls []string // immutable: cfg.TierURL split
	cur  atomic.Int32
	sync *templatesync.Syncer // immutable; nil without Templates and Blobs

	// fencing: every local sandbox is being destroyed and the node is
	// registering again; the API answers 503 meanwhile.
	fencing atomic.Bool

	mu        sync.Mutex
	id        identity     // guarded by mu; Epoch as last registered
	token     string       // guarded by mu; session token under id.Epoch
	assertKey []byte       // guarded by mu; nil until registered
	lease     lease.Config // guarded by mu; from the registration answer
	lastAck   time.Time    // guarded by mu; when the last acknowledged call was sent (monotonic)
	head      chainHead    // guarded by mu; the node chain's head in the shared store
	// endCursor: ends at or after it (less endOverlap) are shipped again
	// unless in shipped, which holds the ids shipped since. Guarded by mu.
	endCursor time.Time
	shipped   map[string]time.Time
}

type chainHead struct {
	seq  int64
	hash string
}

// endOverlap is how far back each ship reads ends again: an end is
// stamped before it is written, so a later-written end may carry an
// earlier time than one already shipped.
const endOverlap = 10 * time.Second

// New loads (or makes) the node's identity.
func New(cfg Config) (*Agent, error) {
	if cfg.Manager == nil || cfg.Store == nil || strings.Trim(cfg.TierURL, ", ") == "" || cfg.NodeID == "" || cfg.Addr == "" {
		return nil, errdefs.InvalidArgument("nodeagent: tier URL, node id, addr, manager and store are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	var urls []string
	for _, u := range strings.Split(cfg.TierURL, ",") {
		if u = strings.TrimSuffix(strings.TrimSpace(u), "/"); u != "" {
			urls = append(urls, u)
		}
	}
	id, err := loadIdentity(cfg.StateDir, cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("nodeagent: %w", err)
	}
	a := &Agent{cfg: cfg, urls: urls, id: id, shipped: map[string]time.Time{}}
	if cfg.Templates != nil && cfg.Blobs != nil {
		a.sync = templatesync.New(templatesync.Config{Registry: cfg.Templates, Blobs: cfg.Blobs, Report: a.reportBuild, Log: cfg.Log})
	}
	return a, nil
}

// Run registers the node (fencing first if its stored epoch is gone),
// then heartbeats and ships until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.registerLoop(ctx); err != nil {
		return err
	}
	if a.sync != nil {
		defer a.sync.Wait()
	}
	for {
		a.mu.Lock()
		every := a.lease.Heartbeat
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
		a.beat(ctx)
	}
}

// registerLoop registers until it succeeds or ctx ends.
func (a *Agent) registerLoop(ctx context.Context) error {
	wait := 100 * time.Millisecond
	for {
		err := a.register(ctx)
		if err == nil {
			return nil
		}
		a.cfg.Log.Warn("cluster registration failed; retrying", "node", a.cfg.NodeID, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 2*time.Second)
	}
}

func (a *Agent) register(ctx context.Context) error {
	ts, err := a.cfg.Manager.Templates(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	req := nodewire.RegisterRequest{NodeID: a.cfg.NodeID, Addr: a.cfg.Addr, Version: a.cfg.Version,
		Epoch: a.id.Epoch, Secret: a.id.Secret, Chain: a.id.Chain, Capacity: a.cfg.Capacity, Net: a.cfg.Net, HostClass: a.cfg.HostClass}
	a.mu.Unlock()
	for _, t := range ts {
		req.Templates = append(req.Templates, nodewire.Template{Name: t.Name, Hash: t.Hash, MemoryMiB: t.MemoryMiB,
			VCPUs: t.VCPUs, DefaultTTLSeconds: t.DefaultTTLSeconds, BuiltAt: t.BuiltAt})
	}
	sent := time.Now()
	var resp nodewire.RegisterResponse
	if err := a.call(ctx, nodewire.PathRegister, "Bearer "+a.cfg.JoinToken, 0, req, &resp); err != nil {
		return err
	}
	if resp.Fence {
		a.fence(ctx, "registration found the stored epoch gone")
	}
	a.mu.Lock()
	a.id.Epoch = resp.Epoch
	a.token, a.assertKey = resp.Token, resp.AssertKey
	a.lease = lease.Config{Heartbeat: time.Duration(resp.HeartbeatMS) * time.Millisecond,
		TTL: time.Duration(resp.TTLMS) * time.Millisecond, Grace: time.Duration(resp.GraceMS) * time.Millisecond,
		FenceAfter: time.Duration(resp.FenceAfterMS) * time.Millisecond}
	if a.lease.Heartbeat <= 0 {
		a.lease.Heartbeat = time.Second
	}
	a.lastAck = sent
	a.head = chainHead{seq: resp.ChainSeq, hash: resp.ChainHash}
	id := a.id
	a.mu.Unlock()
	a.cfg.Log.Info("cluster node registered", "node", a.cfg.NodeID, "epoch", resp.Epoch, "fenced", resp.Fence)
	return saveIdentity(a.cfg.StateDir, id)
}

// fence destroys every local sandbox. The API answers 503 meanwhile.
func (a *Agent) fence(ctx context.Context, why string) {
	a.fencing.Store(true)
	n := a.cfg.Manager.Fence(ctx)
	a.cfg.Log.Warn("cluster node fenced: destroyed its sandboxes", "node", a.cfg.NodeID, "sandboxes", n, "why", why)
}

// fenceAndRegister fences, then registers again (new epoch); the API
// serves again only after.
func (a *Agent) fenceAndRegister(ctx context.Context, why string) {
	a.fence(ctx, why)
	a.mu.Lock()
	a.assertKey = nil
	a.mu.Unlock()
	if err := a.registerLoop(ctx); err != nil {
		return
	}
	a.fencing.Store(false)
}

// beat sends one heartbeat and acts on its answer, then ships.
func (a *Agent) beat(ctx context.Context) {
	running := a.cfg.Manager.Running()
	req := nodewire.HeartbeatRequest{Used: a.used(ctx, running), Warm: map[string]int{}, Running: make([]string, 0, len(running))}
	for _, in := range running {
		if len(req.Running) < nodewire.MaxRunning {
			req.Running = append(req.Running, in.ID)
		}
	}
	a.mu.Lock()
	token, epoch, cfg, lastAck := a.token, a.id.Epoch, a.lease, a.lastAck
	a.mu.Unlock()
	sent := time.Now()
	var resp nodewire.HeartbeatResponse
	err := a.call(ctx, a.nodePath(nodewire.PathHeartbeat), "Bearer "+token, epoch, req, &resp)
	switch {
	case err == nil:
		a.mu.Lock()
		a.lastAck = sent
		a.mu.Unlock()
		for _, id := range resp.Orphans {
			if err := a.cfg.Manager.EndOrphan(ctx, id); err == nil {
				a.cfg.Log.Warn("killed an orphan sandbox: no catalog row owns it", "sandbox", id)
			}
		}
		if a.sync != nil {
			a.sync.Offer(ctx, resp.Builds)
		}
		a.ship(ctx)
	case errdefs.Class(err) == errdefs.ErrFailedPrecondition || errdefs.Class(err) == errdefs.ErrPermissionDenied:
		a.fenceAndRegister(ctx, "heartbeat refused: "+err.Error())
	default:
		a.cfg.Log.Warn("cluster heartbeat failed", "node", a.cfg.NodeID, "err", err)
		if lease.NodeAction(lastAck, false, time.Now(), cfg) == lease.Fence {
			a.fenceAndRegister(ctx, "no acknowledgement for fence-after")
		}
	}
}

// used is the slots, memory and vCPUs the running sandboxes take.
func (a *Agent) used(ctx context.Context, running []sandbox.Info) nodewire.Capacity {
	shape := map[string]sandbox.TemplateInfo{}
	if ts, err := a.cfg.Manager.Templates(ctx); err == nil {
		for _, t := range ts {
			shape[t.Name] = t
		}
	}
	u := nodewire.Capacity{Slots: len(running)}
	for _, in := range running {
		u.MemMiB += int64(shape[in.Template].MemoryMiB)
		u.VCPUs += shape[in.Template].VCPUs
	}
	return u
}

func (a *Agent) nodePath(p string) string { return strings.Replace(p, "{id}", a.cfg.NodeID, 1) }

// call posts body to the tier and decodes the answer into out; an error
// answer comes back with its errdefs class. A tier URL that does not
// answer is left for the next one, for this call and the next ones.
func (a *Agent) call(ctx context.Context, path, auth string, epoch int64, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	for range len(a.urls) {
		cur := a.cur.Load()
		err = a.callOne(ctx, a.urls[int(cur)%len(a.urls)], path, auth, epoch, b, out)
		if !errors.Is(err, errNoAnswer) {
			return err
		}
		a.cur.CompareAndSwap(cur, cur+1)
	}
	return err
}

// errNoAnswer marks a call the tier URL did not answer.
var errNoAnswer = errors.New("no answer")

func (a *Agent) callOne(ctx context.Context, base, path, auth string, epoch int64, b []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	if epoch > 0 {
		req.Header.Set(nodewire.HeaderEpoch, strconv.FormatInt(epoch, 10))
	}
	res, err := a.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", errdefs.Unavailable("cluster API unreachable"), errNoAnswer, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		var er wire.ErrorResponse
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&er)
		code := er.Error.Code
		if code == "" {
			code = errdefs.CodeForHTTPStatus(res.StatusCode)
		}
		return fmt.Errorf("cluster API %s: %w", path, errdefs.New(errdefs.FromCode(code), "%s", er.Error.Message))
	}
	return json.NewDecoder(io.LimitReader(res.Body, nodewire.MaxBody)).Decode(out)
}

// reportBuild tells the tier a build's state on this node.
func (a *Agent) reportBuild(ctx context.Context, rep nodewire.BuildReport) error {
	a.mu.Lock()
	token, epoch := a.token, a.id.Epoch
	a.mu.Unlock()
	var out struct{}
	return a.call(ctx, a.nodePath(nodewire.PathBuild), "Bearer "+token, epoch, rep, &out)
}
