package apitier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Router is the tier's api.Backend: the catalog answers what it knows,
// the owning node everything else.
type Router struct{ t *Tier }

var _ api.Backend = (*Router)(nil)

// nodeClient is a Go client for node n acting for tenant, with an
// assertion valid for nodewire.AssertionTTL and extra headers (name,
// value pairs). Retries are off: the end client retries, the tier must
// not multiply them.
func (t *Tier) nodeClient(n nodeInfo, tenant string, hdr ...string) *client.Client {
	a := nodewire.Assert(nodewire.AssertKey(t.master, n.id, n.epoch), n.id, n.epoch, tenant, time.Now().Add(nodewire.AssertionTTL))
	opts := []client.Option{client.WithHTTPClient(t.cfg.NodeClient), client.WithRetries(0), client.WithUserAgent("airlock-api")}
	for i := 0; i+1 < len(hdr); i += 2 {
		opts = append(opts, client.WithHeader(hdr[i], hdr[i+1]))
	}
	c, err := client.New("http://"+n.addr, a, opts...)
	if err != nil {
		panic(fmt.Sprintf("apitier: node address %q: %v", n.addr, err)) // validated at registration
	}
	return c
}

// failpoint kills this process at the named create or fork step (fault
// tests).
func (t *Tier) failpoint(name string) {
	if t.cfg.Failpoint == name {
		t.cfg.Log.Warn("failpoint reached: killing this API process", "failpoint", name)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// route finds tenant's running sandbox id and its node.
func (r *Router) route(ctx context.Context, tenant, id string) (pgstore.Sandbox, nodeInfo, error) {
	for try := 0; ; try++ {
		sb, err := r.row(ctx, tenant, id)
		if err != nil {
			return sb, nodeInfo{}, err
		}
		if err := liveErr(sb); err != nil {
			return sb, nodeInfo{}, err
		}
		n, ok := r.t.node(sb.NodeID)
		if ok && n.epoch == sb.NodeEpoch && n.state.Live() {
			return sb, n, nil
		}
		// The view or the cached row is behind: the node registered
		// again or was swept (either writes its rows off), or the view
		// has not seen the node yet. Read both again, once.
		r.t.routes.drop(id)
		if try > 0 {
			return sb, nodeInfo{}, errdefs.Unavailable("sandbox %s: its node is not reachable now", id)
		}
		if err := r.t.refresh(ctx); err != nil {
			return sb, nodeInfo{}, err
		}
	}
}

// row reads tenant's sandbox id: from the route cache while it runs.
func (r *Router) row(ctx context.Context, tenant, id string) (pgstore.Sandbox, error) {
	if sb, ok := r.t.routes.get(id); ok {
		if sb.Tenant != tenant {
			return pgstore.Sandbox{}, errdefs.NotFound("sandbox %s not found", id)
		}
		return sb, nil
	}
	sb, err := r.t.st.GetSandbox(ctx, tenant, id)
	if err != nil {
		return sb, err
	}
	if sb.State == pgstore.StateRunning {
		r.t.routes.put(sb)
	}
	return sb, nil
}

// liveErr is how a call into a sandbox that is not running is refused:
// as on one host, and lost says what happened to it.
func liveErr(sb pgstore.Sandbox) error {
	switch sb.State {
	case pgstore.StateRunning:
		return nil
	case pgstore.StateCreating:
		return errdefs.NotFound("sandbox %s not found", sb.ID)
	case pgstore.StateLost:
		at := ""
		if sb.EndedAt != nil {
			at = " at " + sb.EndedAt.Format(time.RFC3339)
		}
		return errdefs.FailedPrecondition("sandbox %s is lost: its node stopped answering and was written off%s", sb.ID, at)
	}
	return errdefs.FailedPrecondition("sandbox %s is %s", sb.ID, sb.State)
}

// nodeErr turns a failed node call into what the tenant is told: the
// node's own answer when it gave one, else unavailable without the
// node's address (and the node is avoided by placement for a while).
func (r *Router) nodeErr(ctx context.Context, n nodeInfo, id string, err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		if ce.Code == errdefs.ErrPermissionDenied.Error() {
			// Our credentials for it are stale: it registered again.
			r.t.routes.drop(id)
			_ = r.t.refresh(ctx)
			return errdefs.Unavailable("sandbox %s: its node has just registered again; retry", id)
		}
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", errdefs.Unavailable("request canceled"), err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		// A transport failure: no answer. The message would name the
		// node's internal address; the tenant gets the sandbox's id.
		r.t.placer.MarkUnreachable(n.id)
		return fmt.Errorf("%w: %w", errdefs.Unavailable("sandbox %s: its node does not answer", id), placement.ErrNoAnswer)
	}
	return err
}

// infoFromRow is a catalog row as the API shows it.
func infoFromRow(sb pgstore.Sandbox) sandbox.Info {
	in := sandbox.Info{ID: sb.ID, Tenant: sb.Tenant, Template: sb.Template, ParentID: sb.ParentID, Metadata: sb.Metadata,
		State: sb.State, CreatedAt: sb.CreatedAt, Deadline: sb.Deadline, EndedAt: sb.EndedAt, Jailed: sb.Jailed, Node: sb.NodeID}
	if sb.State == pgstore.StateRunning && sb.PausedAt != nil {
		in.State = sandbox.StatePaused
	}
	if in.Metadata == nil {
		in.Metadata = map[string]string{}
	}
	if err := json.Unmarshal(sb.Egress, &in.Egress); err != nil || in.Egress.Default == "" {
		in.Egress = netpool.DenyAll()
	}
	return in
}

// Create places the sandbox, records it (creating) under a new id before
// the node is called, and marks it running once the node made it.
func (r *Router) Create(ctx context.Context, req sandbox.CreateRequest) (sandbox.Info, error) {
	t := r.t
	idem := api.IdempotencyKeyFrom(ctx)
	if idem != "" {
		if sb, err := t.st.SandboxByIdemKey(ctx, req.Tenant, idem); err == nil {
			return r.existing(ctx, sb)
		}
	}
	tm, preq, ok := t.target(req.Template)
	if !ok {
		return sandbox.Info{}, errdefs.NotFound("template %q not found on any ready node", req.Template)
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.CreateTimeout)
	defer cancel()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	var info sandbox.Info
	var fatal error
	_, err := t.placer.Place(pctx, preq,
		func(ctx context.Context, a placement.Attempt) error {
			in, err, final := r.createOn(ctx, req, tm, preq.Build, a.Node, idem)
			if final {
				fatal = err
				stop()
			}
			info = in
			return err
		})
	switch {
	case fatal != nil && errdefs.Class(fatal) == errdefs.ErrAlreadyExists && idem != "":
		// Another create with the same key won the race: its sandbox.
		if sb, err := t.st.SandboxByIdemKey(ctx, req.Tenant, idem); err == nil {
			return r.existing(ctx, sb)
		}
		return sandbox.Info{}, fatal
	case fatal != nil:
		return sandbox.Info{}, fatal
	case err != nil:
		return sandbox.Info{}, err
	}
	return info, nil
}

// existing answers a retried create with the sandbox the first one made.
func (r *Router) existing(ctx context.Context, sb pgstore.Sandbox) (sandbox.Info, error) {
	if sb.State == pgstore.StateCreating {
		return sandbox.Info{}, errdefs.Unavailable("the create with this Idempotency-Key is still in progress; retry")
	}
	return r.Get(ctx, sb.Tenant, sb.ID)
}

// createOn makes one attempt on node: row, node call, confirmation.
// final: the error is the request's own (quota, a bad request the node
// refused), not the node's, and no other node should be tried.
func (r *Router) createOn(ctx context.Context, req sandbox.CreateRequest, tm nodewire.Template, build, node, idem string) (sandbox.Info, error, bool) {
	t := r.t
	n, ok := t.node(node)
	if !ok {
		return sandbox.Info{}, errdefs.Unavailable("node %s left the view", node), false
	}
	id := sandbox.NewSandboxID()
	ttl := req.TTL
	if ttl == 0 {
		ttl = time.Duration(tm.DefaultTTLSeconds) * time.Second
	}
	now := time.Now()
	row := pgstore.Sandbox{ID: id, Tenant: req.Tenant, Template: tm.Name, BuildID: build, NodeID: n.id, NodeEpoch: n.epoch,
		State: pgstore.StateCreating, Metadata: req.Metadata, IdemKey: idem, CreatedAt: now, Deadline: now.Add(max(ttl, 0))}
	if req.Egress != nil {
		row.Egress, _ = json.Marshal(*req.Egress)
	}
	if err := t.st.CreateSandbox(ctx, row); err != nil {
		if errdefs.Class(err) == errdefs.ErrFailedPrecondition || errdefs.Class(err) == errdefs.ErrNotFound {
			return sandbox.Info{}, errdefs.Unavailable("node %s takes no sandboxes now: %v", node, err), false
		}
		return sandbox.Info{}, err, true
	}
	t.failpoint("after_row")
	opts := client.CreateOptions{Template: tm.Name, TTLSeconds: int(req.TTL / time.Second), Metadata: req.Metadata, Probe: req.Probe}
	if req.Egress != nil {
		p := policyToWire(*req.Egress)
		opts.Egress = &p
	}
	sb, err := t.nodeClient(n, req.Tenant, nodewire.HeaderSandboxID, id).CreateSandbox(ctx, opts)
	if err != nil {
		reason := "create_failed"
		if errdefs.Class(err) == errdefs.ErrResourceExhausted {
			reason = "refused"
		}
		if _, ferr := t.st.FailSandbox(context.WithoutCancel(ctx), id, reason); ferr != nil {
			t.cfg.Log.Warn("record a failed create", "sandbox", id, "err", ferr)
		}
		switch errdefs.Class(err) {
		case errdefs.ErrResourceExhausted, errdefs.ErrUnavailable, errdefs.ErrDeadlineExceeded, errdefs.ErrInternal:
			return sandbox.Info{}, r.nodeErr(ctx, n, id, err), false
		}
		return sandbox.Info{}, err, true
	}
	t.failpoint("after_node")
	t.failpoint("before_update")
	if err := t.st.ConfirmSandbox(context.WithoutCancel(ctx), id, sb.CreatedAt, sb.Deadline, sb.Jailed); err != nil {
		// Given up meanwhile (the reconciler, or its node written off):
		// it must not be handed out; the orphan rule removes the VM.
		return sandbox.Info{}, err, true
	}
	row.State, row.CreatedAt, row.Deadline, row.Jailed = pgstore.StateRunning, sb.CreatedAt, sb.Deadline, sb.Jailed
	t.routes.put(row) // calls into it need no database read from here on
	return infoFromWire(sb.SandboxInfo, n.id), nil, false
}

// Get answers from the catalog, and for a running sandbox from its node
// when it answers quickly (usage, address).
func (r *Router) Get(ctx context.Context, tenant, id string) (sandbox.Info, error) {
	sb, err := r.row(ctx, tenant, id)
	if err != nil {
		return sandbox.Info{}, err
	}
	if sb.State == pgstore.StateCreating {
		return sandbox.Info{}, errdefs.NotFound("sandbox %s not found", id)
	}
	info := infoFromRow(sb)
	if sb.State != pgstore.StateRunning {
		return info, nil
	}
	n, ok := r.t.node(sb.NodeID)
	if !ok || n.epoch != sb.NodeEpoch || !n.state.Live() {
		// The row may be a cached one from before its node was written
		// off: the catalog says what became of it.
		r.t.routes.drop(id)
		if sb, err = r.t.st.GetSandbox(ctx, tenant, id); err != nil {
			return sandbox.Info{}, err
		}
		return infoFromRow(sb), nil
	}
	nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	got, err := r.t.nodeClient(n, tenant).GetSandbox(nctx, id)
	if err != nil {
		return info, nil
	}
	out := infoFromWire(got.SandboxInfo, n.id)
	r.syncPaused(ctx, sb, out.State)
	return out, nil
}

// syncPaused corrects the catalog where the node says otherwise of a
// pause: a replica that died between the node's pause (or resume) and
// recording it left the catalog behind.
func (r *Router) syncPaused(ctx context.Context, sb pgstore.Sandbox, state string) {
	paused := state == sandbox.StatePaused
	if (state != sandbox.StatePaused && state != pgstore.StateRunning) || paused == (sb.PausedAt != nil) {
		return
	}
	if err := r.t.st.SetSandboxPaused(context.WithoutCancel(ctx), sb.ID, paused); err != nil {
		r.t.cfg.Log.Warn("correct a paused state", "sandbox", sb.ID, "err", err)
	}
	r.t.routes.drop(sb.ID)
}

// List answers from the catalog; creates not yet confirmed are not shown.
func (r *Router) List(ctx context.Context, f sandbox.ListFilter) ([]sandbox.Info, error) {
	states := f.States
	if len(states) == 0 {
		states = []string{pgstore.StateRunning}
	}
	rows, err := r.t.st.ListSandboxes(ctx, f.Tenant, states, f.Metadata)
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Info, 0, len(rows))
	for _, sb := range rows {
		if sb.State != pgstore.StateCreating {
			out = append(out, infoFromRow(sb))
		}
	}
	return out, nil
}

// Kill kills on the node, then records it.
func (r *Router) Kill(ctx context.Context, tenant, id string) error {
	_, n, err := r.route(ctx, tenant, id)
	if err != nil {
		return err
	}
	if err := r.t.nodeClient(n, tenant).Sandbox(id).Kill(ctx); err != nil {
		return r.nodeErr(ctx, n, id, err)
	}
	r.t.routes.drop(id)
	if _, err := r.t.st.EndSandbox(context.WithoutCancel(ctx), id, pgstore.StateKilled, "killed"); err != nil {
		r.t.cfg.Log.Warn("record a kill", "sandbox", id, "err", err)
	}
	return nil
}

// Fork runs on the parent's node; the children's rows (creating, tier
// ids) exist before the node is called. Its failpoints: fork_after_row
// (the first child's row made, the others not), fork_after_node (the node
// answered, no row confirmed), fork_before_update (every child's row but
// the last confirmed).
func (r *Router) Fork(ctx context.Context, tenant, id string, count int) ([]sandbox.Info, error) {
	parent, n, err := r.route(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, count)
	now := time.Now()
	for i := range ids {
		ids[i] = sandbox.NewSandboxID()
		row := pgstore.Sandbox{ID: ids[i], Tenant: tenant, Template: parent.Template, BuildID: parent.BuildID, NodeID: n.id,
			NodeEpoch: n.epoch, State: pgstore.StateCreating, Metadata: parent.Metadata, Egress: parent.Egress,
			Jailed: parent.Jailed, ParentID: parent.ID, CreatedAt: now, Deadline: parent.Deadline}
		if err := r.t.st.CreateSandbox(ctx, row); err != nil {
			r.failRows(ctx, ids[:i], "create_failed")
			return nil, err
		}
		r.t.failpoint("fork_after_row")
	}
	kids, err := r.t.nodeClient(n, tenant, nodewire.HeaderSandboxID, strings.Join(ids, ",")).Sandbox(id).Fork(ctx, count)
	r.t.failpoint("fork_after_node")
	made := map[string]bool{}
	var out []sandbox.Info
	for i, k := range kids {
		if i == len(kids)-1 {
			r.t.failpoint("fork_before_update")
		}
		if cerr := r.t.st.ConfirmSandbox(context.WithoutCancel(ctx), k.ID, k.CreatedAt, k.Deadline, k.Jailed); cerr == nil {
			made[k.ID] = true
			out = append(out, infoFromWire(k.SandboxInfo, n.id))
		}
	}
	var left []string
	for _, c := range ids {
		if !made[c] {
			left = append(left, c)
		}
	}
	r.failRows(ctx, left, "create_failed")
	if err != nil {
		return out, r.nodeErr(ctx, n, id, err)
	}
	return out, nil
}

func (r *Router) failRows(ctx context.Context, ids []string, reason string) {
	for _, id := range ids {
		if _, err := r.t.st.FailSandbox(context.WithoutCancel(ctx), id, reason); err != nil {
			r.t.cfg.Log.Warn("record a failed create", "sandbox", id, "err", err)
		}
	}
}

// on runs f against tenant's running sandbox id on its node.
func (r *Router) on(ctx context.Context, tenant, id string, f func(*client.Sandbox) error) error {
	_, n, err := r.route(ctx, tenant, id)
	if err != nil {
		return err
	}
	if err := f(r.t.nodeClient(n, tenant).Sandbox(id)); err != nil {
		return r.nodeErr(ctx, n, id, err)
	}
	return nil
}

// Exec streams through: each chunk the node sends is written to stdout or
// stderr as it arrives (the API's exec/stream flushes each one).
func (r *Router) Exec(ctx context.Context, tenant, id string, o guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error) {
	var stdin []byte
	if o.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(o.Stdin, 16<<20))
		if err != nil {
			return guest.ExecResult{}, err
		}
		stdin = b
	}
	var res guest.ExecResult
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		out, err := s.ExecStream(ctx, execRequest(o, stdin), stdout, stderr)
		if out != nil {
			res = execResult(out.ExecStatus)
		}
		return err
	})
	return res, err
}

func (r *Router) SetEgress(ctx context.Context, tenant, id string, p netpool.Policy) (sandbox.Info, error) {
	var info sandbox.Info
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		if err := s.SetEgress(ctx, policyToWire(p)); err != nil {
			return err
		}
		info = infoFromWire(s.SandboxInfo, "")
		return nil
	})
	if err != nil {
		return info, err
	}
	if b, err := json.Marshal(info.Egress); err == nil {
		if err := r.t.st.SetSandboxEgress(context.WithoutCancel(ctx), id, b); err != nil {
			r.t.cfg.Log.Warn("record an egress change", "sandbox", id, "err", err)
		}
	}
	r.t.routes.drop(id)
	return r.withNode(info, id), nil
}

func (r *Router) SetTTL(ctx context.Context, tenant, id string, ttl time.Duration) (sandbox.Info, error) {
	var info sandbox.Info
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		if err := s.SetTTL(ctx, ttl); err != nil {
			return err
		}
		info = infoFromWire(s.SandboxInfo, "")
		return nil
	})
	if err != nil {
		return info, err
	}
	if err := r.t.st.SetSandboxDeadline(context.WithoutCancel(ctx), id, info.Deadline); err != nil {
		r.t.cfg.Log.Warn("record a TTL change", "sandbox", id, "err", err)
	}
	r.t.routes.drop(id)
	return r.withNode(info, id), nil
}

// withNode names the node of a sandbox the router just called.
func (r *Router) withNode(info sandbox.Info, id string) sandbox.Info {
	if sb, ok := r.t.routes.get(id); ok {
		info.Node = sb.NodeID
	}
	if info.Node == "" {
		if sb, err := r.t.st.GetSandbox(context.Background(), info.Tenant, id); err == nil {
			info.Node = sb.NodeID
		}
	}
	return info
}

func (r *Router) Probe(ctx context.Context, tenant, id string) ([]sandbox.ProbeResult, error) {
	var out []sandbox.ProbeResult
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		rs, err := s.Probe(ctx)
		for _, p := range rs {
			out = append(out, sandbox.ProbeResult{Name: p.Name, Target: p.Target, Reachable: p.Reachable, Detail: p.Detail})
		}
		return err
	})
	return out, err
}

// Templates are those the ready nodes report, by name.
func (r *Router) Templates(context.Context) ([]sandbox.TemplateInfo, error) {
	out := []sandbox.TemplateInfo{}
	for _, tm := range r.t.templates() {
		out = append(out, sandbox.TemplateInfo{Name: tm.Name, Hash: tm.Hash, MemoryMiB: tm.MemoryMiB, VCPUs: tm.VCPUs,
			DefaultTTLSeconds: tm.DefaultTTLSeconds, BuiltAt: tm.BuiltAt})
	}
	slices.SortFunc(out, func(a, b sandbox.TemplateInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Pause and Resume go to the node that runs the sandbox, which keeps a
// paused one on its own disk: it resumes there.
func (r *Router) Pause(ctx context.Context, tenant, id string) (sandbox.Info, error) {
	return r.lifecycle(ctx, tenant, id, (*client.Sandbox).Pause)
}

func (r *Router) Resume(ctx context.Context, tenant, id string) (sandbox.Info, error) {
	return r.lifecycle(ctx, tenant, id, (*client.Sandbox).Resume)
}

func (r *Router) lifecycle(ctx context.Context, tenant, id string, f func(*client.Sandbox, context.Context) error) (sandbox.Info, error) {
	var info sandbox.Info
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		if err := f(s, ctx); err != nil {
			return err
		}
		info = infoFromWire(s.SandboxInfo, "")
		return nil
	})
	if err != nil {
		return info, err
	}
	// The catalog says paused too, so a list, and a get the node does
	// not answer, show it; a sandbox that ended meanwhile keeps its end.
	if err := r.t.st.SetSandboxPaused(context.WithoutCancel(ctx), id, info.State == sandbox.StatePaused); err != nil {
		r.t.cfg.Log.Warn("record a pause or resume", "sandbox", id, "err", err)
	}
	r.t.routes.drop(id)
	return r.withNode(info, id), nil
}

func (r *Router) WriteProcessStdin(ctx context.Context, tenant, id, pid string, data []byte, closeStdin bool) (sandbox.ProcessInfo, error) {
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		p := s.Process(pid)
		var err error
		if len(data) > 0 {
			err = p.WriteStdin(ctx, data)
		}
		if err == nil && closeStdin {
			err = p.CloseStdin(ctx)
		}
		out = processInfo(p.ProcessInfo)
		return err
	})
	return out, err
}

func (r *Router) ResizeProcess(ctx context.Context, tenant, id, pid string, size guest.WindowSize) (sandbox.ProcessInfo, error) {
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		p := s.Process(pid)
		err := p.Resize(ctx, size.Rows, size.Cols)
		out = processInfo(p.ProcessInfo)
		return err
	})
	return out, err
}
