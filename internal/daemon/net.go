package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// NetOptions configure sandbox networking (airlock serve --net).
type NetOptions struct {
	Instance    string   // 1-5 of [a-z0-9] in every host-wide name; "" derives it from the state directory
	BaseCIDR    string   // IPv4 range carved into one /30 per sandbox
	ProxyAddr   string   // the egress proxy's address; "" runs no proxy
	Prewarm     int      // slots kept built ahead of demand
	Uplinks     []string // interfaces CIDR-allowed traffic is masqueraded out of
	Credentials string   // JSON file of credential routes per tenant
	EgressCAs   []string // PEM files of extra upstream roots
	EgressHosts string   // hosts(5)-style file the proxy resolves statically
	EgressOpen  []string // special-purpose prefixes sandboxes' rules may reach
}

// proxyLinkName is the dummy interface in the host namespace that carries
// the egress proxy's address (outside the slot range, so "allow the proxy"
// is never "allow a slot"). Like every host-wide name it carries the
// instance, so one daemon never deletes another's.
func proxyLinkName(instance string) string { return "airlock-p" + instance }

// hostNet is what --net sets up; close undoes it in reverse order.
type hostNet struct {
	pool        *netpool.Pool
	credentials map[string][]egress.CredentialRoute
	proxyAddr   netip.Addr              // invalid without a proxy
	upstreamTLS *tls.Config             // nil: system roots
	hosts       map[string][]netip.Addr // --egress-hosts; nil: DNS only
	guard       netguard.Guard          // --egress-open
	cu          cleanup.Stack
}

func (h *hostNet) close(log *slog.Logger) {
	if h == nil {
		return
	}
	if err := h.cu.Clean(context.Background()); err != nil {
		log.Error("network teardown", "err", err)
	}
}

// setupNet validates the options and builds the pool (and the proxy's
// address). The proxy itself starts once the sandbox manager exists
// (startProxy).
func setupNet(n NetOptions, log *slog.Logger, stateDir string) (_ *hostNet, err error) {
	if n.Instance == "" {
		n.Instance = netpool.InstanceFor(stateDir)
	}
	if !netpool.ValidInstance(n.Instance) {
		return nil, errdefs.InvalidArgument("--net-instance %q: must be 1-5 of [a-z0-9]", n.Instance)
	}
	if os.Geteuid() != 0 {
		return nil, errdefs.FailedPrecondition("--net needs root (network namespaces, nftables)")
	}
	h := &hostNet{}
	defer func() {
		if err != nil {
			h.close(log)
		}
	}()
	if n.Credentials != "" {
		if h.credentials, err = loadCredentials(n.Credentials); err != nil {
			return nil, err
		}
		if n.ProxyAddr == "" {
			return nil, errdefs.InvalidArgument("--credentials needs the egress proxy (--proxy-addr)")
		}
	}
	if len(n.EgressCAs) > 0 {
		if h.upstreamTLS, err = loadUpstreamRoots(n.EgressCAs); err != nil {
			return nil, err
		}
	}
	if n.EgressHosts != "" {
		if h.hosts, err = loadHosts(n.EgressHosts); err != nil {
			return nil, err
		}
	}
	if h.guard.Open, err = parseOpen(n.EgressOpen, n.BaseCIDR); err != nil {
		return nil, err
	}
	if n.ProxyAddr != "" {
		a, err := netip.ParseAddr(n.ProxyAddr)
		if err != nil || !a.Is4() {
			return nil, errdefs.InvalidArgument("--proxy-addr %q: not an IPv4 address", n.ProxyAddr)
		}
		h.proxyAddr = a
		undo, err := addProxyLink(proxyLinkName(n.Instance), a)
		if err != nil {
			return nil, fmt.Errorf("egress proxy address: %w", err)
		}
		h.cu.Add(func(context.Context) error { return undo() })
	}
	h.pool, err = netpool.New(netpool.Config{BaseCIDR: n.BaseCIDR, ProxyAddr: n.ProxyAddr, Prewarm: n.Prewarm,
		Uplinks: n.Uplinks, Instance: n.Instance, Guard: h.guard, Logger: log})
	if err != nil {
		return nil, err
	}
	h.cu.Add(func(context.Context) error { return h.pool.Close() })
	log.Info("sandbox networking on", "instance", n.Instance, "base_cidr", n.BaseCIDR, "proxy", n.ProxyAddr, "uplinks", n.Uplinks,
		"credential_tenants", len(h.credentials))
	return h, nil
}

// startProxy runs the egress proxy for the manager's sandboxes and
// connects it back to the manager, so policy changes and sandbox ends
// close the proxied connections they take away.
func (h *hostNet) startProxy(ctx context.Context, log *slog.Logger, mgr *sandbox.Manager) error {
	if h == nil || !h.proxyAddr.IsValid() {
		return nil
	}
	cfg := egress.Config{ListenAddr: h.proxyAddr, Lookup: mgr.EgressLookup, Audit: mgr.AuditEgress, Logger: log,
		Internal: []netip.Prefix{h.pool.BaseCIDR()}, UpstreamTLS: h.upstreamTLS, Hosts: h.hosts, Guard: h.guard}
	p, err := egress.New(cfg)
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	mgr.SetEgressEnforcer(p)
	h.cu.AddFunc(p.Close)
	return nil
}

// parseOpen reads --egress-open: prefixes inside special-purpose ranges
// that may be opened (not loopback, link-local, multicast, ...), never
// overlapping the sandbox range.
func parseOpen(vals []string, baseCIDR string) ([]netip.Prefix, error) {
	base, _ := netip.ParsePrefix(baseCIDR)
	var out []netip.Prefix
	for _, v := range vals {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return nil, errdefs.InvalidArgument("--egress-open %q: not a prefix or an address", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		p = p.Masked()
		rg, special := netguard.Lookup(p.Addr())
		switch {
		case !special || p.Bits() < rg.Prefix.Bits():
			return nil, errdefs.InvalidArgument("--egress-open %s: not inside one special-purpose range (public addresses need no opening)", p)
		case rg.Never:
			return nil, errdefs.InvalidArgument("--egress-open %s: %s (%s) is never reachable from a sandbox", p, rg.Prefix, rg.Name)
		case base.IsValid() && base.Overlaps(p):
			return nil, errdefs.InvalidArgument("--egress-open %s: overlaps the sandbox range %s (--net-base-cidr)", p, base)
		}
		out = append(out, p)
	}
	return out, nil
}

// loadUpstreamRoots is the system roots plus every certificate in files.
func loadUpstreamRoots(files []string) (*tls.Config, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, errdefs.InvalidArgument("--egress-ca: %v", err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, errdefs.InvalidArgument("--egress-ca %s: no PEM certificate in it", f)
		}
	}
	return &tls.Config{RootCAs: pool}, nil
}

// loadHosts reads a hosts(5)-style file: "address name [name...]" per
// line, "#" comments. Names are matched lower-case without a trailing dot,
// as the proxy normalizes them.
func loadHosts(path string) (map[string][]netip.Addr, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errdefs.InvalidArgument("--egress-hosts: %v", err)
	}
	out := map[string][]netip.Addr{}
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil || len(f) < 2 {
			return nil, errdefs.InvalidArgument("--egress-hosts %s:%d: want \"address name...\"", path, i+1)
		}
		for _, name := range f[1:] {
			name = strings.ToLower(strings.TrimSuffix(name, "."))
			out[name] = append(out[name], a.Unmap())
		}
	}
	return out, nil
}

// credentialFile is the --credentials format. Values are secrets: they are
// read here and handed to the proxy, and never logged or stored.
type credentialFile map[string][]struct {
	Name     string `json:"name"`
	Host     string `json:"host"`
	Upstream string `json:"upstream"`
	Header   string `json:"header"`
	Value    string `json:"value"`
}

func loadCredentials(path string) (map[string][]egress.CredentialRoute, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errdefs.InvalidArgument("--credentials: %v", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		// Refuse rather than warn: a world-readable key file is a leak
		// waiting to be noticed.
		return nil, errdefs.FailedPrecondition("--credentials %s: mode %o lets others read the secrets; chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f credentialFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		// json errors quote offsets and types, not values.
		return nil, errdefs.InvalidArgument("--credentials %s: %v", path, err)
	}
	out := map[string][]egress.CredentialRoute{}
	for tenant, routes := range f {
		for i, r := range routes {
			rt := egress.CredentialRoute{Name: r.Name, Host: r.Host, Upstream: r.Upstream, Header: r.Header, Value: r.Value}
			// Validate each route on its own: its errors never quote the value.
			if err := (egress.Sandbox{ID: "credentials", Routes: []egress.CredentialRoute{rt}}).Validate(); err != nil {
				return nil, errdefs.InvalidArgument("--credentials %s: tenant %q route %d: %v", path, tenant, i, err)
			}
			out[tenant] = append(out[tenant], rt)
		}
	}
	return out, nil
}

// addProxyLink (re)creates the dummy interface holding the proxy address.
// Kernels without the dummy driver get the address on lo instead (local
// delivery works the same); the returned undo removes whichever was made.
func addProxyLink(name string, a netip.Addr) (func() error, error) {
	if err := delProxyLink(name); err != nil {
		return nil, err
	}
	del := func() error { return delProxyLink(name) }
	ipn := &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)}
	la := netlink.NewLinkAttrs()
	la.Name = name
	if err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: la}); err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) {
			return nil, fmt.Errorf("add %s: %w", name, err)
		}
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return nil, err
		}
		addr := &netlink.Addr{IPNet: ipn, Label: "lo:" + name[len("airlock-"):]}
		if err := netlink.AddrReplace(lo, addr); err != nil {
			return nil, fmt.Errorf("address %s on lo: %w", a, err)
		}
		return func() error { return netlink.AddrDel(lo, addr) }, nil
	}
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil, err
	}
	if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: ipn}); err != nil {
		return nil, errors.Join(fmt.Errorf("address %s: %w", name, err), del())
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return nil, errors.Join(err, del())
	}
	return del, nil
}

func delProxyLink(name string) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	return netlink.LinkDel(l)
}
