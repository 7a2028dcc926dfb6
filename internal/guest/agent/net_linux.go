//go:build linux

package agent

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// resolvConf is where the guest's libc looks for its DNS servers.
const resolvConf = "/etc/resolv.conf"

// configureNetwork brings up lo and the NIC and gives the NIC the address,
// default route and resolver in cfg. The host runs it once, at bake time:
// every clone restored from the template then already has the (identical)
// configuration, which is valid in any network slot because every slot's
// gateway has the same address and MAC. With cfg.GatewayMac the gateway
// gets a permanent neighbour entry, so a restored guest never ARPs and a
// cache entry can never expire into a stale state.
//
// It is idempotent: running it again replaces the address, route and
// neighbour entry rather than failing on "exists".
func configureNetwork(cfg *agentpb.NetConfig) error {
	addr, err := netip.ParsePrefix(cfg.AddressCidr)
	if err != nil || !addr.Addr().Is4() {
		return fmt.Errorf("address_cidr %q: not an IPv4 prefix", cfg.AddressCidr)
	}
	gw, err := netip.ParseAddr(cfg.Gateway)
	if err != nil || !gw.Is4() || !addr.Contains(gw) {
		return fmt.Errorf("gateway %q: not an IPv4 address inside %s", cfg.Gateway, addr)
	}
	var gwMAC net.HardwareAddr
	if cfg.GatewayMac != "" {
		if gwMAC, err = net.ParseMAC(cfg.GatewayMac); err != nil {
			return fmt.Errorf("gateway_mac: %v", err)
		}
	}
	var dns []netip.Addr
	for _, s := range cfg.Nameservers {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("nameserver %q: not an IP address", s)
		}
		dns = append(dns, a)
	}

	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("find lo: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	nic, err := findNIC(cfg)
	if err != nil {
		return err
	}
	ipn := &net.IPNet{IP: addr.Addr().AsSlice(), Mask: net.CIDRMask(addr.Bits(), 32)}
	if err := netlink.AddrReplace(nic, &netlink.Addr{IPNet: ipn}); err != nil {
		return fmt.Errorf("address %s on %s: %w", addr, nic.Attrs().Name, err)
	}
	if err := netlink.LinkSetUp(nic); err != nil {
		return fmt.Errorf("%s up: %w", nic.Attrs().Name, err)
	}
	if gwMAC != nil {
		err := netlink.NeighSet(&netlink.Neigh{LinkIndex: nic.Attrs().Index, Family: unix.AF_INET,
			State: netlink.NUD_PERMANENT, IP: gw.AsSlice(), HardwareAddr: gwMAC})
		if err != nil {
			return fmt.Errorf("gateway neighbour: %w", err)
		}
	}
	if err := netlink.RouteReplace(&netlink.Route{LinkIndex: nic.Attrs().Index, Gw: gw.AsSlice()}); err != nil {
		return fmt.Errorf("default route: %w", err)
	}
	return writeResolvConf(dns)
}

// findNIC returns the link named cfg.Interface, or the one with MAC cfg.Mac,
// or the only non-loopback ethernet link.
func findNIC(cfg *agentpb.NetConfig) (netlink.Link, error) {
	if cfg.Interface != "" {
		l, err := netlink.LinkByName(cfg.Interface)
		if err != nil {
			return nil, fmt.Errorf("find %s: %w", cfg.Interface, err)
		}
		return l, nil
	}
	var want net.HardwareAddr
	if cfg.Mac != "" {
		var err error
		if want, err = net.ParseMAC(cfg.Mac); err != nil {
			return nil, fmt.Errorf("mac: %v", err)
		}
	}
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var found []netlink.Link
	for _, l := range links {
		a := l.Attrs()
		if a.Flags&net.FlagLoopback != 0 || l.Type() != "device" {
			continue
		}
		if want != nil && !bytes.Equal(a.HardwareAddr, want) {
			continue
		}
		found = append(found, l)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errors.New("no network interface found (is virtio_net loaded and the VM given a NIC?)")
	default:
		return nil, fmt.Errorf("%d network interfaces match; name one", len(found))
	}
}

// writeResolvConf replaces /etc/resolv.conf (in the root's in-memory
// overlay; the image stays untouched). No servers means an empty file: the
// guest resolves nothing, rather than falling back to 127.0.0.1 or to
// whatever the image builder left there.
func writeResolvConf(dns []netip.Addr) error {
	var b strings.Builder
	b.WriteString("# written by airlock-agent\n")
	for _, a := range dns {
		fmt.Fprintf(&b, "nameserver %s\n", a)
	}
	if len(dns) > 0 {
		// One quick try per query: the resolver answers from memory, and a
		// refused name must fail fast, not after glibc's 5 s x 2 default.
		b.WriteString("options timeout:2 attempts:1\n")
	}
	// A symlink (systemd-resolved's, say) would make the write land
	// elsewhere or fail: remove it first.
	if err := os.Remove(resolvConf); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", resolvConf, err)
	}
	if err := os.WriteFile(resolvConf, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", resolvConf, err)
	}
	return nil
}
