// Package netguard says which destination addresses a sandbox's traffic
// may go to, for both ways out of a sandbox: the egress proxy's dial
// (after it resolved a domain rule's name) and the nftables rules netpool
// compiles from CIDR rules and a default-allow policy. One table, so the
// two cannot disagree.
//
// Tenants control DNS records (a rule for evil.example can resolve to
// anything) and write their own CIDR rules, so the IANA special-purpose
// ranges (private networks, CGNAT, loopback, link-local and cloud metadata,
// documentation and benchmarking space, multicast, reserved space, IPv6
// forms that embed an IPv4 address) are closed to tenants. Some are never
// reachable (Range.Never: loopback, link-local, multicast, "this network",
// reserved); the others only where the operator opened them
// (Guard.Opened, e.g. the on-premises DMS at 10.20.0.0/16).
//
// It is pure: no I/O, no netlink. What the host's own addresses are comes
// from the caller.
package netguard

import "net/netip"

// Range is one special-purpose block.
type Range struct {
	Prefix netip.Prefix
	Name   string // as IANA's registry names it, for error messages
	// Never: no rule of a tenant or the operator reaches it (the host
	// itself, link-local with cloud metadata, multicast, reserved).
	Never bool
}

// Ranges is the table, IPv4 then IPv6, from IANA's IPv4 and IPv6
// Special-Purpose Address Registries.
var Ranges = []Range{
	r("0.0.0.0/8", "this network", true),
	r("10.0.0.0/8", "private-use (RFC 1918)", false),
	r("100.64.0.0/10", "shared address space (CGNAT)", false),
	r("127.0.0.0/8", "loopback", true),
	r("169.254.0.0/16", "link-local (cloud metadata)", true),
	r("172.16.0.0/12", "private-use (RFC 1918)", false),
	r("192.0.0.0/24", "IETF protocol assignments", true),
	r("192.0.2.0/24", "documentation (TEST-NET-1)", false),
	r("192.31.196.0/24", "AS112-v4", false),
	r("192.52.193.0/24", "AMT", false),
	r("192.88.99.0/24", "deprecated 6to4 relay anycast", true),
	r("192.168.0.0/16", "private-use (RFC 1918)", false),
	r("192.175.48.0/24", "AS112 direct delegation", false),
	r("198.18.0.0/15", "benchmarking", false),
	r("198.51.100.0/24", "documentation (TEST-NET-2)", false),
	r("203.0.113.0/24", "documentation (TEST-NET-3)", false),
	r("224.0.0.0/4", "multicast", true),
	r("240.0.0.0/4", "reserved and limited broadcast", true),

	r("::/128", "unspecified", true),
	r("::1/128", "loopback", true),
	r("::ffff:0:0/96", "IPv4-mapped", true),
	r("64:ff9b::/96", "IPv4/IPv6 translation (NAT64)", true),
	r("64:ff9b:1::/48", "local-use IPv4/IPv6 translation", true),
	r("100::/64", "discard-only", true),
	r("2001::/23", "IETF protocol assignments (Teredo among them)", true),
	r("2001:db8::/32", "documentation", false),
	r("2002::/16", "6to4", true),
	r("3fff::/20", "documentation", false),
	r("5f00::/16", "segment routing (SRv6) SIDs", false),
	r("fc00::/7", "unique-local", false),
	r("fe80::/10", "link-local", true),
	r("ff00::/8", "multicast", true),
}

func r(p, name string, never bool) Range {
	return Range{Prefix: netip.MustParsePrefix(p), Name: name, Never: never}
}

// Lookup returns the special-purpose range holding a (IPv4-mapped IPv6
// addresses are read as IPv4), or false for an ordinary public address.
// An invalid or zoned address is in a Never range.
func Lookup(a netip.Addr) (Range, bool) {
	if !a.IsValid() || a.Zone() != "" {
		return Range{Name: "invalid or zoned address", Never: true}, true
	}
	a = a.Unmap()
	for _, rg := range Ranges {
		if rg.Prefix.Contains(a) {
			return rg, true
		}
	}
	return Range{}, false
}

// Guard is the operator's side: which special-purpose destinations the
// operator opened to tenants' rules, and the host's own addresses (never
// a destination: a proxy on the host connecting to one of them reaches
// every service the host runs). The zero Guard opens nothing.
type Guard struct {
	// Open are prefixes inside special-purpose ranges (not Never ones)
	// that tenants' rules may reach.
	Open []netip.Prefix
	// HostAddrs returns the host's own addresses; nil means none known.
	HostAddrs func() []netip.Addr
}

// Opened reports whether the operator opened a.
func (g Guard) Opened(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range g.Open {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// isHost reports whether a is one of the host's own addresses.
func (g Guard) isHost(a netip.Addr) bool {
	if g.HostAddrs == nil {
		return false
	}
	a = a.Unmap()
	for _, h := range g.HostAddrs() {
		if h.Unmap() == a {
			return true
		}
	}
	return false
}

// Refusal says why a destination is refused; "" when it is allowed.
type Refusal string

// Reasons for Refusal.
const (
	Allowed       Refusal = ""
	RefusedHost   Refusal = "the host's own address"
	RefusedNever  Refusal = "a special-purpose address no rule may reach"
	RefusedClosed Refusal = "a special-purpose address the operator has not opened"
)

// Check decides a destination address: the host's own addresses and Never
// ranges are refused; other special-purpose addresses unless opened (or
// operatorNamed: the operator chose this address for the name, in the
// proxy's static hosts or a credential route's upstream).
func (g Guard) Check(a netip.Addr, operatorNamed bool) (Refusal, Range) {
	if g.isHost(a) {
		return RefusedHost, Range{}
	}
	rg, special := Lookup(a)
	switch {
	case !special:
		return Allowed, Range{}
	case rg.Never:
		return RefusedNever, rg
	case operatorNamed || g.Opened(a):
		return Allowed, rg
	}
	return RefusedClosed, rg
}

// Closed returns, for nftables, what a tenant's traffic must never reach
// over IPv4 whatever its rules say: every IPv4 special-purpose range; the
// ones in Open are excepted by the caller (accepted before these drops).
func (g Guard) Closed() []Range {
	var out []Range
	for _, rg := range Ranges {
		if rg.Prefix.Addr().Is4() {
			out = append(out, rg)
		}
	}
	return out
}

// CheckPrefix decides a tenant's CIDR rule: refused when it lies wholly
// inside a special-purpose range the operator has not opened (it could
// reach nothing), or overlaps a Never range it does not contain (a rule
// for 169.254.169.254/32 is a mistake worth saying). Wider rules (say
// 0.0.0.0/0 on port 443) are accepted: the special ranges inside them
// stay closed by the drops netpool puts before every tenant rule.
func (g Guard) CheckPrefix(p netip.Prefix) (Refusal, Range) {
	p = p.Masked()
	for _, rg := range Ranges {
		if !rg.Prefix.Overlaps(p) || p.Bits() < rg.Prefix.Bits() {
			continue // disjoint, or wider than the range: the drops handle it
		}
		if rg.Never {
			return RefusedNever, rg
		}
		for _, o := range g.Open {
			if o.Bits() <= p.Bits() && o.Contains(p.Addr()) {
				return Allowed, rg
			}
		}
		return RefusedClosed, rg
	}
	return Allowed, Range{}
}
