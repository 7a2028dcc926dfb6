package netpool

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestPolicyValidate(t *testing.T) {
	dms := Rule{Name: "dms", CIDR: "10.250.0.2/32", Protocol: "tcp", Ports: []uint16{8080}}
	cases := []struct {
		name    string
		pol     Policy
		wantErr []string // substrings; nil = valid
	}{
		{"deny-all", DenyAll(), nil},
		{"allow-all", Policy{Default: DefaultAllow}, nil},
		{"one rule", Policy{Default: "deny", Allow: []Rule{dms}}, nil},
		{"bare address", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.5"}}}, nil},
		{"icmp", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.0/8", Protocol: "icmp"}}}, nil},
		{"domain", Policy{Default: "deny", Allow: []Rule{{Name: "llm", Domain: "*.example.com"}}}, nil},
		{"everything but metadata is fine", Policy{Default: "deny", Allow: []Rule{{Name: "all", CIDR: "0.0.0.0/0"}}}, nil},
		{"missing default", Policy{}, []string{"default: required"}},
		{"bad default", Policy{Default: "open"}, []string{`default: "open"`}},
		{"bad cidr", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.300/32"}}}, []string{"allow[0].cidr"}},
		{"host bits", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.5/24"}}}, []string{"allow[0].cidr", "host bits"}},
		{"ipv6", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "2001:db8::/32"}}}, []string{"allow[0].cidr", "IPv4"}},
		{"metadata", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "169.254.169.254/32"}}}, []string{"allow[0].cidr", "metadata"}},
		{"port 0", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Protocol: "tcp", Ports: []uint16{443, 0}}}}, []string{"allow[0].ports", "port 0"}},
		{"ports without l4", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Ports: []uint16{443}}}}, []string{"allow[0].ports"}},
		{"ports with icmp", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Protocol: "icmp", Ports: []uint16{1}}}}, []string{"allow[0].ports"}},
		{"unknown protocol", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Protocol: "sctp"}}}, []string{"allow[0].protocol", "sctp"}},
		{"uppercase protocol", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Protocol: "TCP"}}}, []string{"allow[0].protocol"}},
		{"missing name", Policy{Default: "deny", Allow: []Rule{{CIDR: "10.0.0.1/32"}}}, []string{"allow[0].name: required"}},
		{"bad name", Policy{Default: "deny", Allow: []Rule{{Name: "a b\"", CIDR: "10.0.0.1/32"}}}, []string{"allow[0].name"}},
		{"duplicate name", Policy{Default: "deny", Allow: []Rule{dms, {Name: "x", CIDR: "10.0.0.1/32"}, dms}}, []string{"allow[2].name", "duplicates allow[0].name"}},
		{"neither cidr nor domain", Policy{Default: "deny", Allow: []Rule{{Name: "a"}}}, []string{"allow[0].cidr", "required"}},
		{"both cidr and domain", Policy{Default: "deny", Allow: []Rule{{Name: "a", CIDR: "10.0.0.1/32", Domain: "example.com"}}}, []string{"allow[0].domain"}},
		{"bad domain", Policy{Default: "deny", Allow: []Rule{{Name: "a", Domain: "exa mple.com"}}}, []string{"allow[0].domain"}},
		{"domain with ports", Policy{Default: "deny", Allow: []Rule{{Name: "a", Domain: "example.com", Protocol: "tcp", Ports: []uint16{22}}}}, []string{"allow[0].protocol"}},
		{"credential rule", Policy{Default: "deny", Allow: []Rule{{Name: "dav", Domain: "dav.internal", Credential: true}}}, nil},
		{"credential wildcard", Policy{Default: "deny", Allow: []Rule{{Name: "dav", Domain: "*.example.com", Credential: true}}}, []string{"allow[0].credential"}},
		{"credential cidr", Policy{Default: "deny", Allow: []Rule{{Name: "dav", CIDR: "10.0.0.1/32", Credential: true}}}, []string{"allow[0].credential"}},
		{"all problems reported", Policy{Default: "x", Allow: []Rule{{Name: "", CIDR: "nope"}, {Name: "b", CIDR: "10.0.0.1/32", Protocol: "gre"}}},
			[]string{"default:", "allow[0].name", "allow[0].cidr", "allow[1].protocol"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.pol.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want error containing %q", tc.wantErr)
			}
			if !errdefs.IsInvalidArgument(err) {
				t.Errorf("error class = %v, want invalid_argument", errdefs.Code(err))
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestAddressing(t *testing.T) {
	a, err := parseBase("")
	if err != nil {
		t.Fatal(err)
	}
	if a.capacity != 16384 {
		t.Errorf("capacity = %d, want 16384", a.capacity)
	}
	for _, tc := range []struct {
		i              int
		sub, host, nsa string
	}{
		{0, "10.200.0.0/30", "10.200.0.1", "10.200.0.2"},
		{1, "10.200.0.4/30", "10.200.0.5", "10.200.0.6"},
		{64, "10.200.1.0/30", "10.200.1.1", "10.200.1.2"},
		{16383, "10.200.255.252/30", "10.200.255.253", "10.200.255.254"},
	} {
		if got := a.subnet(tc.i).String(); got != tc.sub {
			t.Errorf("subnet(%d) = %s, want %s", tc.i, got, tc.sub)
		}
		if got := a.hostIP(tc.i).String(); got != tc.host {
			t.Errorf("hostIP(%d) = %s, want %s", tc.i, got, tc.host)
		}
		if got := a.nsIP(tc.i).String(); got != tc.nsa {
			t.Errorf("nsIP(%d) = %s, want %s", tc.i, got, tc.nsa)
		}
		if got := a.indexOf(netip.MustParseAddr(tc.nsa)); got != tc.i {
			t.Errorf("indexOf(%s) = %d, want %d", tc.nsa, got, tc.i)
		}
	}
	for _, bad := range []string{"10.200.0.1/16", "10.200.0.0/31", "fd00::/64", "172.30.0.0/16", "169.254.0.0/16", "x"} {
		if _, err := parseBase(bad); !errdefs.IsInvalidArgument(err) {
			t.Errorf("parseBase(%q) = %v, want invalid_argument", bad, err)
		}
	}
	n := namesFor("ab1")
	for name, want := range map[string]int{"alab1-0": 0, "alab1-17": 17, "alab1-01": -1, "alab1-": -1, "alab1-x": -1,
		"alab1--1": -1, "alab12-3": -1, "alab-3": -1, "eth0": -1} {
		if got := parseIndex(name, n.vethPrefix); got != want {
			t.Errorf("parseIndex(%q) = %d, want %d", name, got, want)
		}
	}
	for inst, want := range map[string]bool{"a": true, "ab1z9": true, "": false, "abcdef": false, "A": false, "a-b": false, "a_b": false} {
		if got := ValidInstance(inst); got != want {
			t.Errorf("ValidInstance(%q) = %v, want %v", inst, got, want)
		}
	}
	if a, b := InstanceFor("/var/lib/airlock"), InstanceFor("/var/lib/airlock/"); a != b || !ValidInstance(a) {
		t.Errorf("InstanceFor: %q and %q; want one valid instance for one directory", a, b)
	}
	if InstanceFor("/srv/a") == InstanceFor("/srv/b") {
		t.Errorf("InstanceFor gives two state directories the same instance")
	}
}
