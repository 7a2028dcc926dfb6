package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
)

// egressPlan is an egress policy checked once, for one tenant on this
// host, in both forms its two enforcement points need: the slot's
// compiled nftables rules and the egress proxy's view. Applying it to a
// sandbox only stamps the sandbox's identity on the proxy's view; nothing
// is checked or compiled again.
type egressPlan struct {
	policy netpool.Policy
	slot   netpool.Compiled // zero without networking
	proxy  egress.Sandbox   // validated; ID and CA are the sandbox's, set when applied
}

// planEgress refuses policies this host cannot enforce and compiles the
// rest (nil: deny all). Without a network pool a sandbox's NIC is attached
// to nothing, which is exactly deny-all; anything that allows traffic
// would be a lie. With one, the pool compiles the policy under the
// operator's guard, and the proxy's view (with the tenant's credential
// routes) must be valid too.
func (m *Manager) planEgress(tenant string, p *netpool.Policy) (egressPlan, error) {
	pol := netpool.DenyAll()
	if p != nil {
		pol = *p
	}
	if m.cfg.Net == nil {
		if err := pol.Validate(); err != nil {
			return egressPlan{}, err
		}
		if !isDenyAll(pol) {
			return egressPlan{}, errdefs.FailedPrecondition("egress allow rules need sandbox networking, which is not enabled on this host (airlock serve --net)")
		}
		return egressPlan{policy: pol}, nil
	}
	compiled, err := m.cfg.Net.Compile(pol)
	if err != nil {
		return egressPlan{}, err
	}
	view, err := m.proxyView(tenant, pol)
	if err != nil {
		return egressPlan{}, err
	}
	return egressPlan{policy: compiled.Policy(), slot: compiled, proxy: view}, nil
}

// proxyView is what the egress proxy enforces for a sandbox of tenant
// under pol: its domain rules, minus those that enable one of the
// tenant's credential routes, which become the routes instead. A rule
// marked Credential whose domain is no such route is refused. It is
// validated with a placeholder identity; proxyFor stamps the real one.
func (m *Manager) proxyView(tenant string, pol netpool.Policy) (egress.Sandbox, error) {
	sb := egress.Sandbox{ID: "planned", Tenant: tenant}
	routes := map[string]egress.CredentialRoute{}
	for _, r := range m.cfg.Credentials[tenant] {
		routes[strings.ToLower(strings.TrimSuffix(r.Host, "."))] = r
	}
	for _, r := range pol.Allow {
		if r.Domain == "" {
			continue
		}
		if rt, ok := routes[strings.ToLower(strings.TrimSuffix(r.Domain, "."))]; ok {
			rt.Name = r.Name // audit events name the policy's rule
			sb.Routes = append(sb.Routes, rt)
			continue
		}
		if r.Credential {
			// Fail closed: a rule that asks for a credential route never
			// becomes plain egress to a name the operator did not set up.
			return egress.Sandbox{}, errdefs.FailedPrecondition("egress rule %q: %q is not a credential route of tenant %q on this host (the daemon's --credentials file)",
				r.Name, r.Domain, tenant)
		}
		sb.Domains = append(sb.Domains, egress.DomainRule{Name: r.Name, Pattern: r.Domain})
	}
	if err := sb.Validate(); err != nil {
		return egress.Sandbox{}, err
	}
	return sb, nil
}

// proxyFor is the plan's proxy view for sandbox id, with its inspection
// CA (which must be set when the policy inspects TLS).
func (p egressPlan) proxyFor(id string, ca *egress.CA) egress.Sandbox {
	sb := p.proxy
	sb.ID = id
	sb.Domains = append([]egress.DomainRule(nil), p.proxy.Domains...)
	sb.Routes = append([]egress.CredentialRoute(nil), p.proxy.Routes...)
	if p.policy.Inspects() {
		sb.TLS, sb.CA = egress.TLSInspect, ca
	}
	return sb
}

// applyEgress puts plan into force for a sandbox holding slot: the
// proxy's view first (so that when the namespace opens the proxy already
// knows the sandbox), then the namespace's nftables, in one transaction
// that also cuts connections the new policy no longer allows (the
// namespace's conntrack entries, and the proxy's sessions on both sides).
func (m *Manager) applyEgress(slot *netpool.Slot, id string, plan egressPlan, ca *egress.CA) error {
	m.setEgressLookup(slot.NsIP, plan.proxyFor(id, ca))
	if err := slot.Apply(plan.slot); err != nil {
		// Fail closed: the namespace keeps its previous table, and the proxy
		// forgets the sandbox, so at worst it is more closed than asked.
		m.dropEgressLookup(slot.NsIP)
		return fmt.Errorf("sandbox %s: apply egress policy: %w", id, err)
	}
	return nil
}

func isDenyAll(p netpool.Policy) bool { return p.Default == netpool.DefaultDeny && len(p.Allow) == 0 }

// ruleNames lists a policy's allow rule names for audit records.
func ruleNames(p netpool.Policy) string {
	names := make([]string, 0, len(p.Allow))
	for _, r := range p.Allow {
		names = append(names, r.Name)
	}
	return strings.Join(names, ",")
}

// createEgressCA makes a new sandbox's own TLS inspection CA and puts it
// in the guest's trust store, when the policy inspects TLS and the clone
// has a slot (else it returns nil): the guest trusts its CA before the
// proxy ever presents it.
func (m *Manager) createEgressCA(ctx context.Context, pol netpool.Policy, c *clone) (*egress.CA, error) {
	if c.slot == nil || !pol.Inspects() {
		return nil, nil
	}
	ca, err := m.newEgressCA(c.sandboxID())
	if err != nil {
		return nil, err
	}
	if err := installEgressCA(ctx, c.machine, ca); err != nil {
		return nil, err
	}
	return ca, nil
}

// createEgress puts a new sandbox's policy in force in its clone's slot
// before the caller gets the id; without a slot it does nothing. The
// pooled clone's slot is deny-all already, so a deny-all request only
// needs its proxy entry (which makes the proxy answer the sandbox, with
// nothing, rather than log an unknown source); anything else replaces the
// slot's table.
func (m *Manager) createEgress(plan egressPlan, c *clone, ca *egress.CA) error {
	if c.slot == nil {
		return nil
	}
	if isDenyAll(plan.policy) && isDenyAll(c.slot.Policy()) {
		m.setEgressLookup(c.slot.NsIP, plan.proxyFor(c.sandboxID(), ca))
		return nil
	}
	return m.applyEgress(c.slot, c.sandboxID(), plan, ca)
}

// SetEgress replaces a sandbox's egress policy. With networking the new
// policy is in force (namespace and proxy) when it returns, and
// connections it no longer allows are cut.
func (m *Manager) SetEgress(ctx context.Context, tenant, id string, p netpool.Policy) (Info, error) {
	began := time.Now()
	l, err := m.lookup(tenant, id)
	if err != nil {
		return Info{}, err
	}
	plan, err := m.planEgress(tenant, &p)
	if err != nil {
		return Info{}, err
	}
	pol := plan.policy
	ca, newCA, err := m.ensureEgressCA(ctx, tenant, id, l, pol)
	if err != nil {
		return Info{}, err
	}
	l.mu.Lock()
	if l.ending.Load() {
		l.mu.Unlock()
		return Info{}, errdefs.FailedPrecondition("sandbox %s is ending", id)
	}
	info := l.info
	if l.slot == nil && m.cfg.Net != nil && !isDenyAll(pol) && info.State != StatePaused {
		l.mu.Unlock()
		return Info{}, errdefs.FailedPrecondition("sandbox %s was started without networking; its egress cannot be opened", id)
	}
	detail := map[string]string{"default": pol.Default, "allow": ruleNames(pol)}
	if pol.Inspects() {
		detail["tls"] = netpool.TLSInspect
	}
	if newCA {
		detail["ca_sha256"] = ca.Fingerprint()
	}
	if l.slot != nil {
		if err := m.applyEgress(l.slot, id, plan, ca); err != nil {
			l.mu.Unlock()
			rec := auditRecord(store.EventEgressChange, info)
			rec.DurationMS, rec.Outcome, rec.Detail = time.Since(began).Milliseconds(), errdefs.Code(err), detail
			m.audit(ctx, rec)
			return Info{}, err
		}
	}
	l.info.Egress = pol
	info = l.info
	l.mu.Unlock()
	eg, _ := json.Marshal(pol)
	if err := m.cfg.Store.SetSandboxEgress(ctx, id, eg); err != nil {
		return Info{}, err
	}
	rec := auditRecord(store.EventEgressChange, info)
	rec.DurationMS, rec.Outcome, rec.Detail = time.Since(began).Milliseconds(), "ok", detail
	m.audit(ctx, rec)
	return info, nil
}

// ensureEgressCA returns the sandbox's inspection CA when pol asks for
// inspection, making it and installing it in the guest first if the
// sandbox has none yet (newCA). Without networking or inspection it
// returns the CA the sandbox may already have, unused.
func (m *Manager) ensureEgressCA(ctx context.Context, tenant, id string, l *live, pol netpool.Policy) (ca *egress.CA, newCA bool, err error) {
	l.mu.Lock()
	ca, slot := l.egressCA, l.slot
	l.mu.Unlock()
	if ca != nil || slot == nil || !pol.Inspects() {
		return ca, false, nil
	}
	err = m.use(ctx, tenant, id, func(l *live) error {
		var err error
		if ca, err = m.newEgressCA(id); err != nil {
			return err
		}
		return installEgressCA(ctx, l.machine, ca)
	})
	if err != nil {
		return nil, false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.egressCA != nil {
		// A concurrent change installed one first; the guest trusts both,
		// the proxy uses that one.
		return l.egressCA, false, nil
	}
	l.egressCA = ca
	return ca, true, nil
}
