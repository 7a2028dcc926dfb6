package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
)

// Networking (Config.Net set). Every sandbox, including the warm pool's
// idle clones, holds one netpool slot from the moment its QEMU starts: the
// tap descriptor is part of the QEMU command line, so a slot cannot be
// attached to a running clone. A pooled clone's slot is deny-all; Create
// applies the request's policy before it returns, and before anything of
// the caller's can run in the guest.
//
// Two enforcement points share one policy:
//   - the slot namespace's nftables (netpool): CIDR rules, and for domain
//     rules only "the guest may talk to the egress proxy";
//   - the egress proxy (package egress), which looks the sandbox up by the
//     slot's NsIP (EgressLookup) and allows names: the policy's domain
//     rules, plus the tenant's credential routes that the policy enables.
//
// A credential route (Config.Credentials, from the host's configuration)
// is enabled by an exact domain rule naming its in-guest host, e.g.
// {name: "llm", domain: "llm.internal"}: like every other way out it is an
// explicit, named exception in the sandbox's policy, visible in inspect
// and in the audit log. The secret never leaves the proxy.

// EgressLookup is the egress proxy's egress.Config.Lookup: which running
// sandbox owns a slot address, with the domain rules and credential routes
// it may use. Safe for concurrent use; cheap (one map read).
func (m *Manager) EgressLookup(src netip.Addr) (egress.Sandbox, bool) {
	m.egMu.RLock()
	defer m.egMu.RUnlock()
	sb, ok := m.egressBySrc[src.Unmap()]
	return sb, ok
}

// setEgressLookup changes what the proxy enforces for src, then has it
// judge the connections src already has open against that.
func (m *Manager) setEgressLookup(src netip.Addr, sb egress.Sandbox) {
	m.egMu.Lock()
	m.egressBySrc[src] = sb
	m.egMu.Unlock()
	m.recheckEgress(src)
}

// dropEgressLookup makes src unknown to the proxy and closes everything
// it still had open through it.
func (m *Manager) dropEgressLookup(src netip.Addr) {
	m.egMu.Lock()
	delete(m.egressBySrc, src)
	m.egMu.Unlock()
	m.recheckEgress(src)
}

// EgressEnforcer is what the Manager needs of the egress proxy
// (egress.Proxy): after every change to what EgressLookup returns for a
// source, close the connections from it that are no longer allowed.
type EgressEnforcer interface {
	Recheck(src netip.Addr) int
}

type enforcerRef struct{ e EgressEnforcer }

// SetEgressEnforcer connects the egress proxy, which is started after the
// Manager (it needs EgressLookup). From then on every policy change and
// every sandbox end closes the proxied connections the change took away,
// on both sides, before the call that made the change returns.
func (m *Manager) SetEgressEnforcer(e EgressEnforcer) {
	m.enforcer.Store(&enforcerRef{e})
}

func (m *Manager) recheckEgress(src netip.Addr) {
	if r := m.enforcer.Load(); r != nil {
		r.e.Recheck(src)
	}
}

// TLS inspection (policy tls "inspect"). Each such sandbox gets its own CA
// (egress.NewCA): the certificate goes into the guest's trust store before
// the policy is in force; the key stays in this process and is never
// stored. A daemon restart makes a new CA and installs it too (the old
// key is gone); a fork child gets its own. The guest's OpenSSL, curl,
// Python and Go read the system bundle; tools with their own bundle
// (Python's certifi, Node) must be pointed at it.
const (
	// guestCAFile is where the sandbox CA certificate is written, the
	// directory update-ca-certificates reads, so a guest that rebuilds its
	// bundle keeps trusting it.
	guestCAFile = "/usr/local/share/ca-certificates/airlock-egress.crt"
	// guestCABundle is Debian's system bundle, which the certificate is
	// appended to.
	guestCABundle = "/etc/ssl/certs/ca-certificates.crt"
)

// newEgressCA makes a sandbox's inspection CA, valid a day beyond the
// longest life any sandbox may have.
func (m *Manager) newEgressCA(id string) (*egress.CA, error) {
	ca, err := egress.NewCA(id, m.cfg.MaxTTL+24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", id, err)
	}
	return ca, nil
}

// installEgressCA writes ca's certificate (never its key) into v's trust
// store.
func installEgressCA(ctx context.Context, v Guest, ca *egress.CA) error {
	if _, err := v.WriteFile(ctx, guestCAFile, bytes.NewReader(ca.CertPEM()), 0o644, true); err != nil {
		return fmt.Errorf("install egress CA in the guest: %w", err)
	}
	var errb bytes.Buffer
	res, err := v.Exec(ctx, guest.ExecOptions{Cwd: "/", Timeout: 30 * time.Second,
		Shell: fmt.Sprintf("mkdir -p %s && cat %s >> %s", path.Dir(guestCABundle), guestCAFile, guestCABundle)}, io.Discard, &errb)
	if err != nil {
		return fmt.Errorf("install egress CA in the guest: %w", err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		return errdefs.FailedPrecondition("install egress CA in the guest: exit %d: %s", res.ExitCode, strings.TrimSpace(errb.String()))
	}
	return nil
}

// AuditEgress records one egress proxy event (egress.Config.Audit): ids,
// rule, byte counts, status. DNS answers are not recorded (a guest can ask
// thousands; the connections that follow are what matter).
func (m *Manager) AuditEgress(ev egress.Event) {
	if ev.Kind == egress.KindDNS {
		return
	}
	d := map[string]string{"kind": ev.Kind, "outcome": ev.Outcome}
	if ev.Rule != "" {
		d["rule"] = ev.Rule
	}
	if ev.Host != "" {
		d["host"] = ev.Host // the allowed name or pattern, never a refused one
	}
	if ev.Reason != "" {
		d["reason"] = ev.Reason
	}
	if ev.Status != 0 {
		d["status"] = strconv.Itoa(ev.Status)
	}
	d["bytes_up"] = strconv.FormatInt(ev.BytesUp, 10)
	d["bytes_down"] = strconv.FormatInt(ev.BytesDown, 10)
	outcome := "ok"
	if ev.Outcome != egress.OutcomeOK {
		outcome = ev.Outcome
	}
	rec := auditRecord(store.EventEgress, m.auditInfo(ev.Tenant, ev.SandboxID))
	rec.Bytes, rec.DurationMS, rec.Outcome, rec.Detail = ev.BytesUp+ev.BytesDown, ev.Duration.Milliseconds(), outcome, d
	m.audit(context.Background(), rec)
}

// ProbeResult is one egress self-check.
type ProbeResult struct {
	Name   string `json:"name"`   // stable: tcp-gateway, tcp-host, tcp-public, tcp-metadata, dns-denied
	Target string `json:"target"` // what was tried, e.g. "1.1.1.1:443"
	// Reachable means traffic got through (a connection, a refusal sent
	// back from beyond the sandbox, a DNS answer): the check failed.
	Reachable bool   `json:"reachable"`
	Detail    string `json:"detail,omitempty"` // the guest tool's short error
}

// probeTimeout bounds each probe inside the guest. A dropped packet shows
// as this timeout; a refusal comes back at once. One second: every probe
// target but the public address is on this host (an answer takes
// milliseconds), and an open path to a public address answers a SYN
// within its round trip, well under a second on any usable uplink. The
// probe runs before every document, so its length is paid per document.
const probeTimeout = time.Second

// probeSpec is one thing the guest tries to reach.
type probeSpec struct {
	name, target string
	try          guest.EgressTarget
}

func probeSpecs(slot *netpool.Slot) []probeSpec {
	tcp := func(name, ip string, port int) probeSpec {
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		return probeSpec{name, addr, guest.EgressTarget{TCP: addr}}
	}
	gw := netpool.Guest().Gateway.String()
	specs := []probeSpec{tcp("tcp-gateway", gw, 22)}
	if slot != nil {
		specs = append(specs, tcp("tcp-host", slot.HostIP.String(), 22))
	}
	specs = append(specs,
		tcp("tcp-public", "1.1.1.1", 443),
		tcp("tcp-metadata", "169.254.169.254", 80))
	// A fresh random name under .invalid: no policy can allow it (a
	// wildcard over a top-level domain is refused), so an address in the
	// answer means DNS is not under the proxy's control.
	b := make([]byte, 6)
	rand.Read(b)
	name := "probe-" + hex.EncodeToString(b) + ".airlock-probe.invalid"
	specs = append(specs, probeSpec{"dns-denied", name, guest.EgressTarget{DNS: name}})
	return specs
}

// runProbes runs the self-check in a live sandbox.
func (m *Manager) runProbes(ctx context.Context, l *live) ([]ProbeResult, error) {
	return probeVM(ctx, l.machine, l.slot)
}

// probeVM runs the self-check in v, whose NIC is attached to slot (nil:
// no networking). The agent makes every attempt at once from the guest's
// own network stack (one call, about one probeTimeout long, and no
// process started in the guest); the verdicts are made here.
func probeVM(ctx context.Context, v Guest, slot *netpool.Slot) ([]ProbeResult, error) {
	specs := probeSpecs(slot)
	targets := make([]guest.EgressTarget, len(specs))
	for i, p := range specs {
		targets[i] = p.try
	}
	got, err := v.EgressCheck(ctx, targets, probeTimeout)
	if err != nil {
		return nil, fmt.Errorf("egress self-check: %w", err)
	}
	// Only the egress proxy answers DNS, and only when a domain rule lets
	// the guest reach it; then "no such name" is its expected answer for
	// the probe's name. Without one nothing may answer at all.
	proxied := false
	if slot != nil {
		for _, r := range slot.Policy().Allow {
			proxied = proxied || r.Domain != ""
		}
	}
	results := make([]ProbeResult, len(specs))
	for i, p := range specs {
		results[i] = ProbeResult{Name: p.name, Target: p.target, Detail: got[i].Detail,
			Reachable: reached(got[i].Outcome, proxied)}
	}
	return results, nil
}

// reached judges one attempt. A timeout, or an error inside the guest (no
// route out), is "blocked". A connection, a refusal or an ICMP
// unreachable is "reachable": the packet left the sandbox and something
// answered, even if nothing listens there (default deny drops silently,
// so nothing answers). A DNS answer with addresses is reachable; so is
// "no such name" unless the proxy is the guest's resolver (proxied). An
// outcome this host does not know fails closed.
func reached(o agentpb.EgressOutcome, proxied bool) bool {
	switch o {
	case agentpb.EgressOutcome_EGRESS_TIMEOUT, agentpb.EgressOutcome_EGRESS_LOCAL_ERROR:
		return false
	case agentpb.EgressOutcome_EGRESS_NAME_NOT_FOUND:
		return !proxied
	default:
		return true
	}
}

// Probe runs the egress self-check in a running sandbox: TCP to the
// gateway, to the host's slot address, to a public address and to cloud
// metadata, and DNS for a name no policy can allow. It fails with
// FailedPrecondition naming every probe that got through. Probes that a
// sandbox's own policy allows fail too: the check is that nothing the
// probes try is open, which is what a deny-by-default job wants to know.
func (m *Manager) Probe(ctx context.Context, tenant, id string) ([]ProbeResult, error) {
	began := time.Now()
	var info Info
	var results []ProbeResult
	err := m.use(ctx, tenant, id, func(l *live) error {
		info = l.infoCopy()
		var err error
		results, err = m.runProbes(ctx, l)
		return err
	})
	if info.ID == "" {
		return nil, err
	}
	if err == nil {
		err = probeError(results)
	}
	d := map[string]string{}
	if err != nil {
		d["failed"] = failedProbes(results)
	}
	rec := auditRecord(store.EventEgressProbe, info)
	rec.DurationMS, rec.Outcome, rec.Detail = time.Since(began).Milliseconds(), outcomeOf(err), d
	m.audit(ctx, rec)
	return results, err
}

func failedProbes(rs []ProbeResult) string {
	var names []string
	for _, r := range rs {
		if r.Reachable {
			names = append(names, r.Name)
		}
	}
	return strings.Join(names, ",")
}

func probeError(rs []ProbeResult) error {
	if f := failedProbes(rs); f != "" {
		return errdefs.EgressOpen("egress self-check failed: %s", f)
	}
	return nil
}

// releaseNet forgets a sandbox's proxy entry and tears its slot down. The
// VM must be gone already.
func (m *Manager) releaseNet(id string, slot *netpool.Slot) {
	if slot == nil {
		return
	}
	m.dropEgressLookup(slot.NsIP)
	if err := m.cfg.Net.Release(slot); err != nil {
		m.log.Error("release network slot", "sandbox", id, "slot", slot.Index, "err", err)
	}
}
