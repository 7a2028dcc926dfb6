package api

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

func (s *server) healthz(w *respWriter, _ *http.Request, _ *call) error {
	return writeJSON(w, http.StatusOK, wire.HealthResponse{Status: "ok"})
}

func (s *server) openAPI(w *respWriter, _ *http.Request, _ *call) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDoc)))
	_, err := w.Write(openAPIDoc)
	return err
}

func (s *server) metrics(w *respWriter, r *http.Request, _ *call) error {
	s.m.Handler().ServeHTTP(w, r)
	return nil
}

// StateLost is the state of a cluster's sandbox whose node was written
// off; a single host never has one.
const StateLost = sandbox.StateLost

// allStates is what state=all selects.
var allStates = []string{store.StateRunning, store.StateKilled, store.StateExpired, store.StateFailed, StateLost}

// readyz answers 200 while Config.Ready says the process can serve
// sandbox calls (always, without one), else its error (503 for an
// unavailable dependency).
func (s *server) readyz(w *respWriter, r *http.Request, _ *call) error {
	if s.ready != nil {
		if err := s.ready(r.Context()); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, wire.HealthResponse{Status: "ok"})
}

// maxIdempotencyKey bounds an Idempotency-Key header.
const maxIdempotencyKey = 128

type idemKey struct{}

// IdempotencyKeyFrom returns the create's Idempotency-Key header as the
// API checked it ("" for none). A single host ignores it; a cluster's
// Backend returns the sandbox an earlier create with the same key made.
func IdempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idemKey{}).(string)
	return k
}

// idempotencyKey reads and checks the Idempotency-Key header.
func idempotencyKey(r *http.Request) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	if k == "" {
		return "", nil
	}
	if len(k) > maxIdempotencyKey {
		return "", errdefs.InvalidArgument("Idempotency-Key is longer than %d bytes", maxIdempotencyKey)
	}
	for _, c := range []byte(k) {
		if c < 0x21 || c > 0x7e {
			return "", errdefs.InvalidArgument("Idempotency-Key: printable ASCII without spaces only")
		}
	}
	return k, nil
}

func (s *server) createSandbox(w *respWriter, r *http.Request, c *call) error {
	var req wire.CreateSandboxRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	// A negative TTL is passed through: the Manager owns TTL rules (it
	// knows the template default and the server maximum) and refuses it.
	if req.TTLSeconds > math.MaxInt64/int64(time.Second) {
		return errdefs.InvalidArgument("ttl_seconds %d is out of range", req.TTLSeconds)
	}
	var egress *netpool.Policy // the manager checks it, once
	if req.Egress != nil {
		p := policyFromWire(*req.Egress)
		egress = &p
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if idem != "" {
		ctx = context.WithValue(ctx, idemKey{}, idem)
	}
	info, err := s.be.Create(ctx, sandbox.CreateRequest{
		Tenant: c.tenant, Template: req.Template, TTL: time.Duration(req.TTLSeconds) * time.Second,
		Metadata: req.Metadata, Egress: egress, Probe: req.Probe,
	})
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, info); err != nil {
		return err
	}
	c.id = info.ID
	return writeJSON(w, http.StatusCreated, sandboxFromInfo(info))
}

func (s *server) listSandboxes(w *respWriter, r *http.Request, c *call) error {
	q := r.URL.Query()
	md, err := metadataQuery(q, "state")
	if err != nil {
		return err
	}
	f := sandbox.ListFilter{Tenant: c.tenant, Metadata: md}
	switch st := q.Get("state"); st {
	case "", store.StateRunning:
	case "all":
		f.States = allStates
	case store.StateKilled, store.StateExpired, store.StateFailed, StateLost:
		f.States = []string{st}
	default:
		return errdefs.InvalidArgument("state %q: want running, killed, expired, failed, lost or all", st)
	}
	infos, err := s.be.List(r.Context(), f)
	if err != nil {
		return err
	}
	out := wire.SandboxList{Sandboxes: make([]wire.Sandbox, 0, len(infos))}
	for _, in := range infos {
		if in.Tenant == c.tenant {
			out.Sandboxes = append(out.Sandboxes, sandboxFromInfo(in))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// metadataQuery collects metadata[KEY]=VALUE parameters (OpenAPI's
// deepObject style, what generated clients send) and metadata.KEY=VALUE
// (the same, as the CLI and SDKs spell it), and refuses any parameter that
// is neither one of those nor in allowed: a typo must not silently widen a
// filter.
func metadataKey(param string) (string, bool) {
	if key, ok := strings.CutPrefix(param, "metadata."); ok {
		return key, true
	}
	if rest, ok := strings.CutPrefix(param, "metadata["); ok {
		if key, ok := strings.CutSuffix(rest, "]"); ok && !strings.ContainsAny(key, "[]") {
			return key, true
		}
	}
	return "", false
}

func metadataQuery(q url.Values, allowed ...string) (map[string]string, error) {
	var md map[string]string
	for k, vs := range q {
		if key, ok := metadataKey(k); ok {
			if _, dup := md[key]; key == "" || len(vs) != 1 || dup {
				return nil, errdefs.InvalidArgument("query parameter %q: want metadata[KEY]=VALUE once per key", k)
			}
			if md == nil {
				md = map[string]string{}
			}
			md[key] = vs[0]
			continue
		}
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			return nil, errdefs.InvalidArgument("unknown query parameter %q", k)
		}
		if len(vs) != 1 && k != "event" {
			return nil, errdefs.InvalidArgument("query parameter %q given %d times", k, len(vs))
		}
	}
	return md, nil
}

func (s *server) getSandbox(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	info, err := s.be.Get(r.Context(), c.tenant, c.id)
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, info); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sandboxFromInfo(info))
}

func (s *server) killSandbox(w *respWriter, r *http.Request, c *call) error {
	if err := noQuery(r); err != nil {
		return err
	}
	if err := s.be.Kill(r.Context(), c.tenant, c.id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pauseSandbox saves the sandbox to disk and ends its VMM; it answers
// with the sandbox, paused. Its TTL keeps counting.
func (s *server) pauseSandbox(w *respWriter, r *http.Request, c *call) error {
	return s.sandboxOp(w, r, c, s.be.Pause)
}

// resumeSandbox restores a paused sandbox under its id.
func (s *server) resumeSandbox(w *respWriter, r *http.Request, c *call) error {
	return s.sandboxOp(w, r, c, s.be.Resume)
}

// sandboxOp answers a bodiless operation on one sandbox with the sandbox
// as op left it.
func (s *server) sandboxOp(w *respWriter, r *http.Request, c *call, op func(ctx context.Context, tenant, id string) (sandbox.Info, error)) error {
	if err := noQuery(r); err != nil {
		return err
	}
	info, err := op(r.Context(), c.tenant, c.id)
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, info); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sandboxFromInfo(info))
}

func (s *server) forkSandbox(w *respWriter, r *http.Request, c *call) error {
	var req wire.ForkRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	count := 1
	if req.Count != nil {
		count = *req.Count
	}
	if count < 1 || count > MaxForkCount {
		return errdefs.InvalidArgument("count %d: want 1..%d", count, MaxForkCount)
	}
	infos, err := s.be.Fork(r.Context(), c.tenant, c.id, count)
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, infos...); err != nil {
		return errdefs.New(errdefs.ErrInternal, "fork returned a sandbox of another tenant")
	}
	return writeJSON(w, http.StatusCreated, wire.SandboxList{Sandboxes: sandboxesFromInfos(infos)})
}

func (s *server) setEgress(w *respWriter, r *http.Request, c *call) error {
	var req wire.EgressRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	info, err := s.be.SetEgress(r.Context(), c.tenant, c.id, policyFromWire(req)) // checked there, once
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, info); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sandboxFromInfo(info))
}

func (s *server) setTTL(w *respWriter, r *http.Request, c *call) error {
	var req wire.TTLRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.TTLSeconds < 1 {
		return errdefs.InvalidArgument("ttl_seconds %d: want at least 1", req.TTLSeconds)
	}
	info, err := s.be.SetTTL(r.Context(), c.tenant, c.id, time.Duration(req.TTLSeconds)*time.Second)
	if err != nil {
		return err
	}
	if err := checkTenant(c.tenant, info); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sandboxFromInfo(info))
}

func (s *server) probeSandbox(w *respWriter, r *http.Request, c *call) error {
	rs, err := s.be.Probe(r.Context(), c.tenant, c.id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, wire.ProbeResponse{OK: true, Probes: probeResultsFrom(rs)})
}

// listKeys lists the caller's own tenant's keys, revoked ones included;
// creating and revoking keys stays a host-admin operation (`airlock key`).
func (s *server) listKeys(w *respWriter, r *http.Request, c *call) error {
	keys, err := s.st.ListKeys(r.Context(), c.tenant)
	if err != nil {
		return err
	}
	out := wire.KeyList{Keys: make([]wire.Key, 0, len(keys))}
	for _, k := range keys {
		if k.Tenant != c.tenant { // "" would list every tenant's
			continue
		}
		out.Keys = append(out.Keys, KeyFromStore(k, c.keyID))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *server) listTemplates(w *respWriter, r *http.Request, _ *call) error {
	ts, err := s.be.Templates(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, wire.TemplateList{Templates: templatesFrom(ts)})
}

func (s *server) getTemplate(w *respWriter, r *http.Request, _ *call) error {
	name := r.PathValue("name")
	ts, err := s.be.Templates(r.Context())
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.Name == name {
			return writeJSON(w, http.StatusOK, templateFrom(t))
		}
	}
	return errdefs.NotFound("template %q not found", name)
}

// Audit paging limits.
const (
	defaultAuditLimit = 1000
	maxAuditLimit     = 10000
)

func (s *server) audit(w *respWriter, r *http.Request, c *call) error {
	q := r.URL.Query()
	md, err := metadataQuery(q, "sandbox", "since", "until", "event", "limit", "after_seq")
	if err != nil {
		return err
	}
	// The tenant comes from the key and is never "" here, which in the
	// store would mean every tenant.
	f := store.AuditFilter{Tenant: c.tenant, SandboxID: q.Get("sandbox"), Metadata: md, Limit: defaultAuditLimit}
	if f.SandboxID != "" && !idRE.MatchString(f.SandboxID) {
		return errdefs.InvalidArgument("invalid sandbox id %q", f.SandboxID)
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return errdefs.InvalidArgument("%s %q: want an RFC 3339 time", p.name, v)
			}
			*p.dst = t
		}
	}
	for _, e := range q["event"] {
		for _, ev := range strings.Split(e, ",") {
			if ev != "" {
				f.Events = append(f.Events, ev)
			}
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return errdefs.InvalidArgument("limit %q: want 1..%d", v, maxAuditLimit)
		}
		f.Limit = n
	}
	if v := q.Get("after_seq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return errdefs.InvalidArgument("after_seq %q: want a record seq", v)
		}
		f.AfterTenantSeq = n
	}
	if f.SandboxID != "" {
		c.id = f.SandboxID
	}
	recs, err := s.st.QueryAudit(r.Context(), f)
	if err != nil {
		return err
	}
	out := wire.AuditList{Records: make([]wire.AuditRecord, 0, len(recs))}
	for _, rec := range recs {
		if rec.Tenant != c.tenant {
			continue // never another tenant's, whatever the store did
		}
		out.Records = append(out.Records, auditRecordForTenant(rec))
	}
	if len(recs) == f.Limit && len(recs) > 0 {
		out.NextAfterSeq = recs[len(recs)-1].TenantSeq
	}
	return writeJSON(w, http.StatusOK, out)
}

func noQuery(r *http.Request) error {
	if r.URL.RawQuery != "" {
		for k := range r.URL.Query() {
			return errdefs.InvalidArgument("unknown query parameter %q", k)
		}
	}
	return nil
}
