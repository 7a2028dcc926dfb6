package egress

import "net/netip"

// Destinations that are never public. The proxy runs on the host, so a name
// that resolves to one of these would otherwise let a guest reach the host's
// own services or its private network through the proxy (DNS rebinding: the
// rule says "api.example.com", the attacker controls example.com's DNS and
// points it at 127.0.0.1).
var (
	// neverPublic is refused by PublicAddr and is never made reachable by an
	// exact rule either: the host itself, link-local (cloud metadata),
	// multicast, reserved space, and IPv6 forms that embed an IPv4 address
	// the checks could not see.
	neverPublic = prefixes(
		"0.0.0.0/8",      // "this network"
		"127.0.0.0/8",    // loopback
		"169.254.0.0/16", // link-local, cloud metadata
		"192.0.0.0/24",   // IETF protocol assignments
		"224.0.0.0/4",    // multicast
		"240.0.0.0/4",    // reserved, broadcast
		"::/128",         // unspecified
		"::1/128",        // loopback
		"::ffff:0:0/96",  // IPv4-mapped (Unmap handles them; belt and braces)
		"64:ff9b::/96",   // NAT64
		"64:ff9b:1::/48", // local-use NAT64
		"100::/64",       // discard
		"2001::/32",      // Teredo
		"2002::/16",      // 6to4
		"fe80::/10",      // link-local
		"ff00::/8",       // multicast
	)
	// privateRanges are refused by PublicAddr but reachable through an exact
	// domain rule or a credential route: an on-premises DMS at 10.1.2.3 is a
	// legitimate destination, and naming it exactly is the operator saying so.
	privateRanges = prefixes(
		"10.0.0.0/8",     // RFC 1918
		"172.16.0.0/12",  // RFC 1918
		"192.168.0.0/16", // RFC 1918
		"100.64.0.0/10",  // CGNAT (RFC 6598)
		"198.18.0.0/15",  // benchmarking; fake-IP DNS setups live here
		"fc00::/7",       // unique local
	)
)

// PublicAddr is the default Config.AllowUpstream: it reports whether a is a
// globally routable unicast address, refusing loopback, RFC 1918, CGNAT,
// link-local, multicast, unspecified, reserved and IPv4-embedding IPv6
// ranges.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && a.Zone() == "" && !inAny(neverPublic, a) && !inAny(privateRanges, a)
}

// upstreamAllowed decides whether the proxy may connect to a for a name
// matched exactly (exact rule or credential route) or by wildcard.
//
// Order matters: the proxy's own address and Config.Internal (netpool's
// slot range: other sandboxes and the host's veth ends) are refused first,
// whatever AllowUpstream says; then AllowUpstream (default PublicAddr) may
// allow; then an exact name may additionally reach privateRanges, never
// neverPublic. A wildcard never reaches a private address: the operator
// named a family of hosts, not an internal one.
func (p *Proxy) upstreamAllowed(a netip.Addr, exact bool) bool {
	a = a.Unmap()
	if !a.IsValid() || a == p.cfg.ListenAddr.Unmap() || inAny(p.cfg.Internal, a) {
		return false
	}
	if p.cfg.AllowUpstream(a) {
		return true
	}
	return exact && inAny(privateRanges, a) && !inAny(neverPublic, a)
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
