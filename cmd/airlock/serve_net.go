package main

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

	"github.com/spf13/cobra"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// netFlags configure sandbox networking for `airlock serve --net`.
type netFlags struct {
	enabled     bool
	instance    string
	baseCIDR    string
	proxyAddr   string
	prewarm     int
	uplinks     []string
	credentials string
	egressCAs   []string
	egressHosts string
	egressOpen  []string
}

// proxyLinkName is the dummy interface in the host namespace that carries
// the egress proxy's address (outside the slot range, so "allow the proxy"
// is never "allow a slot"). Like every host-wide name it carries the
// instance, so one daemon never deletes another's.
func proxyLinkName(instance string) string { return "airlock-p" + instance }

func (n *netFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&n.enabled, "net", false, "give every sandbox its own network namespace with a default-deny egress policy (needs root)")
	f.StringVar(&n.instance, "net-instance", os.Getenv("AIRLOCK_NET_INSTANCE"), "1-5 of [a-z0-9] carried by every namespace, link and nftables table this daemon makes, so daemons on one host never touch each other's (default: derived from --state-dir; env AIRLOCK_NET_INSTANCE)")
	f.StringVar(&n.baseCIDR, "net-base-cidr", netpool.DefaultBaseCIDR, "IPv4 range carved into one /30 per sandbox; must be unused on this host")
	f.StringVar(&n.proxyAddr, "proxy-addr", "10.199.255.1", "address of the egress proxy (domain rules, DNS, credential routes), put on a dummy interface airlock-p<instance> (or lo); \"\" disables the proxy")
	f.IntVar(&n.prewarm, "net-prewarm", 4, "network slots kept built ahead of demand")
	f.StringSliceVar(&n.uplinks, "uplink", nil, "host interfaces sandbox traffic allowed by CIDR rules is masqueraded out of (repeatable)")
	f.StringVar(&n.credentials, "credentials", "", "JSON file of credential routes per tenant: {\"tenant\": [{\"name\",\"host\",\"upstream\",\"header\",\"value\"}]}; secrets stay in the proxy")
	f.StringArrayVar(&n.egressCAs, "egress-ca", nil, "PEM file of CA certificates the egress proxy trusts for upstreams, besides the system roots (credential routes and TLS inspection; repeatable)")
	f.StringVar(&n.egressHosts, "egress-hosts", "", "hosts(5)-style file of names the egress proxy resolves statically, before DNS (e.g. an on-premises DMS without DNS); the operator's choice, so they may resolve to private addresses")
	f.StringArrayVar(&n.egressOpen, "egress-open", nil, "a private (special-purpose) IPv4 or IPv6 prefix sandboxes' rules may reach, e.g. the DMS's 10.20.0.0/16 (repeatable); without it no CIDR or domain rule reaches private networks, CGNAT, documentation or benchmarking space")
}

// hostNet is what --net sets up; close undoes it in reverse order.
type hostNet struct {
	pool        *netpool.Pool
	credentials map[string][]egress.CredentialRoute
	proxyAddr   netip.Addr              // invalid without a proxy
	upstreamTLS *tls.Config             // nil: system roots
	hosts       map[string][]netip.Addr // --egress-hosts; nil: DNS only
	guard       netguard.Guard          // --egress-open
	undo        []func() error
}

func (h *hostNet) close(log *slog.Logger) {
	if h == nil {
		return
	}
	for i := len(h.undo) - 1; i >= 0; i-- {
		if err := h.undo[i](); err != nil {
			log.Error("network teardown", "err", err)
		}
	}
	h.undo = nil
}

// setup validates the flags and builds the pool (and the proxy's address).
// The proxy itself starts once the sandbox manager exists (startProxy).
func (n *netFlags) setup(log *slog.Logger, stateDir string) (_ *hostNet, err error) {
	if !n.enabled {
		if n.credentials != "" || len(n.egressCAs) > 0 || n.egressHosts != "" || len(n.egressOpen) > 0 {
			return nil, errdefs.InvalidArgument("--credentials, --egress-ca, --egress-hosts and --egress-open configure sandbox networking: they need --net")
		}
		return nil, nil
	}
	if n.instance == "" {
		n.instance = netpool.InstanceFor(stateDir)
	}
	if !netpool.ValidInstance(n.instance) {
		return nil, errdefs.InvalidArgument("--net-instance %q: must be 1-5 of [a-z0-9]", n.instance)
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
	if n.credentials != "" {
		if h.credentials, err = loadCredentials(n.credentials); err != nil {
			return nil, err
		}
		if n.proxyAddr == "" {
			return nil, errdefs.InvalidArgument("--credentials needs the egress proxy (--proxy-addr)")
		}
	}
	if len(n.egressCAs) > 0 {
		if h.upstreamTLS, err = loadUpstreamRoots(n.egressCAs); err != nil {
			return nil, err
		}
	}
	if n.egressHosts != "" {
		if h.hosts, err = loadHosts(n.egressHosts); err != nil {
			return nil, err
		}
	}
	if h.guard.Open, err = parseOpen(n.egressOpen, n.baseCIDR); err != nil {
		return nil, err
	}
	if n.proxyAddr != "" {
		a, err := netip.ParseAddr(n.proxyAddr)
		if err != nil || !a.Is4() {
			return nil, errdefs.InvalidArgument("--proxy-addr %q: not an IPv4 address", n.proxyAddr)
		}
		h.proxyAddr = a
		undo, err := addProxyLink(proxyLinkName(n.instance), a)
		if err != nil {
			return nil, fmt.Errorf("egress proxy address: %w", err)
		}
		h.undo = append(h.undo, undo)
	}
	h.pool, err = netpool.New(netpool.Config{BaseCIDR: n.baseCIDR, ProxyAddr: n.proxyAddr, Prewarm: n.prewarm,
		Uplinks: n.uplinks, Instance: n.instance, Guard: h.guard, Logger: log})
	if err != nil {
		return nil, err
	}
	h.undo = append(h.undo, h.pool.Close)
	log.Info("sandbox networking on", "instance", n.instance, "base_cidr", n.baseCIDR, "proxy", n.proxyAddr, "uplinks", n.uplinks,
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
	h.undo = append(h.undo, func() error { p.Close(); return nil })
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
