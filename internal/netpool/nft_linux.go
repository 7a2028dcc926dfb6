//go:build linux

package netpool

import (
	"encoding/binary"
	"net/netip"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/netguard"
)

// This file turns policies into nftables rules. Every table is replaced in
// ONE netlink transaction (add table; delete table; add table + chains +
// rules): the kernel applies the batch atomically, so a packet sees either the
// old rule set or the new one, never a half-built or empty table.

var (
	policyDrop   = nftables.ChainPolicyDrop
	policyAccept = nftables.ChainPolicyAccept
)

// slotNet is what a slot's table is built from besides its rules.
type slotNet struct {
	base   netip.Prefix     // the pool's range: host veth ends and every slot
	proxy  netip.Prefix     // the egress proxy's /32; invalid without one
	open   []netip.Prefix   // special-purpose destinations the operator opened
	closed []netguard.Range // special-purpose ranges dropped before any tenant rule
}

// slotRuleset builds the namespace's table. Layout (inet "airlock"):
//
//	chain input   { hook input,  policy drop;  iif lo accept; ct established,related accept }
//	chain forward { hook forward, policy drop;
//	    ip daddr 169.254.0.0/16 drop            # metadata: first, never overridable
//	    ct state invalid drop
//	    ct state established,related accept    # replies (conntrack is flushed on SetPolicy)
//	    ip daddr <base> drop                   # host veth addresses + every other slot
//	    tap0->veth0 <proxy 53/80/443> accept   # with a domain rule
//	    ip daddr <each operator-opened prefix> goto tenant
//	    ip daddr <each special-purpose range> drop   # private, CGNAT, loopback, ...
//	    goto tenant
//	}
//	chain tenant  { tap0->veth0 <other rules> accept; [tap0->veth0 accept] }  # the latter only for Default "allow"
//	chain postrouting { nat hook postrouting; oif veth0 ip masquerade }
//	chain prerouting  { nat hook prerouting;  iif tap0 ip daddr <gateway> tcp/udp dport 53 dnat to <proxy> }  # with a proxy
//
// The input chain drops everything the guest sends to the namespace itself
// (gateway, veth address): nothing in the namespace serves the guest.
// Tenant rules (and a default "allow") are consulted only after the
// special-purpose drops, so a rule for 0.0.0.0/0 reaches public addresses
// and the operator's opened prefixes, never a private network behind the
// host.
func slotRuleset(c *nftables.Conn, n slotNet, rules []compiledRule, defaultAllow bool) {
	t := replaceTable(c, tableName)

	in := c.AddChain(&nftables.Chain{Name: "input", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &policyDrop})
	add(c, t, in, "loopback", iifname("lo"), accept())
	add(c, t, in, "replies", ctState(expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED), accept())

	tenant := c.AddChain(&nftables.Chain{Name: "tenant", Table: t})
	fw := c.AddChain(&nftables.Chain{Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &policyDrop})
	add(c, t, fw, "deny-metadata", ip4(), daddr(metadataCIDR), counter(), drop())
	add(c, t, fw, "invalid", ctState(expr.CtStateBitINVALID), drop())
	add(c, t, fw, "replies", ctState(expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED), accept())
	add(c, t, fw, "deny-host-and-slots", ip4(), daddr(n.base), counter(), drop())
	if slices.ContainsFunc(rules, func(r compiledRule) bool { return r.domain != "" }) {
		// One set of proxy rules for all domain rules: which domain is
		// allowed is the proxy's decision, the namespace only lets the
		// guest talk to the proxy.
		allowRule(c, t, fw, "egress-proxy", n.proxy, ProtoTCP, []uint16{53, 80, 443})
		allowRule(c, t, fw, "egress-proxy-dns", n.proxy, ProtoUDP, []uint16{53})
	}
	for _, o := range n.open {
		if o.Addr().Is4() {
			add(c, t, fw, "operator-open", ip4(), daddr(o), gotoChain(tenant.Name))
		}
	}
	for _, rg := range n.closed {
		add(c, t, fw, "special-"+rg.Prefix.String(), ip4(), daddr(rg.Prefix), counter(), drop())
	}
	add(c, t, fw, "tenant-rules", gotoChain(tenant.Name))
	for _, r := range rules {
		if r.domain == "" {
			allowRule(c, t, tenant, r.name, r.dst, r.proto, r.ports)
		}
	}
	if defaultAllow {
		add(c, t, tenant, "default-allow", iifname(tapName), oifname(nsVethName), accept())
	}

	nat := c.AddChain(&nftables.Chain{Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &policyAccept})
	add(c, t, nat, "masquerade", oifname(nsVethName), ip4(), []expr.Any{&expr.Masq{}})

	if n.proxy.IsValid() {
		// Guests are baked with the gateway as their resolver (Guest()), so
		// no host's proxy address is ever inside a template. DNS sent there
		// is rewritten to the proxy here, before routing; the forward chain
		// above then judges it like any packet to the proxy: dropped unless
		// a domain rule opened the proxy. Without a proxy nothing rewrites
		// it and the input chain drops it.
		pre := c.AddChain(&nftables.Chain{Name: "prerouting", Table: t, Type: nftables.ChainTypeNAT,
			Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest, Policy: &policyAccept})
		gw := netip.PrefixFrom(gatewayAddr, 32)
		for _, proto := range []string{ProtoUDP, ProtoTCP} {
			add(c, t, pre, "dns-to-proxy-"+proto, iifname(tapName), ip4(), daddr(gw), l4proto(proto), dport(53), dnatTo(n.proxy.Addr()))
		}
	}
}

// dnatTo rewrites the destination address (port unchanged).
func dnatTo(a netip.Addr) []expr.Any {
	b := a.As4()
	return []expr.Any{
		&expr.Immediate{Register: 1, Data: b[:]},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
	}
}

// allowRule adds "tap0 -> veth0, ip daddr dst, [proto], [dport p] accept",
// one nftables rule per port (policies are small; no sets to manage).
func allowRule(c *nftables.Conn, t *nftables.Table, ch *nftables.Chain, name string, dst netip.Prefix, proto string, ports []uint16) {
	head := [][]expr.Any{iifname(tapName), oifname(nsVethName), ip4(), daddr(dst)}
	if proto != ProtoAny {
		head = append(head, l4proto(proto))
	}
	if len(ports) == 0 {
		add(c, t, ch, name, append(head, accept())...)
		return
	}
	for _, p := range ports {
		add(c, t, ch, name, append(head, dport(p), accept())...)
	}
}

// hostRuleset builds the host's table: defence in depth behind the
// namespace tables, and the only place that touches host forwarding. Layout
// (inet "airlock-<instance>"; chains have policy accept so the host's other
// traffic and tables are unaffected; "al<i>-*" is this instance's veths):
//
//	chain forward { iif al<i>-* ip6 drop; iif al<i>-* ip saddr != base drop (anti-spoof);
//	                iif al<i>-* ip daddr 169.254.0.0/16 drop; iif al<i>-* oif al<i>-* drop (slot to slot) }
//	chain input   { iif al<i>-* ip6 drop; iif al<i>-* ip daddr != proxy drop }
//	chain postrouting (nat, only with Uplinks) { ip saddr base oif <uplink> masquerade }
//
// The input rule means a guest allowed "0.0.0.0/0" still cannot reach host
// services at any of the host's addresses (sshd on eth0, the API, a slot's
// veth end): the host is reachable only at the proxy, and only where a
// namespace policy opened it.
func hostRuleset(c *nftables.Conn, n names, base netip.Prefix, proxy netip.Prefix, uplinks []string) {
	t := replaceTable(c, n.hostTable)
	hostVethPref := n.vethPrefix
	fw := c.AddChain(&nftables.Chain{Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &policyAccept})
	add(c, t, fw, "slot-ipv6", iifPrefix(hostVethPref), nfproto(unix.NFPROTO_IPV6), counter(), drop())
	add(c, t, fw, "slot-spoof", iifPrefix(hostVethPref), ip4(), saddrNot(base), counter(), drop())
	add(c, t, fw, "slot-metadata", iifPrefix(hostVethPref), ip4(), daddr(metadataCIDR), counter(), drop())
	add(c, t, fw, "slot-to-slot", iifPrefix(hostVethPref), oifPrefix(hostVethPref), counter(), drop())

	in := c.AddChain(&nftables.Chain{Name: "input", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &policyAccept})
	add(c, t, in, "slot-ipv6", iifPrefix(hostVethPref), nfproto(unix.NFPROTO_IPV6), counter(), drop())
	ex := [][]expr.Any{iifPrefix(hostVethPref), ip4()}
	if proxy.IsValid() {
		ex = append(ex, daddrNot(proxy))
	}
	add(c, t, in, "slot-to-host", append(ex, counter(), drop())...)

	if len(uplinks) > 0 {
		nat := c.AddChain(&nftables.Chain{Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
			Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource, Policy: &policyAccept})
		for _, u := range uplinks {
			add(c, t, nat, "uplink-"+u, ip4(), saddr(base), oifname(u), []expr.Any{&expr.Masq{}})
		}
	}
}

// replaceTable queues "add; delete; add" so the batch works whether or not
// the table exists, and returns the fresh table.
func replaceTable(c *nftables.Conn, name string) *nftables.Table {
	t := &nftables.Table{Name: name, Family: nftables.TableFamilyINet}
	c.AddTable(t)
	c.DelTable(t)
	return c.AddTable(t)
}

func add(c *nftables.Conn, t *nftables.Table, ch *nftables.Chain, comment string, parts ...[]expr.Any) {
	var ex []expr.Any
	for _, p := range parts {
		ex = append(ex, p...)
	}
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: ex,
		UserData: userdata.AppendString(nil, userdata.TypeComment, comment)})
}

// Expression fragments. All use register 1.

func accept() []expr.Any { return []expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}} }
func drop() []expr.Any   { return []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}} }

// gotoChain continues in chain name, never coming back here.
func gotoChain(name string) []expr.Any {
	return []expr.Any{&expr.Verdict{Kind: expr.VerdictGoto, Chain: name}}
}
func counter() []expr.Any { return []expr.Any{&expr.Counter{}} }

func ifname(s string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, s)
	return b
}

func iifname(s string) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(s)}}
}

func oifname(s string) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(s)}}
}

// iifPrefix matches "iifname prefix*" the way nft does: compare only the
// prefix bytes.
func iifPrefix(p string) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(p)}}
}

func oifPrefix(p string) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(p)}}
}

func nfproto(p byte) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}}}
}

// ip4 must precede any IPv4 header match in an inet table; without it an
// IPv6 packet's bytes at the same offsets would be compared.
func ip4() []expr.Any { return nfproto(unix.NFPROTO_IPV4) }

func l4proto(proto string) []expr.Any {
	n := map[string]byte{ProtoTCP: unix.IPPROTO_TCP, ProtoUDP: unix.IPPROTO_UDP, ProtoICMP: unix.IPPROTO_ICMP}[proto]
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{n}}}
}

// ipField matches the IPv4 header field at off (12 saddr, 16 daddr) against p.
func ipField(off uint32, p netip.Prefix, op expr.CmpOp) []expr.Any {
	a := p.Masked().Addr().As4()
	mask := binary.BigEndian.AppendUint32(nil, ^uint32(0)<<(32-p.Bits()))
	if p.Bits() == 0 {
		mask = []byte{0, 0, 0, 0}
	}
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: op, Register: 1, Data: a[:]},
	}
}

func daddr(p netip.Prefix) []expr.Any    { return ipField(16, p, expr.CmpOpEq) }
func daddrNot(p netip.Prefix) []expr.Any { return ipField(16, p, expr.CmpOpNeq) }
func saddr(p netip.Prefix) []expr.Any    { return ipField(12, p, expr.CmpOpEq) }
func saddrNot(p netip.Prefix) []expr.Any { return ipField(12, p, expr.CmpOpNeq) }

func dport(p uint16) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, p)},
	}
}

// ctState matches when any of bits is set in the packet's conntrack state.
func ctState(bits uint32) []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binary.NativeEndian.AppendUint32(nil, bits), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
	}
}
