package sandbox

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Create restores a new sandbox from a template.
//
// Every path is audited: a refused or failed create by the request's
// tenant, template and metadata (there is no id yet), a create whose
// egress self-check failed by the sandbox it killed, and a success.
func (m *Manager) Create(ctx context.Context, req CreateRequest) (Info, error) {
	began := time.Now()
	plan, err := m.planCreate(req)
	if err != nil {
		m.auditCreate(ctx, Info{Tenant: req.Tenant, Template: req.Template, Metadata: req.Metadata}, began, err, nil)
		return Info{}, err
	}
	info, l, c, err := m.startSandbox(ctx, req, plan)
	if err != nil {
		m.auditCreate(ctx, Info{Tenant: req.Tenant, Template: req.Template, Metadata: req.Metadata}, began, err, nil)
		return Info{}, err
	}
	detail := createDetail(info, plan, c)
	if err := m.probeAtCreate(ctx, req, plan, c, l, detail); err != nil {
		m.end(ctx, l, store.StateFailed, store.EventFail, reasonProbeFailed)
		m.auditCreate(ctx, info, began, err, detail)
		return Info{}, fmt.Errorf("sandbox %s killed: %w", info.ID, err)
	}
	m.cfg.Metrics.CreateObserved(time.Since(began))
	m.auditCreate(ctx, info, began, nil, detail)
	m.log.Info("sandbox created", "sandbox", info.ID, "tenant", info.Tenant, "template", info.Template,
		"ms", time.Since(began).Milliseconds())
	return info, nil
}

// createPlan is what a valid create request resolves to before anything
// is made.
type createPlan struct {
	tmpl   *template.Template
	ttl    time.Duration
	egress egressPlan
}

// planCreate checks a request (tenant, metadata, admission, TTL, egress,
// template, machine size) and resolves its TTL and policy.
func (m *Manager) planCreate(req CreateRequest) (createPlan, error) {
	if err := store.ValidateTenant(req.Tenant); err != nil {
		return createPlan{}, err
	}
	if err := validateMetadata(req.Metadata); err != nil {
		return createPlan{}, err
	}
	if err := m.checkNewID(req.ID); err != nil {
		return createPlan{}, err
	}
	if err := m.admit(); err != nil {
		return createPlan{}, err
	}
	if req.TTL < 0 {
		return createPlan{}, errdefs.InvalidArgument("ttl must not be negative")
	}
	if req.TTL > m.cfg.MaxTTL {
		return createPlan{}, errdefs.InvalidArgument("ttl %s exceeds this server's maximum of %s", req.TTL, m.cfg.MaxTTL)
	}
	egressPlan, err := m.planEgress(req.Tenant, req.Egress)
	if err != nil {
		return createPlan{}, err
	}
	tmpl, err := m.templates.Open(req.Template)
	if err != nil {
		return createPlan{}, err
	}
	if err := m.checkSize(tmpl.MemoryMiB, tmpl.VCPUs); err != nil {
		return createPlan{}, fmt.Errorf("template %q: %w", tmpl.Name, err)
	}
	ttl := req.TTL
	if ttl == 0 {
		ttl = min(time.Duration(tmpl.DefaultTTLSeconds)*time.Second, m.cfg.MaxTTL)
	}
	return createPlan{tmpl: tmpl, ttl: ttl, egress: egressPlan}, nil
}

// startSandbox makes the sandbox a plan describes and registers it: a
// reservation against MaxSandboxes, a clone (from the warm pool or
// restored now) with its slot, the identity push, the egress CA and
// policy. Each step's undo is registered as it succeeds, so a failure
// leaves nothing (no VM, slot, proxy entry or reservation); once
// registered, the sandbox owns them all.
func (m *Manager) startSandbox(ctx context.Context, req CreateRequest, plan createPlan) (_ Info, _ *live, _ *clone, err error) {
	var cu cleanup.Stack
	defer func() { m.logUndo("create", cu.Clean(ctx)) }()
	if err := m.reserve(); err != nil {
		return Info{}, nil, nil, err
	}
	cu.AddFunc(m.release)
	tmpl := plan.tmpl
	c, err := m.pools.take(ctx, tmpl)
	if err != nil {
		return Info{}, nil, nil, fmt.Errorf("create from %s: %w", tmpl.Name, err)
	}
	v := c.machine
	c.id = req.ID
	id := c.sandboxID()
	cu.AddFunc(func() { m.releaseNet(id, c.slot) }) // after the VM: drops the proxy entry too
	cu.Add(v.Destroy)
	// Before anything of the caller's runs: its own clock, entropy, id.
	if err := v.Prepare(ctx, id); err != nil {
		return Info{}, nil, nil, fmt.Errorf("create from %s: %w", tmpl.Name, err)
	}
	ca, err := m.createEgressCA(ctx, plan.egress.policy, c)
	if err != nil {
		return Info{}, nil, nil, fmt.Errorf("create from %s: %w", tmpl.Name, err)
	}
	c.ca = ca
	if err := m.createEgress(plan.egress, c, ca); err != nil {
		return Info{}, nil, nil, err
	}
	m.failpoint(FailCreateRestored)
	now := stamp()
	info := Info{ID: id, Tenant: req.Tenant, Template: tmpl.Name, Metadata: copyMap(req.Metadata),
		State: store.StateRunning, CreatedAt: now, Deadline: now.Add(plan.ttl), Egress: plan.egress.policy,
		Jailed: m.machines.Jailed()}
	if c.slot != nil {
		info.NetAddr = c.slot.NsIP.String()
	}
	l, err := m.register(ctx, info, v, c.slot, defaultsOf(tmpl))
	if err != nil {
		return Info{}, nil, nil, err
	}
	cu.Release() // the registered sandbox owns its VM, slot and reservation
	l.mu.Lock()
	l.egressCA = ca
	l.mu.Unlock()
	m.failpoint(FailCreateRegistered)
	return info, l, c, nil
}

// createDetail is the detail of a create's audit record: TTL, policy,
// jail, CA and slot.
func createDetail(info Info, plan createPlan, c *clone) map[string]string {
	detail := map[string]string{"ttl_s": strconv.Itoa(int(plan.ttl / time.Second)), "egress_default": plan.egress.policy.Default,
		"jail": jailWord(info.Jailed)}
	if c.ca != nil {
		detail["egress_tls"] = netpool.TLSInspect
		detail["egress_ca_sha256"] = c.ca.Fingerprint()
	}
	if names := ruleNames(plan.egress.policy); names != "" {
		detail["egress_allow"] = names
	}
	if c.slot != nil {
		detail["net_slot"] = strconv.Itoa(c.slot.Index)
	}
	return detail
}

// probeAtCreate runs the egress self-check a create asked for, and
// records its verdict in detail. It fails closed: a sandbox whose
// self-check lets anything through must be killed before the caller gets
// its id (the caller does that).
func (m *Manager) probeAtCreate(ctx context.Context, req CreateRequest, plan createPlan, c *clone, l *live, detail map[string]string) error {
	switch {
	case !req.Probe:
		return nil
	case c.probedDenyAll && isDenyAll(plan.egress.policy):
		// The check passed in this very clone while it warmed, under the
		// deny-all policy it still has: running it again would only make
		// every job wait a probe timeout.
		detail["probe"] = "ok_at_warmup"
		return nil
	}
	results, err := m.runProbes(ctx, l)
	if err == nil {
		err = probeError(results)
	}
	if err != nil {
		detail["probe"] = "failed"
		if f := failedProbes(results); f != "" {
			detail["probe_failed"] = f
		}
		return err
	}
	detail["probe"] = "ok"
	return nil
}

// auditCreate records a create's outcome (err nil: it succeeded).
func (m *Manager) auditCreate(ctx context.Context, info Info, began time.Time, err error, detail map[string]string) {
	rec := auditRecord(store.EventCreate, info)
	rec.DurationMS, rec.Outcome, rec.Detail = time.Since(began).Milliseconds(), outcomeOf(err), detail
	m.audit(ctx, rec)
}

// sandboxIDRE is the shape of a caller-chosen sandbox id: vm.NewID's.
var sandboxIDRE = regexp.MustCompile(`^sbx-[a-z2-7]{16}$`)

// NewSandboxID returns a fresh sandbox id of the shape CreateRequest.ID
// takes.
func NewSandboxID() string { return vm.NewID("sbx-") }

// checkNewID refuses a caller-chosen id of the wrong shape, or one this
// host already has (running or ended): an id names one sandbox, ever.
func (m *Manager) checkNewID(id string) error {
	if id == "" {
		return nil
	}
	if !sandboxIDRE.MatchString(id) {
		return errdefs.InvalidArgument("sandbox id %q: want sbx- and 16 characters of [a-z2-7]", id)
	}
	m.mu.Lock()
	_, live := m.sandboxes[id]
	m.mu.Unlock()
	if live {
		return errdefs.AlreadyExists("sandbox %s already exists", id)
	}
	_, err := m.cfg.Store.GetSandbox(context.Background(), "", id)
	switch {
	case err == nil:
		return errdefs.AlreadyExists("sandbox %s already exists", id)
	case errdefs.Class(err) != errdefs.ErrNotFound:
		return err
	}
	return nil
}
