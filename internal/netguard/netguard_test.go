package netguard

import (
	"net/netip"
	"testing"
)

func TestLookup(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":          "",
		"2606:4700::1111":  "",
		"10.9.8.7":         "private-use (RFC 1918)",
		"::ffff:10.9.8.7":  "private-use (RFC 1918)",
		"127.0.0.1":        "loopback",
		"169.254.169.254":  "link-local (cloud metadata)",
		"100.100.100.200":  "shared address space (CGNAT)",
		"198.19.255.255":   "benchmarking",
		"255.255.255.255":  "reserved and limited broadcast",
		"fd12::1":          "unique-local",
		"2001:db8::1":      "documentation",
		"2001:0:4136::1":   "IETF protocol assignments (Teredo among them)",
		"64:ff9b::a09:807": "IPv4/IPv6 translation (NAT64)",
	} {
		rg, special := Lookup(netip.MustParseAddr(addr))
		if rg.Name != want || special != (want != "") {
			t.Errorf("Lookup(%s) = %q %v, want %q", addr, rg.Name, special, want)
		}
	}
	if rg, special := Lookup(netip.Addr{}); !special || !rg.Never {
		t.Error("an invalid address must be refused")
	}
}

func TestCheck(t *testing.T) {
	g := Guard{Open: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")},
		HostAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("203.0.0.9")} }}
	for _, c := range []struct {
		addr     string
		operator bool
		want     Refusal
	}{
		{"8.8.8.8", false, Allowed},
		{"203.0.0.9", false, RefusedHost},
		{"203.0.0.9", true, RefusedHost},
		{"10.20.1.1", false, Allowed},
		{"10.21.1.1", false, RefusedClosed},
		{"10.21.1.1", true, Allowed},
		{"127.0.0.1", true, RefusedNever},
		{"169.254.169.254", true, RefusedNever},
	} {
		if got, _ := g.Check(netip.MustParseAddr(c.addr), c.operator); got != c.want {
			t.Errorf("Check(%s, operator=%v) = %q, want %q", c.addr, c.operator, got, c.want)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	g := Guard{Open: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	for p, want := range map[string]Refusal{
		"0.0.0.0/0":          Allowed, // wider than every range: the drops keep them closed
		"93.184.215.0/24":    Allowed,
		"10.20.0.7/32":       Allowed,
		"10.20.0.0/16":       Allowed,
		"10.0.0.0/8":         RefusedClosed,
		"10.21.0.7/32":       RefusedClosed,
		"192.168.1.0/24":     RefusedClosed,
		"169.254.169.254/32": RefusedNever,
		"127.0.0.0/8":        RefusedNever,
	} {
		if got, _ := g.CheckPrefix(netip.MustParsePrefix(p)); got != want {
			t.Errorf("CheckPrefix(%s) = %q, want %q", p, got, want)
		}
	}
}
