package egress

import (
	"net"
	"net/netip"

	"github.com/airlock-dev/airlock/internal/netguard"
)

// upstreamAllowed decides whether the proxy may connect to a resolved
// address a. The proxy runs on the host, so without this a name that a
// tenant points (through DNS it controls) at 127.0.0.1, the host's own
// address, a private network or cloud metadata would let a guest reach
// the host's services or the network behind it.
//
// The proxy's own address and Config.Internal (netpool's slot range:
// other sandboxes and the host's veth ends) are refused first. Then the
// guard (internal/netguard, the same table netpool's CIDR rules are judged
// by): never the host's own addresses or a Never range (loopback,
// link-local, multicast, ...); other special-purpose ranges (private,
// CGNAT, documentation, ...) only where the operator opened them
// (--egress-open) or chose the address itself (operator: a credential
// route's upstream or a name in the static hosts). Whether a tenant's rule
// names the host exactly or by wildcard makes no difference: tenants
// control their own DNS.
func (p *Proxy) upstreamAllowed(a netip.Addr, operator bool) bool {
	a = a.Unmap()
	if !a.IsValid() || a == p.cfg.ListenAddr.Unmap() || inAny(p.cfg.Internal, a) {
		return false
	}
	if p.cfg.AllowUpstream != nil {
		return p.cfg.AllowUpstream(a)
	}
	why, _ := p.cfg.Guard.Check(a, operator)
	return why == netguard.Allowed
}

// operatorNamed reports whether the operator resolved name itself
// (Config.Hosts).
func (p *Proxy) operatorNamed(name string) bool {
	_, ok := p.cfg.Hosts[name]
	return ok
}

// interfaceAddrs is the default Guard.HostAddrs: every address on this
// network namespace's interfaces, read anew each time (addresses change).
func interfaceAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
