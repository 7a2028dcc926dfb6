package netpool

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Fixed guest-side addressing. Every guest gets the same address, gateway and
// MAC: the slot namespace makes them unique, and a template snapshot restored
// into any slot finds the network it was baked with (its ARP cache entry for
// the gateway stays valid because the gateway MAC never changes either; a tap
// drops frames addressed to a MAC it does not own).
var (
	guestPrefix  = netip.MustParsePrefix("172.30.0.2/30")
	gatewayAddr  = netip.MustParseAddr("172.30.0.1")
	guestMAC     = net.HardwareAddr{0x02, 0xa1, 0x0c, 0x00, 0x00, 0x02}
	gatewayMAC   = net.HardwareAddr{0x02, 0xa1, 0x0c, 0x00, 0x00, 0x01}
	metadataCIDR = netip.MustParsePrefix("169.254.0.0/16")
)

// DefaultBaseCIDR gives 16,384 /30 slots.
const DefaultBaseCIDR = "10.200.0.0/16"

// Guest returns the network configuration every guest is baked with. It
// depends on nothing host-specific (not even the proxy address), so a
// template baked on one host restores into any slot of any pool.
func Guest() GuestConfig {
	return GuestConfig{Addr: guestPrefix, Gateway: gatewayAddr,
		MAC: slices.Clone(guestMAC), GatewayMAC: slices.Clone(gatewayMAC), DNS: gatewayAddr}
}

// GuestConfig is what the VM side configures inside the guest. It is the same
// for every slot.
type GuestConfig struct {
	// Addr is the guest's address and prefix (172.30.0.2/30).
	Addr netip.Prefix
	// Gateway is the address of tap0 in the slot namespace (172.30.0.1).
	Gateway netip.Addr
	// MAC is the guest NIC's MAC (QEMU: -device virtio-net-device,mac=...).
	MAC net.HardwareAddr
	// GatewayMAC is tap0's MAC, fixed so restored snapshots' ARP caches hold.
	GatewayMAC net.HardwareAddr
	// DNS is the resolver the guest uses: the gateway address. The slot
	// namespace rewrites DNS sent there to the egress proxy (and the policy
	// then drops it unless a domain rule lets the guest talk to the proxy),
	// so the proxy's address is never baked into a template.
	DNS netip.Addr
}

// addressing carves /30 slot subnets out of a base IPv4 range.
// Slot i owns base+4i .. base+4i+3: .1 is the host veth end, .2 the
// namespace veth end (the address guest traffic is masqueraded to).
type addressing struct {
	base     netip.Prefix // masked IPv4 prefix, bits <= 30
	capacity int          // number of /30s in base
}

func parseBase(s string) (addressing, error) {
	if s == "" {
		s = DefaultBaseCIDR
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return addressing{}, errdefs.InvalidArgument("netpool: base_cidr %q: %v", s, err)
	}
	if !p.Addr().Is4() {
		return addressing{}, errdefs.InvalidArgument("netpool: base_cidr %q: must be IPv4", s)
	}
	if p.Bits() > 30 {
		return addressing{}, errdefs.InvalidArgument("netpool: base_cidr %q: needs at least a /30", s)
	}
	if p.Masked() != p {
		return addressing{}, errdefs.InvalidArgument("netpool: base_cidr %q: host bits set (did you mean %s?)", s, p.Masked())
	}
	if p.Overlaps(guestPrefix) || p.Overlaps(metadataCIDR) {
		return addressing{}, errdefs.InvalidArgument("netpool: base_cidr %q overlaps the guest subnet %s or link-local %s", s, guestPrefix.Masked(), metadataCIDR)
	}
	return addressing{base: p, capacity: 1 << (30 - p.Bits())}, nil
}

// subnet returns slot i's /30.
func (a addressing) subnet(i int) netip.Prefix {
	b := a.base.Addr().As4()
	v := binary.BigEndian.Uint32(b[:]) + uint32(4*i)
	binary.BigEndian.PutUint32(b[:], v)
	return netip.PrefixFrom(netip.AddrFrom4(b), 30)
}

// hostIP is the host veth end of slot i (.1 of its /30).
func (a addressing) hostIP(i int) netip.Addr { return a.subnet(i).Addr().Next() }

// nsIP is the namespace veth end of slot i (.2 of its /30).
func (a addressing) nsIP(i int) netip.Addr { return a.hostIP(i).Next() }

// indexOf returns the slot whose /30 holds addr, or -1.
func (a addressing) indexOf(addr netip.Addr) int {
	if !a.base.Contains(addr) {
		return -1
	}
	b, x := a.base.Addr().As4(), addr.As4()
	return int((binary.BigEndian.Uint32(x[:]) - binary.BigEndian.Uint32(b[:])) / 4)
}

// Naming. Every host-wide name a Pool uses (namespace mounts under
// /run/netns, host links, the host nftables table) carries its instance,
// so that several daemons, and tests beside a daemon, each own a disjoint
// set of names and never touch one another's. Inside a slot namespace the
// names are fixed: the namespace itself is the pool's own.
const (
	nsVethName = "veth0"
	tapName    = "tap0"
	guestPeer  = "guest0" // GuestLinkVethForTests only
	tableName  = "airlock"
	// maxInstanceLen keeps "al<instance>-<index>" within the kernel's 15
	// bytes for interface names with indices up to 7 digits.
	maxInstanceLen = 5
)

// names are the host-wide names of one pool instance.
type names struct {
	instance    string
	netnsPrefix string // "airlock-<instance>-s", + index
	vethPrefix  string // "al<instance>-", + index
	hostTable   string // "airlock-<instance>"
}

func namesFor(instance string) names {
	return names{
		instance:    instance,
		netnsPrefix: "airlock-" + instance + "-s",
		vethPrefix:  "al" + instance + "-",
		hostTable:   "airlock-" + instance,
	}
}

func (n names) netns(i int) string { return fmt.Sprintf("%s%d", n.netnsPrefix, i) }
func (n names) veth(i int) string  { return fmt.Sprintf("%s%d", n.vethPrefix, i) }

// ValidInstance reports whether s can name a pool instance: 1 to 5 of
// [a-z0-9]. No '-': it ends every prefix, so no instance's prefix is a
// prefix of another's ("al" + "ab" + "-" never starts "al" + "abc" + "-").
func ValidInstance(s string) bool {
	if len(s) == 0 || len(s) > maxInstanceLen {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// InstanceFor derives a stable instance name from a daemon's state
// directory, so that each daemon on a host owns its own names by default.
func InstanceFor(stateDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(stateDir)))
	enc := strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))
	return enc[:maxInstanceLen]
}

// parseIndex returns N for name == prefix+N written canonically, else -1,
// so "alab-01" or "airlock-ab-s1x" are never mistaken for ours.
func parseIndex(name, prefix string) int {
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return -1
	}
	n := 0
	for _, c := range name[len(prefix):] {
		if c < '0' || c > '9' || n > 1<<24 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	if fmt.Sprintf("%s%d", prefix, n) != name {
		return -1
	}
	return n
}
