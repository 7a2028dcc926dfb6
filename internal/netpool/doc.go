// Package netpool owns the per-sandbox network: a pool of numbered slots,
// each a named network namespace ("airlock-<instance>-s<N>", bind-mounted
// under /run/netns so `ip netns` sees it) holding the guest's tap ("tap0")
// and one end of a veth pair whose host end is "al<instance>-<N>", plus the
// nftables rules that make egress deny-by-default.
//
// Addressing. Slot N owns the N-th /30 of Config.BaseCIDR (default
// 10.200.0.0/16, 16,384 slots): .1 on the host veth, .2 on the namespace
// veth. Every guest has the same address (172.30.0.2/30, gateway 172.30.0.1
// on tap0, fixed MACs), which is what lets one template snapshot be restored
// into any slot; the namespace makes it unique, and the namespace
// masquerades guest traffic to its .2, so host-side components (egress
// proxy, logs) identify the sandbox by the slot's /30. Guest() is that
// fixed configuration; templates are baked with it (the agent sets it up
// once, before the snapshot), so a clone needs no network work at create.
// The guest's resolver is the gateway address: the namespace rewrites DNS
// sent there to Config.ProxyAddr (nat prerouting), so no host's proxy
// address is ever baked into a template, and the forward chain then drops
// it unless a domain rule opened the proxy.
//
// Attaching a VM. The VMM stays in the host namespace: Slot.OpenTap opens
// a queue of the persistent tap0 on a thread inside the slot namespace and
// returns the descriptor, which the caller hands to QEMU
// (-netdev tap,fd=N). Only that descriptor belongs to the slot.
//
// Naming. Config.Instance (1-5 of [a-z0-9]; a daemon derives it from its
// state directory, tests from their pid) is in every host-wide name: the
// namespace mounts under /run/netns, the host veths and the host table. A
// Pool scans, adopts and deletes only names of its own instance, so two
// daemons on one host, or a test run beside a daemon, leave each other's
// namespaces, links and tables exactly as they were. New also refuses a
// BaseCIDR that overlaps an address already on a host link.
//
// Egress. Each namespace has one inet table "airlock", replaced atomically
// (one nftables transaction) by Slot.SetPolicy: forward and input hooks with
// policy drop; link-local 169.254.0.0/16 (cloud metadata) dropped before
// anything else and never allowable; replies to allowed flows accepted; then
// the whole BaseCIDR (the host's veth addresses and every other slot), so
// "0.0.0.0/0" or Default "allow" never open the host or a neighbour (a rule
// naming an address inside it is refused). Domain rules become "tcp
// 53/80/443 + udp 53 to Config.ProxyAddr"; the proxy decides per domain.
// Then every special-purpose range (internal/netguard: private networks,
// CGNAT, loopback, documentation space, ...) is dropped, except prefixes
// the operator opened (Config.Guard), and only then are the tenant's CIDR
// rules and a default "allow" consulted: a tenant reaches a private
// network behind the host only where the operator said so. A CIDR rule
// wholly inside a range that is not opened is refused with the range's
// name. A new slot's table is deny-all before any link
// exists, and conntrack is flushed on every SetPolicy so revoking an allow
// cuts flows that are already open.
//
// The host gets one inet table "airlock-<instance>" (created by New, removed
// by Close; no other table is touched) as defence in depth: from this
// instance's veths it
// drops IPv6, spoofed sources, link-local, slot-to-slot forwarding, and any
// packet addressed to the host other than at the proxy. New enables net.ipv4.ip_forward and never disables it. A drop in
// some other table (e.g. a FORWARD policy drop set by Docker) still applies:
// nftables accepts are per table.
//
// Lifecycle. Acquire pops a prewarmed slot (a goroutine keeps
// Config.Prewarm ready) or builds one; every build step registers its undo
// as it creates something, so a failed Acquire leaves nothing. Release tears
// down host veth then namespace and is idempotent. The kernel is the only
// record: New sets aside whatever namespaces and links of its instance
// exist, and
// Recover adopts those the caller says are in use and deletes the rest, so
// after a crash no slot points at a dead namespace and no index is handed
// out twice.
//
// What it must never do: shell out to ip/iptables/nft (everything goes
// through netlink and nftables libraries); touch nftables tables other than
// its own tables ("airlock" in its slot namespaces, "airlock-<instance>" on
// the host); touch a namespace or link of another instance; open any path
// into a slot that its policy does
// not name.
package netpool
