//go:build linux

package netpool

// Integration tests: real namespaces, real nftables, real packets. They need
// root and skip otherwise.
//
// Layout. Production runs QEMU inside the slot namespace on tap0. No VM is
// available here, so the pool is built with GuestLink: GuestLinkVethForTests
// (tap0 is then a veth whose peer, guest0, the test moves into a "guest"
// namespace configured exactly like a guest: 172.30.0.2/30 via 172.30.0.1).
// Everything happens inside namespaces the test creates: the pool's "host"
// is a namespace (airlock-test-host) in which New runs, so the real host's
// links, routes, ip_forward and tables are untouched, and no probe can leave
// the machine. Only TestCyclesLeaveNothing uses the real host namespace, as
// production does, and it sends no traffic.
//
//	guest ns --veth-- slot ns (airlock-<inst>-sN) --veth al<inst>-N-- fake host --veth dmsh0-- dms ns
//	172.30.0.2        tap0 .1 / veth0 NsIP   HostIP      10.250.0.1   10.250.0.2 + 169.254.169.254
//
// Negative probes wait a couple of seconds; every one is paired with a
// positive probe over the same path, so a test cannot pass merely because
// something is slow or broken.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
)

const (
	dmsIP      = "10.250.0.2"
	dmsHostIP  = "10.250.0.1"
	metadataIP = "169.254.169.254"
	// closedIP is a private address in dms that no test opens
	// (Config.Guard); dmsIP's /30 is opened by newEnv.
	closedIP  = "192.168.77.2"
	hostPort  = 7070 // listener on the fake host, all addresses
	probeWait = 2 * time.Second
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and nftables tables")
	}
}

// testNetns creates /run/netns/airlock-test-<pid>-<name>, removed at
// cleanup.
func testNetns(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(netnsDir, netpooltest.NetnsName(name))
	_ = removeNetns(path) // leftover of an interrupted run
	var cu cleanup.Stack
	if err := createNetns(path, &cu); err != nil {
		t.Fatalf("create netns %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := removeNetns(path); err != nil {
			t.Errorf("remove %s: %v", path, err)
		}
	})
	return path
}

func handleAt(t *testing.T, path string) *netlink.Handle {
	t.Helper()
	ns, err := netns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func linkUp(t *testing.T, h *netlink.Handle, name, cidr string) netlink.Link {
	t.Helper()
	l, err := h.LinkByName(name)
	must(t, err, "find "+name)
	if cidr != "" {
		must(t, h.AddrAdd(l, &netlink.Addr{IPNet: ipnet(netip.MustParsePrefix(cidr))}), "address "+name)
	}
	must(t, h.LinkSetUp(l), "up "+name)
	return l
}

type env struct {
	host, dms string // namespace paths
	pool      *Pool
}

// newEnv builds the fake host, the dms server namespace with its listeners,
// and a pool living in the fake host.
// dmsOpen is the operator opening the DMS network to sandboxes' rules.
var dmsOpen = netguard.Guard{Open: []netip.Prefix{netip.MustParsePrefix(dmsIP + "/30")}}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{host: testNetns(t, "host"), dms: testNetns(t, "dms")}
	hh := handleAt(t, e.host)
	linkUp(t, hh, "lo", "")

	// dms: veth dmsh0 (fake host) <-> eth0 (dms). Not named alk*: that prefix is the pool's.
	dmsFd, err := netns.GetFromPath(e.dms)
	must(t, err, "open dms ns")
	defer dmsFd.Close()
	la := netlink.NewLinkAttrs()
	la.Name = "dmsh0"
	must(t, hh.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(dmsFd))}), "dms veth")
	linkUp(t, hh, "dmsh0", dmsHostIP+"/30")
	// A fake cloud-metadata service lives in dms; the fake host routes to it.
	must(t, hh.RouteAdd(&netlink.Route{Dst: ipnet(netip.MustParsePrefix(metadataIP + "/32")), Gw: net.ParseIP(dmsIP)}), "metadata route")
	must(t, hh.RouteAdd(&netlink.Route{Dst: ipnet(netip.MustParsePrefix(closedIP + "/32")), Gw: net.ParseIP(dmsIP)}), "closed route")
	dh := handleAt(t, e.dms)
	linkUp(t, dh, "lo", "")
	linkUp(t, dh, "eth0", dmsIP+"/30")
	l, _ := dh.LinkByName("eth0")
	must(t, dh.AddrAdd(l, &netlink.Addr{IPNet: ipnet(netip.MustParsePrefix(metadataIP + "/32"))}), "metadata address")
	must(t, dh.AddrAdd(l, &netlink.Addr{IPNet: ipnet(netip.MustParsePrefix(closedIP + "/32"))}), "closed address")
	must(t, dh.RouteAdd(&netlink.Route{Gw: net.ParseIP(dmsHostIP)}), "dms default route")

	// Listeners are created on a thread inside their namespace; the sockets
	// stay there, so serving them from ordinary goroutines is fine.
	var httpLn, echoLn, hostLn net.Listener
	var udp net.PacketConn
	must(t, inNetns(e.dms, func() (err error) {
		if httpLn, err = net.Listen("tcp4", ":8080"); err != nil {
			return err
		}
		if echoLn, err = net.Listen("tcp4", ":9090"); err != nil {
			return err
		}
		udp, err = net.ListenPacket("udp4", ":5353")
		return err
	}), "dms listeners")
	must(t, inNetns(e.host, func() (err error) {
		hostLn, err = net.Listen("tcp4", fmt.Sprintf(":%d", hostPort))
		return err
	}), "host listener")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		fmt.Fprint(w, host) // the source address the server saw
	})}
	go srv.Serve(httpLn)
	go echoServe(echoLn)
	go echoServe(hostLn)
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udp.WriteTo(buf[:n], from)
		}
	}()
	t.Cleanup(func() { srv.Close(); echoLn.Close(); hostLn.Close(); udp.Close() })

	cfg.GuestLink = GuestLinkVethForTests
	cfg.Instance = netpooltest.Instance()
	if cfg.Guard.Open == nil {
		cfg.Guard = dmsOpen
	}
	must(t, inNetns(e.host, func() (err error) {
		e.pool, err = New(cfg)
		return err
	}), "New")
	t.Cleanup(func() {
		if err := e.pool.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func echoServe(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { defer c.Close(); io.Copy(c, c) }()
	}
}

// guest moves the slot's guest0 into a new namespace and configures it as
// the VM would be configured from GuestConfig.
func (e *env) guest(t *testing.T, s *Slot) string {
	t.Helper()
	path := testNetns(t, fmt.Sprintf("g%d", s.Index))
	gc := e.pool.GuestConfig()
	sh := handleAt(t, s.NetnsPath)
	peer, err := sh.LinkByName(s.GuestPeer)
	must(t, err, "find guest peer")
	gfd, err := netns.GetFromPath(path)
	must(t, err, "open guest ns")
	defer gfd.Close()
	must(t, sh.LinkSetNsFd(peer, int(gfd)), "move guest peer")
	gh := handleAt(t, path)
	linkUp(t, gh, "lo", "")
	l, err := gh.LinkByName(s.GuestPeer)
	must(t, err, "find guest link")
	must(t, gh.LinkSetHardwareAddr(l, gc.MAC), "guest mac")
	linkUp(t, gh, s.GuestPeer, gc.Addr.String())
	must(t, gh.RouteAdd(&netlink.Route{Gw: net.IP(gc.Gateway.AsSlice())}), "guest default route")
	return path
}

func acquire(t *testing.T, p *Pool) *Slot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := p.Acquire(ctx)
	must(t, err, "Acquire")
	t.Cleanup(func() {
		if err := p.Release(s); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return s
}

func setPolicy(t *testing.T, s *Slot, pol Policy) {
	t.Helper()
	must(t, s.SetPolicy(pol), "SetPolicy")
}

// Probes. Sockets are created inside the probing namespace.

func dialIn(ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(ns, func() (err error) {
		c, err = net.DialTimeout(network, addr, probeWait)
		return err
	})
	return c, err
}

// whoami GETs http://addr/ from ns and returns the source address dms saw.
func whoami(ns, addr string) (string, error) {
	cl := &http.Client{Timeout: 2 * probeWait, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(_ context.Context, network, a string) (net.Conn, error) {
			return dialIn(ns, network, a)
		}}}
	r, err := cl.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return string(b), err
}

func tcpEcho(ns, addr string) error {
	c, err := dialIn(ns, "tcp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return echoOn(c)
}

func echoOn(c net.Conn) error {
	c.SetDeadline(time.Now().Add(probeWait))
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "ping" {
		return fmt.Errorf("echo returned %q", buf)
	}
	return nil
}

func udpEcho(ns, addr string) error {
	c, err := dialIn(ns, "udp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return echoOn(c)
}

// ping sends one ICMP echo request from ns and waits for the reply.
func ping(ns, dst string) error {
	var pc net.PacketConn
	if err := inNetns(ns, func() (err error) {
		pc, err = net.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	}); err != nil {
		return err
	}
	defer pc.Close()
	id := uint16(os.Getpid())
	msg := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), 0, 1, 'a', 'i', 'r'}
	binary.BigEndian.PutUint16(msg[2:], icmpChecksum(msg))
	target := &net.IPAddr{IP: net.ParseIP(dst)}
	if _, err := pc.WriteTo(msg, target); err != nil {
		return err
	}
	pc.SetReadDeadline(time.Now().Add(probeWait))
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		if n >= 8 && buf[0] == 0 && binary.BigEndian.Uint16(buf[4:]) == id && from.(*net.IPAddr).IP.Equal(target.IP) {
			return nil
		}
	}
}

func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

func reach(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: want reachable, got %v", what, err)
	}
}

func blocked(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: want blocked, but it got through", what)
	}
}

func dmsAddr(port int) string { return fmt.Sprintf("%s:%d", dmsIP, port) }

func TestEgressPolicy(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/16", Prewarm: 1})
	s := acquire(t, e.pool)
	dumpOnFailure(t, s)
	g := e.guest(t, s)
	hostAddr := fmt.Sprintf("%s:%d", s.HostIP, hostPort)

	// Positive controls from outside any slot: the servers are up and routable.
	reach(t, "fake host -> dms tcp", tcpEcho(e.host, dmsAddr(9090)))
	reach(t, "fake host -> metadata tcp", tcpEcho(e.host, metadataIP+":9090"))
	reach(t, "dms -> fake host listener on slot HostIP", tcpEcho(e.dms, hostAddr))

	t.Run("default deny", func(t *testing.T) {
		if got := s.Policy(); got.Default != DefaultDeny || len(got.Allow) != 0 {
			t.Errorf("fresh slot policy = %+v, want deny-all", got)
		}
		_, err := whoami(g, dmsAddr(8080))
		blocked(t, "dms http", err)
		blocked(t, "dms tcp 9090", tcpEcho(g, dmsAddr(9090)))
		blocked(t, "host veth IP", tcpEcho(g, hostAddr))
		blocked(t, "metadata", tcpEcho(g, metadataIP+":9090"))
		blocked(t, "dms udp", udpEcho(g, dmsAddr(5353)))
		blocked(t, "dms icmp", ping(g, dmsIP))
		blocked(t, "gateway icmp", ping(g, gatewayAddr.String()))
	})

	t.Run("allow dms tcp 8080 only", func(t *testing.T) {
		setPolicy(t, s, Policy{Default: DefaultDeny, Allow: []Rule{
			{Name: "dms-http", CIDR: dmsIP + "/32", Protocol: ProtoTCP, Ports: []uint16{8080}}}})
		src, err := whoami(g, dmsAddr(8080))
		reach(t, "dms http", err)
		if err == nil && src != s.NsIP.String() {
			t.Errorf("dms saw source %q, want the slot's NsIP %s (masquerade)", src, s.NsIP)
		}
		blocked(t, "dms tcp 9090", tcpEcho(g, dmsAddr(9090)))
		blocked(t, "dms udp", udpEcho(g, dmsAddr(5353)))
		blocked(t, "dms icmp", ping(g, dmsIP))
		blocked(t, "host veth IP", tcpEcho(g, hostAddr))
	})

	t.Run("udp and icmp rules", func(t *testing.T) {
		setPolicy(t, s, Policy{Default: DefaultDeny, Allow: []Rule{
			{Name: "dns-ish", CIDR: dmsIP, Protocol: ProtoUDP, Ports: []uint16{5353}},
			{Name: "ping", CIDR: "10.250.0.0/30", Protocol: ProtoICMP}}})
		reach(t, "dms udp", udpEcho(g, dmsAddr(5353)))
		reach(t, "dms icmp", ping(g, dmsIP))
		blocked(t, "dms tcp 9090", tcpEcho(g, dmsAddr(9090)))
	})

	t.Run("runtime toggle cuts live flows", func(t *testing.T) {
		allow := Policy{Default: DefaultDeny, Allow: []Rule{{Name: "echo", CIDR: dmsIP + "/32", Protocol: ProtoTCP, Ports: []uint16{9090}}}}
		setPolicy(t, s, allow)
		c, err := dialIn(g, "tcp4", dmsAddr(9090))
		must(t, err, "dial under allow")
		defer c.Close()
		reach(t, "live conn under allow", echoOn(c))
		setPolicy(t, s, DenyAll())
		blocked(t, "new conn after deny", tcpEcho(g, dmsAddr(9090)))
		blocked(t, "live conn after deny", echoOn(c))
		setPolicy(t, s, allow)
		reach(t, "new conn after re-allow", tcpEcho(g, dmsAddr(9090)))
	})

	t.Run("no rule opens the host or a closed private range", func(t *testing.T) {
		for _, r := range []Rule{
			{Name: "host-svc", CIDR: s.HostIP.String(), Protocol: ProtoTCP, Ports: []uint16{hostPort}},
			{Name: "lan", CIDR: closedIP + "/32", Protocol: ProtoTCP, Ports: []uint16{9090}},
			{Name: "loopback", CIDR: "127.0.0.1"},
		} {
			err := s.SetPolicy(Policy{Default: DefaultDeny, Allow: []Rule{r}})
			if errdefs.Class(err) != errdefs.ErrInvalidArgument {
				t.Errorf("rule %s (%s): %v, want invalid_argument", r.Name, r.CIDR, err)
			}
		}
		blocked(t, "host veth IP", tcpEcho(g, hostAddr))
		// A wide rule reaches the opened DMS network, never the closed one.
		setPolicy(t, s, Policy{Default: DefaultDeny, Allow: []Rule{{Name: "any-9090", CIDR: "0.0.0.0/0", Protocol: ProtoTCP, Ports: []uint16{9090}}}})
		reach(t, "opened dms under a wide rule", tcpEcho(g, dmsAddr(9090)))
		blocked(t, "closed private address under a wide rule", tcpEcho(g, closedIP+":9090"))
	})

	t.Run("default allow keeps protected destinations closed", func(t *testing.T) {
		setPolicy(t, s, Policy{Default: DefaultAllow, Allow: []Rule{{Name: "everything", CIDR: "0.0.0.0/0"}}})
		reach(t, "dms tcp 9090", tcpEcho(g, dmsAddr(9090)))
		reach(t, "dms icmp", ping(g, dmsIP))
		blocked(t, "metadata", tcpEcho(g, metadataIP+":9090"))
		blocked(t, "host veth IP", tcpEcho(g, hostAddr))
		blocked(t, "host other address", tcpEcho(g, fmt.Sprintf("%s:%d", dmsHostIP, hostPort)))
		blocked(t, "closed private address", tcpEcho(g, closedIP+":9090"))
		if n := counterValue(t, s.NetnsPath, "special-192.168.0.0/16"); n == 0 {
			t.Errorf("the private-use drop counter = 0, want > 0")
		}
		// The namespace's metadata drop counted the attempt (proves which layer stopped it).
		if n := counterValue(t, s.NetnsPath, "deny-metadata"); n == 0 {
			t.Errorf("deny-metadata counter = 0, want > 0")
		}
	})

	t.Run("another slot is unreachable", func(t *testing.T) {
		other := acquire(t, e.pool)
		og := e.guest(t, other)
		if other.Subnet == s.Subnet {
			t.Fatalf("two slots share %s", s.Subnet)
		}
		setPolicy(t, other, Policy{Default: DefaultAllow})
		reach(t, "other slot -> dms (control)", tcpEcho(og, dmsAddr(9090)))
		setPolicy(t, s, Policy{Default: DefaultAllow})
		blocked(t, "other slot HostIP", tcpEcho(g, fmt.Sprintf("%s:%d", other.HostIP, hostPort)))
		blocked(t, "other slot NsIP icmp", ping(g, other.NsIP.String()))
		// A rule naming the other slot's /30 is refused outright.
		if err := s.SetPolicy(Policy{Default: DefaultDeny, Allow: []Rule{{Name: "neighbour", CIDR: other.Subnet.String()}}}); errdefs.Class(err) != errdefs.ErrInvalidArgument {
			t.Errorf("a rule naming another slot: %v, want invalid_argument", err)
		}
		blocked(t, "other slot NsIP icmp", ping(g, other.NsIP.String()))
	})
}

// counterValue reads the packet counter of the rule commented name in the
// slot namespace's forward chain.
func counterValue(t *testing.T, nsPath, name string) uint64 {
	t.Helper()
	f, err := os.Open(nsPath)
	must(t, err, "open ns")
	defer f.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	must(t, err, "nft conn")
	tbl := &nftables.Table{Name: tableName, Family: nftables.TableFamilyINet}
	rules, err := c.GetRules(tbl, &nftables.Chain{Name: "forward", Table: tbl})
	must(t, err, "list rules")
	for _, r := range rules {
		if got, _ := userdata.GetString(r.UserData, userdata.TypeComment); got == name {
			for _, x := range r.Exprs {
				if ctr, ok := x.(*expr.Counter); ok {
					return ctr.Packets
				}
			}
		}
	}
	t.Fatalf("no rule %q with a counter", name)
	return 0
}

func TestDomainRulesNeedProxy(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24"})
	s := acquire(t, e.pool)
	err := s.SetPolicy(Policy{Default: DefaultDeny, Allow: []Rule{{Name: "llm", Domain: "api.example.com"}}})
	if !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("domain rule without proxy: got %v, want failed_precondition", err)
	}
	if got := s.Policy(); got.Default != DefaultDeny || len(got.Allow) != 0 {
		t.Errorf("failed SetPolicy changed the recorded policy to %+v", got)
	}
}

func TestDomainRulesReachProxyOnly(t *testing.T) {
	requireRoot(t)
	// The dms namespace plays the proxy here.
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24", ProxyAddr: dmsIP})
	if gc := e.pool.GuestConfig(); gc.DNS != gatewayAddr {
		t.Errorf("GuestConfig().DNS = %v, want the gateway %s (rewritten to the proxy)", gc.DNS, gatewayAddr)
	}
	s := acquire(t, e.pool)
	g := e.guest(t, s)
	// Nothing listens on 53; a UDP send succeeding proves nothing, so use
	// ICMP port-unreachable (a related reply) as the signal: a dropped
	// packet times out instead.
	udp53 := func(addr string) error {
		c, err := dialIn(g, "udp4", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(probeWait))
		c.Write([]byte("q"))
		_, err = c.Read(make([]byte, 1))
		if errors.Is(err, unix.ECONNREFUSED) {
			return nil
		}
		return fmt.Errorf("no port-unreachable: %v", err)
	}
	gwDNS := net.JoinHostPort(gatewayAddr.String(), "53")
	blocked(t, "dns via gateway under deny-all", udp53(gwDNS))
	setPolicy(t, s, Policy{Default: DefaultDeny, Allow: []Rule{{Name: "llm", Domain: "api.example.com"}}})
	reach(t, "proxy udp 53", udp53(dmsAddr(53)))
	reach(t, "dns via gateway, rewritten to the proxy", udp53(gwDNS))
	blocked(t, "proxy tcp 9090", tcpEcho(g, dmsAddr(9090)))
	blocked(t, "proxy udp 5353", udpEcho(g, dmsAddr(5353)))
}

func TestUplinkMasquerade(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24", Uplinks: []string{"dmsh0"}})
	s := acquire(t, e.pool)
	g := e.guest(t, s)
	setPolicy(t, s, Policy{Default: DefaultDeny, Allow: []Rule{{Name: "dms", CIDR: dmsIP, Protocol: ProtoTCP, Ports: []uint16{8080}}}})
	src, err := whoami(g, dmsAddr(8080))
	reach(t, "dms via uplink", err)
	if err == nil && src != dmsHostIP {
		t.Errorf("dms saw %q, want the host's uplink address %s", src, dmsHostIP)
	}
}

func TestFailedAcquireLeavesNothing(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24"})
	// Occupy slot 0's host veth name in the fake host after New, so building
	// slot 0 fails at the veth step, after its namespace and table exist.
	hh := handleAt(t, e.host)
	veth0 := e.pool.names.veth(0)
	la := netlink.NewLinkAttrs()
	la.Name = veth0
	must(t, hh.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "conflict0"}), "conflicting "+veth0)
	_, err := e.pool.Acquire(context.Background())
	if !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("Acquire with %s taken: got %v, want already_exists", veth0, err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, e.pool.netnsName(0))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Acquire left %s behind (stat: %v)", e.pool.netnsName(0), err)
	}
	if _, err := hh.LinkByName(veth0); err != nil {
		t.Errorf("rollback deleted a link it did not create: %v", err)
	}
	// The pool moves on to another index and works.
	s := acquire(t, e.pool)
	if s.Index == 0 {
		t.Errorf("pool reused conflicting index 0")
	}
	// Recover deletes the conflicting orphan name and frees index 0.
	if _, err := e.pool.Recover(context.Background(), nil); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if _, err := hh.LinkByName(veth0); err == nil {
		t.Errorf("Recover left orphan %s", veth0)
	}
}

func TestRecover(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24", Prewarm: 1})
	old := e.pool
	var slots []*Slot
	for range 3 {
		s, err := old.Acquire(context.Background())
		must(t, err, "Acquire")
		slots = append(slots, s)
	}
	waitReady(t, old, 1)
	keep := slots[1]
	// Simulate a crash: the old pool stops without tearing anything down.
	old.cancel()
	<-old.done

	var p *Pool
	must(t, inNetns(e.host, func() (err error) {
		p, err = New(Config{BaseCIDR: "10.200.0.0/24", GuestLink: GuestLinkVethForTests, Instance: netpooltest.Instance(), Guard: dmsOpen})
		return err
	}), "New after crash")
	defer func() { must(t, p.Close(), "Close") }()
	// Until Recover runs, nothing left behind is handed out again.
	fresh, err := p.Acquire(context.Background())
	must(t, err, "Acquire before Recover")
	for _, s := range slots {
		if fresh.Index == s.Index {
			t.Errorf("Acquire before Recover reused index %d", s.Index)
		}
	}
	must(t, p.Release(fresh), "Release")

	adopted, err := p.Recover(context.Background(), map[int]bool{keep.Index: true, 200: true})
	must(t, err, "Recover")
	if len(adopted) != 1 || adopted[0].Index != keep.Index {
		t.Fatalf("adopted %v, want only slot %d", adopted, keep.Index)
	}
	ns, links, err := p.scan()
	must(t, err, "scan")
	if len(ns) != 1 || !ns[keep.Index] || len(links) != 1 || !links[keep.Index] {
		t.Errorf("after Recover: netns %v, links %v; want only slot %d", ns, links, keep.Index)
	}
	// The adopted slot is fully usable.
	a := adopted[0]
	if a.HostIP != keep.HostIP || a.NetnsPath != keep.NetnsPath {
		t.Errorf("adopted slot %+v does not match original %+v", a, keep)
	}
	g := e.guest(t, a)
	setPolicy(t, a, Policy{Default: DefaultDeny, Allow: []Rule{{Name: "dms", CIDR: dmsIP, Protocol: ProtoTCP, Ports: []uint16{9090}}}})
	reach(t, "adopted slot -> dms", tcpEcho(g, dmsAddr(9090)))
	// Freed indices are handed out again without collisions.
	for range 4 {
		s, err := p.Acquire(context.Background())
		must(t, err, "Acquire after Recover")
		if s.Index == keep.Index {
			t.Errorf("Acquire returned the adopted index %d", s.Index)
		}
		must(t, p.Release(s), "Release")
	}
	must(t, p.Release(a), "Release adopted")
	must(t, p.Release(a), "Release adopted twice")
}

func waitReady(t *testing.T, p *Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for p.Stats().Ready < n {
		if time.Now().After(deadline) {
			t.Fatalf("prewarm never reached %d ready slots", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCyclesLeaveNothing runs in the real host namespace, as production does.
func TestCyclesLeaveNothing(t *testing.T) {
	requireRoot(t)
	// ip_forward is left on: a daemon on this host may rely on it (netpool
	// never turns it off either).
	const n = 200
	p, err := New(Config{BaseCIDR: netpooltest.FreeBase(t, 16), MaxSlots: 64, Prewarm: 2, Instance: netpooltest.Instance()})
	must(t, err, "New")
	closed := false
	defer func() {
		if !closed {
			p.Close()
		}
	}()
	if !hostTableExists(t, p) {
		t.Fatalf("New did not install host table %q", p.names.hostTable)
	}

	waitReady(t, p, 2)
	var warm time.Duration
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		s, err := p.Acquire(ctx)
		if err != nil {
			t.Fatalf("cycle %d: Acquire: %v", i, err)
		}
		warm += time.Since(t0)
		if err := p.Release(s); err != nil {
			t.Fatalf("cycle %d: Release: %v", i, err)
		}
		if err := p.Release(s); err != nil {
			t.Fatalf("cycle %d: second Release: %v", i, err)
		}
	}
	loop := time.Since(start)
	t.Logf("%d Acquire/Release cycles (Prewarm 2) in %v, mean Acquire %v", n, loop, warm/n)

	// Compare a guaranteed-prewarmed Acquire with a guaranteed-cold one.
	waitReady(t, p, 2)
	t0 := time.Now()
	s1, err := p.Acquire(ctx)
	must(t, err, "warm Acquire")
	warmOne := time.Since(t0)
	s2, err := p.Acquire(ctx)
	must(t, err, "warm Acquire 2")
	t0 = time.Now()
	s3, err := p.Acquire(ctx) // ready list is empty now (refill is in flight at best)
	must(t, err, "Acquire 3")
	third := time.Since(t0)
	t.Logf("Acquire from prewarm: %v; next Acquire with ready list drained: %v", warmOne, third)
	for _, s := range []*Slot{s1, s2, s3} {
		must(t, p.Release(s), "Release")
	}

	must(t, p.Close(), "Close")
	closed = true
	if ns, links, err := p.scan(); err != nil || len(ns)+len(links) != 0 {
		t.Errorf("after Close: netns %v, links %v (err %v); want none", ns, links, err)
	}
	if hostTableExists(t, p) {
		t.Errorf("host table %q left after Close", p.names.hostTable)
	}
	if _, err := p.Acquire(ctx); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("Acquire after Close: %v, want failed_precondition", err)
	}
}

func TestColdAcquire(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24"})
	var total time.Duration
	const n = 10
	for range n {
		t0 := time.Now()
		s, err := e.pool.Acquire(context.Background())
		must(t, err, "Acquire")
		total += time.Since(t0)
		must(t, e.pool.Release(s), "Release")
	}
	t.Logf("cold Acquire (Prewarm 0): mean %v over %d", total/n, n)
}

func hostTableExists(t *testing.T, p *Pool) bool {
	t.Helper()
	c, err := nftables.New()
	must(t, err, "nft conn")
	tables, err := c.ListTables()
	must(t, err, "list tables")
	for _, tb := range tables {
		if tb.Name == p.names.hostTable {
			return true
		}
	}
	return false
}

func TestNewRejectsBadConfig(t *testing.T) {
	inst := netpooltest.Instance()
	for _, cfg := range []Config{
		{BaseCIDR: "10.200.0.1/16", Instance: inst},
		{MaxSlots: -1, Instance: inst},
		{BaseCIDR: "10.200.0.0/30", MaxSlots: 2, Instance: inst},
		{Prewarm: -1, Instance: inst},
		{GuestLink: "bridge", Instance: inst},
		{ProxyAddr: "10.200.3.3", Instance: inst},
		{ProxyAddr: "169.254.169.254", Instance: inst},
		{ProxyAddr: "nope", Instance: inst},
		{Uplinks: []string{"al" + inst + "-3"}, Instance: inst},
		{},
		{Instance: "toolong"},
		{Instance: "Bad"},
		{Instance: "a-b"},
	} {
		if _, err := New(cfg); !errdefs.IsInvalidArgument(err) {
			t.Errorf("New(%+v) = %v, want invalid_argument", cfg, err)
		}
	}
}

// dumpOnFailure logs the namespace's ruleset if the test fails (inspection
// only; the package itself never runs nft).
func dumpOnFailure(t *testing.T, s *Slot) {
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("NETPOOL_DUMP") != "" {
			out, _ := exec.Command("ip", "netns", "exec", s.NetnsName, "nft", "list", "ruleset").CombinedOutput()
			t.Logf("ruleset of %s:\n%s", s.NetnsName, out)
		}
	})
}

// TestRecoverNeverReusesAdopted: an adopted slot above every index handed
// out so far must not come back from Acquire (it used to: Recover took it
// off the reserved list, and fresh indices skipped only reserved ones).
func TestRecoverNeverReusesAdopted(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, Config{BaseCIDR: "10.200.0.0/24"})
	old := e.pool
	var top *Slot
	for range 3 {
		top = acquire(t, old)
	}
	old.cancel() // crash: nothing torn down
	<-old.done

	var p *Pool
	must(t, inNetns(e.host, func() (err error) {
		p, err = New(Config{BaseCIDR: "10.200.0.0/24", GuestLink: GuestLinkVethForTests, Instance: netpooltest.Instance(), Guard: dmsOpen})
		return err
	}), "New after crash")
	defer func() { must(t, p.Close(), "Close") }()
	adopted, err := p.Recover(context.Background(), map[int]bool{top.Index: true})
	must(t, err, "Recover")
	if len(adopted) != 1 {
		t.Fatalf("adopted %d slots, want 1", len(adopted))
	}
	for range 4 {
		s, err := p.Acquire(context.Background())
		must(t, err, "Acquire after Recover")
		defer func() { must(t, p.Release(s), "Release") }()
		if s.Index == top.Index {
			t.Fatalf("Acquire handed out adopted slot %d again", s.Index)
		}
	}
	must(t, p.Release(adopted[0]), "Release adopted")
}
