package apitier

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/wire"
)

// InternalHandler serves the nodes: register, heartbeat, ship. Every
// body is decoded strictly and bounded (nodewire).
func (t *Tier) InternalHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+nodewire.PathRegister, t.handleRegister)
	mux.HandleFunc("POST "+nodewire.PathHeartbeat, t.nodeCall(t.handleHeartbeat))
	mux.HandleFunc("POST "+nodewire.PathShip, t.nodeCall(t.handleShip))
	mux.HandleFunc("POST "+nodewire.PathBuild, t.nodeCall(t.handleBuild))
	mux.HandleFunc("GET "+nodewire.PathView, t.handleView)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, wire.HealthResponse{Status: "ok"})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, err error) {
	class := errdefs.Class(err)
	writeJSON(w, errdefs.HTTPStatus(class), wire.ErrorResponse{Error: wire.ErrorBody{Code: class.Error(), Message: err.Error()}})
}

func (t *Tier) handleRegister(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(t.cfg.JoinToken)) != 1 {
		writeErr(w, errdefs.PermissionDenied("bad cluster join token"))
		return
	}
	var req nodewire.RegisterRequest
	if err := nodewire.Decode(r.Body, &req); err != nil {
		writeErr(w, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeErr(w, err)
		return
	}
	caps := map[string]any{"net": req.Net, "templates": req.Templates}
	reg, err := t.st.RegisterNode(r.Context(), pgstore.NodeSpec{ID: req.NodeID, Addr: req.Addr, Capabilities: caps,
		Capacity: pgstore.Capacity{Slots: req.Capacity.Slots, MemMiB: req.Capacity.MemMiB, VCPUs: req.Capacity.VCPUs},
		Version:  req.Version, Epoch: req.Epoch, Secret: req.Secret, HostClass: req.HostClass})
	if err != nil {
		writeErr(w, err)
		return
	}
	head, err := t.st.GetChainHead(r.Context(), req.Chain)
	if err != nil {
		writeErr(w, err)
		return
	}
	t.routes.dropNode(req.NodeID)
	if err := t.refresh(r.Context()); err != nil {
		t.cfg.Log.Warn("node view after a registration", "err", err)
	}
	t.cfg.Log.Info("node registered", "node", req.NodeID, "epoch", reg.Epoch, "how", reg.How, "written_off", len(reg.WrittenOff))
	writeJSON(w, http.StatusOK, nodewire.RegisterResponse{Epoch: reg.Epoch, Fence: reg.Fence || reg.How == lease.Fresh && req.Epoch > 0,
		Token: nodewire.SessionToken(t.master, req.NodeID, reg.Epoch), AssertKey: nodewire.AssertKey(t.master, req.NodeID, reg.Epoch),
		HeartbeatMS: t.lease.Heartbeat.Milliseconds(), TTLMS: t.lease.TTL.Milliseconds(), GraceMS: t.lease.Grace.Milliseconds(),
		FenceAfterMS: t.lease.FenceAfter.Milliseconds(), ChainSeq: head.Seq, ChainHash: head.Hash})
}

// nodeCall authenticates a registered node's call (its session token for
// the node in the path and the epoch in the header) before h.
func (t *Tier) nodeCall(h func(w http.ResponseWriter, r *http.Request, node string, epoch int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		node := r.PathValue("id")
		epoch, err := strconv.ParseInt(r.Header.Get(nodewire.HeaderEpoch), 10, 64)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if err != nil || store.ValidateID("node id", node) != nil || !nodewire.CheckSession(t.master, node, epoch, tok) {
			writeErr(w, errdefs.PermissionDenied("bad node credentials"))
			return
		}
		h(w, r, node, epoch)
	}
}

func (t *Tier) handleHeartbeat(w http.ResponseWriter, r *http.Request, node string, epoch int64) {
	var req nodewire.HeartbeatRequest
	if err := nodewire.Decode(r.Body, &req); err != nil {
		writeErr(w, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeErr(w, err)
		return
	}
	ack, err := t.st.Heartbeat(r.Context(), node, epoch, pgstore.Usage{
		Used: pgstore.Capacity{Slots: req.Used.Slots, MemMiB: req.Used.MemMiB, VCPUs: req.Used.VCPUs}, Warm: req.Warm})
	if err != nil {
		writeErr(w, err)
		return
	}
	resp := nodewire.HeartbeatResponse{State: string(ack.State), Orphans: []string{}}
	if n, ok := t.node(node); ok && n.hostClass != "" {
		resp.Builds = t.builds.forClass(n.hostClass)
	}
	if len(req.Running) > 0 {
		live, err := t.st.LiveSandboxes(r.Context(), node, epoch)
		if err != nil {
			writeErr(w, err)
			return
		}
		owned := make(map[string]bool, len(live))
		for _, sb := range live {
			owned[sb.ID] = true
		}
		for _, id := range req.Running {
			if !owned[id] {
				resp.Orphans = append(resp.Orphans, id)
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (t *Tier) handleShip(w http.ResponseWriter, r *http.Request, node string, epoch int64) {
	var req nodewire.ShipRequest
	if err := nodewire.Decode(r.Body, &req); err != nil {
		writeErr(w, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeErr(w, err)
		return
	}
	ctx := r.Context()
	for _, e := range req.Ended {
		_, err := t.st.ShipSandboxState(ctx, node, epoch, e.ID, e.State, e.State, e.EndedAt)
		switch {
		case err == nil:
			t.routes.drop(e.ID)
		case errdefs.IsNotFound(err):
			// Not this node's under this epoch: written off already, or a
			// sandbox of an older epoch. Nothing to record.
		default:
			writeErr(w, err)
			return
		}
	}
	var head pgstore.ChainHead
	var err error
	if len(req.Audit) > 0 {
		recs := make([]store.AuditRecord, len(req.Audit))
		for i, a := range req.Audit {
			recs[i] = a.ToStore()
		}
		head, err = t.st.ShipAudit(ctx, node, epoch, req.Chain, recs)
		if errors.Is(err, pgstore.ErrDiverged) {
			t.cfg.Log.Error("AUDIT CHAIN DIVERGED: a node's chain is not an extension of its copy", "node", node, "chain", req.Chain, "err", err)
		}
	} else {
		head, err = t.st.GetChainHead(ctx, req.Chain)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, nodewire.ShipResponse{ChainSeq: head.Seq, ChainHash: head.Hash})
}

// templatesOf reads the templates a node registered with from its
// capabilities.
func templatesOf(caps map[string]any) []nodewire.Template {
	b, err := json.Marshal(caps["templates"])
	if err != nil {
		return nil
	}
	var out []nodewire.Template
	_ = json.Unmarshal(b, &out)
	return out
}

// handleView tells an operator (join token) which nodes this replica
// places on and routes to, as it last read them.
func (t *Tier) handleView(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(t.cfg.JoinToken)) != 1 {
		writeErr(w, errdefs.PermissionDenied("bad cluster join token"))
		return
	}
	t.mu.Lock()
	out := nodewire.View{Nodes: make([]nodewire.ViewNode, 0, len(t.view))}
	for _, n := range t.view {
		out.Nodes = append(out.Nodes, nodewire.ViewNode{ID: n.id, Addr: n.addr, Epoch: n.epoch, State: string(n.state)})
	}
	t.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
