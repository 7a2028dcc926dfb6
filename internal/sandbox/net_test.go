//go:build linux

package sandbox_test

// Network isolation, end to end: real VMs, real namespaces, real nftables,
// the real egress proxy. Nothing leaves namespaces the test creates:
//
//	guest --tap0-- slot ns (airlock-<inst>-sN) --veth al<inst>-N-- fake host ns --veth dmsh0-- dms ns
//	172.30.0.2     NsIP 10.253.0.x              HostIP     10.251.0.1      10.251.0.2 (+169.254.169.254)
//	                                            proxy 10.252.0.1 (lo), llm upstream 127.0.0.1:8443
//
// QEMU runs in the test's own (the real host's) namespace; only its tap
// descriptor belongs to the slot, as in production. The pool's "host" is a
// namespace the test creates, so the real host's links, tables and
// ip_forward are untouched; the pool's base range, proxy address and
// namespace prefix differ from a daemon's defaults, so a daemon running on
// the same machine is not disturbed either.
//
// Every negative check is paired with a positive one over the same path,
// so a test cannot pass merely because the network is broken.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netguard"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

const (
	ntBase    = "10.253.0.0/24"
	ntProxy   = "10.252.0.1"
	ntDMS     = "10.251.0.2"
	ntDMSHost = "10.251.0.1"
	// ntPublicProbe is the self-check's public address (probeSpecs).
	ntPublicProbe = "1.1.1.1"
	ntMetadata    = "169.254.169.254"
	ntDMSName     = "dms.test"
	ntLLMHost     = "llm.internal"
	ntLLMPort     = 8443
	ntSecret      = "sk-airlock-test-7d41c0ffee" // must reach the upstream and nothing else
	ntTenant      = "acme"
	netnsRunDir   = "/run/netns"
)

// inNS runs fn on a thread inside the named namespace at path.
func inNS(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		target, err := netns.GetFromPath(path)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			errc <- err
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, err)
			return // thread stays locked and dies
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// newNamedNS creates /run/netns/airlock-test-<pid>-<name>, removed at
// cleanup.
func newNamedNS(t testing.TB, name string) string {
	t.Helper()
	name = netpooltest.NetnsName(name)
	_ = netns.DeleteNamed(name) // leftover of an interrupted run
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		ns, err := netns.NewNamed(name)
		if err == nil {
			ns.Close()
		}
		if serr := netns.Set(orig); serr != nil {
			errc <- errors.Join(err, serr)
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatalf("create netns %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	return filepath.Join(netnsRunDir, name)
}

func nsHandle(t testing.TB, path string) *netlink.Handle {
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

func ok(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func ipn(s string) *net.IPNet {
	p := netip.MustParsePrefix(s)
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func up(t testing.TB, h *netlink.Handle, name string, cidrs ...string) {
	t.Helper()
	l, err := h.LinkByName(name)
	ok(t, err, "find "+name)
	for _, c := range cidrs {
		ok(t, h.AddrAdd(l, &netlink.Addr{IPNet: ipn(c)}), "address "+name)
	}
	ok(t, h.LinkSetUp(l), "up "+name)
}

// netEnv is the fake host, the DMS, the pool, the proxy and a Manager.
type netEnv struct {
	host, dms string // namespace paths
	pool      *netpool.Pool
	proxy     *egress.Proxy
	m         *sandbox.Manager
	st        *store.Store

	mu       sync.Mutex
	llmAuth  []string // Authorization headers the llm upstream saw; guarded by mu
	llmPaths []string // guarded by mu

	// The DMS's /hold answers one line and keeps the response open until
	// the client goes away: held gets a value when one opens, released
	// when one ends.
	held, released chan string
}

func newNetEnv(t testing.TB, warmPool int) *netEnv {
	t.Helper()
	vmtest.RequireVMs(t)
	e := &netEnv{host: newNamedNS(t, "host"), dms: newNamedNS(t, "dms"),
		held: make(chan string, 8), released: make(chan string, 8)}
	hh := nsHandle(t, e.host)
	up(t, hh, "lo", ntProxy+"/32") // the proxy's address; 127.0.0.1 serves the llm upstream

	dmsNS, err := netns.GetFromPath(e.dms)
	ok(t, err, "open dms ns")
	defer dmsNS.Close()
	la := netlink.NewLinkAttrs()
	la.Name = "dmsh0"
	ok(t, hh.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(dmsNS))}), "dms veth")
	up(t, hh, "dmsh0", ntDMSHost+"/30")
	ok(t, hh.RouteAdd(&netlink.Route{Dst: ipn(ntMetadata + "/32"), Gw: net.ParseIP(ntDMS)}), "metadata route")
	// The self-check's public target lives in dms too (nothing listens on
	// it: a refusal proves the path is open).
	ok(t, hh.RouteAdd(&netlink.Route{Dst: ipn(ntPublicProbe + "/32"), Gw: net.ParseIP(ntDMS)}), "public probe route")
	dh := nsHandle(t, e.dms)
	up(t, dh, "lo")
	up(t, dh, "eth0", ntDMS+"/30", ntMetadata+"/32", ntPublicProbe+"/32")
	ok(t, dh.RouteAdd(&netlink.Route{Gw: net.ParseIP(ntDMSHost)}), "dms default route")

	// The DMS: HTTP on 80 (answers "dms-ok <source address>"), UDP echo on
	// 5353, and a fake metadata service (HTTP on 169.254.169.254:80 is the
	// same listener). Listeners are made inside the namespace.
	var httpLn net.Listener
	var udp net.PacketConn
	ok(t, inNS(e.dms, func() (err error) {
		if httpLn, err = net.Listen("tcp4", ":80"); err != nil {
			return err
		}
		udp, err = net.ListenPacket("udp4", ":5353")
		return err
	}), "dms listeners")
	dmsSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if r.URL.Path == "/hold" {
			fmt.Fprintf(w, "held %s\n", host)
			w.(http.Flusher).Flush()
			e.held <- r.URL.RawQuery
			select {
			case <-r.Context().Done():
				e.released <- r.URL.RawQuery
			case <-time.After(2 * time.Minute):
			}
			return
		}
		fmt.Fprintf(w, "dms-ok %s\n", host)
	})}
	go dmsSrv.Serve(httpLn)
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
	t.Cleanup(func() { dmsSrv.Close(); udp.Close() })

	// The credential route's upstream: HTTPS on the fake host's loopback.
	var llmLn net.Listener
	ok(t, inNS(e.host, func() (err error) {
		llmLn, err = net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", ntLLMPort))
		return err
	}), "llm listener")
	llm := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.llmAuth = append(e.llmAuth, r.Header.Get("Authorization"))
		e.llmPaths = append(e.llmPaths, r.URL.Path)
		e.mu.Unlock()
		fmt.Fprintln(w, "llm-ok")
	}))
	llm.Listener.Close()
	llm.Listener = llmLn
	llm.StartTLS()
	t.Cleanup(llm.Close)
	roots := x509.NewCertPool()
	roots.AddCert(llm.Certificate())

	// The pool lives in the fake host: New runs on a thread inside it.
	ok(t, inNS(e.host, func() (err error) {
		e.pool, err = netpool.New(netpool.Config{BaseCIDR: ntBase, ProxyAddr: ntProxy, Instance: netpooltest.Instance(),
			Prewarm: 1, Guard: netguard.Guard{Open: []netip.Prefix{netip.MustParsePrefix(ntDMS + "/30")}},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		return err
	}), "netpool.New")
	t.Cleanup(func() {
		if err := e.pool.Close(); err != nil {
			t.Errorf("pool close: %v", err)
		}
		assertNoSlotsLeft(t, e.host)
	})

	// The proxy: listens in the fake host, dials from it, resolves the
	// test names itself. The DMS and the llm upstream live on private and
	// loopback addresses, which the proxy refuses by default; the test
	// allows exactly those two.
	var m *sandbox.Manager
	var mReady sync.WaitGroup
	mReady.Add(1)
	names := map[string]netip.Addr{ntDMSName: netip.MustParseAddr(ntDMS), "example.com": netip.MustParseAddr("127.0.0.1")}
	e.proxy, err = egress.New(egress.Config{
		ListenAddr: netip.MustParseAddr(ntProxy),
		Lookup: func(src netip.Addr) (egress.Sandbox, bool) {
			mReady.Wait()
			return m.EgressLookup(src)
		},
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if a, found := names[host]; found {
				return []netip.Addr{a}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = inNS(e.host, func() error {
				c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
		AllowUpstream: func(a netip.Addr) bool {
			return a == netip.MustParseAddr(ntDMS) || a == netip.MustParseAddr("127.0.0.1")
		},
		Internal:    []netip.Prefix{netip.MustParsePrefix(ntBase)},
		UpstreamTLS: &tls.Config{RootCAs: roots},
		Audit: func(ev egress.Event) {
			mReady.Wait()
			m.AuditEgress(ev)
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	ok(t, err, "egress.New")
	ok(t, inNS(e.host, func() error { return e.proxy.Start(context.Background()) }), "proxy start")
	t.Cleanup(e.proxy.Close)

	m, e.st = newManager(t, sandbox.Config{Net: e.pool, WarmPool: warmPool, Credentials: map[string][]egress.CredentialRoute{
		ntTenant: {{Name: "llm", Host: ntLLMHost, Upstream: fmt.Sprintf("https://example.com:%d/v1", ntLLMPort),
			Header: "Authorization", Value: "Bearer " + ntSecret}},
	}})
	m.SetEgressEnforcer(e.proxy)
	e.m = m
	mReady.Done()
	return e
}

// assertNoSlotsLeft checks that nothing of the pool's survives: no slot
// namespace and no host link of the test's instance in the fake host.
func assertNoSlotsLeft(t testing.TB, host string) {
	t.Helper()
	inst := netpooltest.Instance()
	ents, _ := os.ReadDir(netnsRunDir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "airlock-"+inst+"-s") {
			t.Errorf("slot namespace %s left behind", e.Name())
		}
	}
	h := nsHandle(t, host)
	links, err := h.LinkList()
	ok(t, err, "list links")
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, "al"+inst+"-") {
			t.Errorf("host link %s left behind", l.Attrs().Name)
		}
	}
}

func (e *netEnv) create(t *testing.T, pol *netpool.Policy) sandbox.Info {
	t.Helper()
	info, err := e.m.Create(vmtest.Context(t), sandbox.CreateRequest{Tenant: ntTenant, Template: vmtest.TemplateName, Egress: pol})
	ok(t, err, "create")
	if info.NetAddr == "" {
		t.Fatalf("sandbox %s has no network address", info.ID)
	}
	return info
}

// run executes a shell script in the guest and returns stdout and the
// exit code.
func (e *netEnv) run(t *testing.T, id, script string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := e.m.Exec(vmtest.Context(t), ntTenant, id, guest.ExecOptions{Shell: script, Timeout: 2 * time.Minute}, &out, &errb)
	ok(t, err, "exec")
	return out.String() + errb.String(), res.ExitCode
}

// checks runs named reachability checks in parallel inside the guest (one
// exec: each negative check costs its timeout, so serially they would add
// up) and returns, per name, whether it got through and what it printed.
type check struct{ name, script string }

func (e *netEnv) checks(t *testing.T, id string, cs []check) map[string]string {
	t.Helper()
	var sh strings.Builder
	sh.WriteString("d=$(mktemp -d)\n")
	for i, c := range cs {
		fmt.Fprintf(&sh, "( %s ) >$d/%d.out 2>&1; echo $? >$d/%d.rc &\n", c.script, i, i)
	}
	sh.WriteString("wait\n")
	for i := range cs {
		fmt.Fprintf(&sh, "echo \"@@%d $(cat $d/%d.rc) $(head -c 300 $d/%d.out | tr '\\n' ' ')\"\n", i, i, i)
	}
	out, code := e.run(t, id, sh.String())
	if code != 0 {
		t.Fatalf("checks in %s: exit %d: %s", id, code, out)
	}
	res := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "@@") {
			continue
		}
		var i int
		var rest string
		if n, _ := fmt.Sscanf(line, "@@%d", &i); n != 1 || i < 0 || i >= len(cs) {
			continue
		}
		rest = strings.TrimSpace(strings.SplitN(line, " ", 2)[1])
		res[cs[i].name] = rest // "<rc> <output>"
	}
	return res
}

func passed(r string) bool { return strings.HasPrefix(r, "0 ") || r == "0" }

// Guest-side probes built from bash and coreutils only (test-tiny has no
// curl, ping or python).
func httpGet(hostOrIP, hostHeader, path string) string {
	return fmt.Sprintf(`timeout 5 bash -c 'exec 3<>/dev/tcp/%s/80 && printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" >&3 && cat <&3'`, hostOrIP, path, hostHeader)
}
func tcpTo(ip string, port int) string {
	return fmt.Sprintf(`timeout 3 bash -c '</dev/tcp/%s/%d'`, ip, port)
}
func udpEcho(ip string, port int) string {
	return fmt.Sprintf(`timeout 3 bash -c 'exec 3<>/dev/udp/%s/%d; echo ping >&3; head -c 4 <&3 | grep -q ping'`, ip, port)
}

func hostIPOf(t *testing.T, info sandbox.Info) string {
	a, err := netip.ParseAddr(info.NetAddr)
	ok(t, err, "net addr")
	return a.Prev().String()
}

func expect(t *testing.T, res map[string]string, name string, want bool) {
	t.Helper()
	got, present := res[name]
	if !present {
		t.Errorf("%s: no result", name)
		return
	}
	if passed(got) != want {
		verb := map[bool]string{true: "reachable", false: "blocked"}[want]
		t.Errorf("%s: want %s, got %q", name, verb, got)
	}
}

func TestNetIsolation(t *testing.T) {
	e := newNetEnv(t, 1)
	ctx := vmtest.Context(t)
	dmsRule := netpool.Rule{Name: "dms-http", CIDR: ntDMS, Protocol: netpool.ProtoTCP, Ports: []uint16{80}}
	udpRule := netpool.Rule{Name: "dms-udp", CIDR: ntDMS, Protocol: netpool.ProtoUDP, Ports: []uint16{5353}}
	a := e.create(t, &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{dmsRule, udpRule}})
	b := e.create(t, nil) // deny-all

	t.Run("CIDRRuleReachesDMS", func(t *testing.T) {
		res := e.checks(t, a.ID, []check{
			{"http", httpGet(ntDMS, ntDMS, "/")},
			{"udp", udpEcho(ntDMS, 5353)},
			{"other-port", tcpTo(ntDMS, 8080)},
			{"metadata", httpGet(ntMetadata, ntMetadata, "/")},
		})
		expect(t, res, "http", true)
		if !strings.Contains(res["http"], "dms-ok "+a.NetAddr) {
			t.Errorf("DMS answer %q; want it to see the slot address %s", res["http"], a.NetAddr)
		}
		expect(t, res, "udp", true)
		expect(t, res, "other-port", false)
		expect(t, res, "metadata", false)
	})

	t.Run("DefaultDenyBlocksEverything", func(t *testing.T) {
		res := e.checks(t, b.ID, []check{
			{"dms-tcp", httpGet(ntDMS, ntDMS, "/")},
			{"dms-udp", udpEcho(ntDMS, 5353)},
			{"host-tcp", tcpTo(hostIPOf(t, b), 22)},
			{"host-dns-udp", udpEcho(hostIPOf(t, b), 53)},
			{"host-dns-tcp", tcpTo(hostIPOf(t, b), 53)},
			{"gateway-tcp", tcpTo("172.30.0.1", 22)},
			{"gateway-dns", "timeout 4 getent hosts " + ntDMSName},
			{"proxy-http", tcpTo(ntProxy, 80)},
			{"other-sandbox", tcpTo(a.NetAddr, 22)},
			{"metadata", httpGet(ntMetadata, ntMetadata, "/")},
		})
		for _, c := range []string{"dms-tcp", "dms-udp", "host-tcp", "host-dns-udp", "host-dns-tcp", "gateway-tcp",
			"gateway-dns", "proxy-http", "other-sandbox", "metadata"} {
			expect(t, res, c, false)
		}
		// Even a refusal must not come back: deny drops silently.
		for k, v := range res {
			if strings.Contains(v, "refused") {
				t.Errorf("%s: got a refusal back (%q): packets left the sandbox", k, v)
			}
		}
	})

	t.Run("SetEgressAtRunTime", func(t *testing.T) {
		_, err := e.m.SetEgress(ctx, ntTenant, b.ID, netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{dmsRule}})
		ok(t, err, "open")
		res := e.checks(t, b.ID, []check{{"http", httpGet(ntDMS, ntDMS, "/")}})
		expect(t, res, "http", true)
		// A connection open when the allow is revoked is cut too.
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.DenyAll())
		ok(t, err, "close")
		res = e.checks(t, b.ID, []check{{"http", httpGet(ntDMS, ntDMS, "/")}})
		expect(t, res, "http", false)
		info, err := e.m.Get(ctx, ntTenant, b.ID)
		ok(t, err, "get")
		if len(info.Egress.Allow) != 0 {
			t.Errorf("inspect after revoke shows %v", info.Egress)
		}
		recs := auditOf(t, e, b.ID, "egress_change")
		if len(recs) != 2 || recs[0].Detail["allow"] != "dms-http" || recs[1].Detail["allow"] != "" {
			t.Errorf("egress_change audit records: %+v", recs)
		}
	})

	t.Run("DomainRuleThroughProxy", func(t *testing.T) {
		c := e.create(t, &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "dms-name", Domain: ntDMSName}}})
		res := e.checks(t, c.ID, []check{
			{"by-name", httpGet(ntDMSName, ntDMSName, "/doc")},
			{"resolve", "getent hosts " + ntDMSName},
			{"other-name-dns", "timeout 4 getent hosts other.test"},
			{"other-name-http", httpGet(ntDMSName, "other.test", "/")},
			{"dms-ip-direct", tcpTo(ntDMS, 80)},
		})
		expect(t, res, "by-name", true)
		if !strings.Contains(res["by-name"], "dms-ok") {
			t.Errorf("by name: %q", res["by-name"])
		}
		if !strings.Contains(res["resolve"], ntProxy) {
			t.Errorf("%s resolves to %q; want the proxy %s", ntDMSName, res["resolve"], ntProxy)
		}
		expect(t, res, "other-name-dns", false)
		if !strings.Contains(res["other-name-http"], "403") {
			t.Errorf("another Host through the proxy: %q, want 403", res["other-name-http"])
		}
		expect(t, res, "dms-ip-direct", false)
		ok(t, e.m.Kill(ctx, ntTenant, c.ID), "kill")
	})

	t.Run("CredentialRoute", func(t *testing.T) {
		c := e.create(t, &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "llm", Domain: ntLLMHost}}})
		res := e.checks(t, c.ID, []check{{"llm", httpGet(ntLLMHost, ntLLMHost, "/chat")}})
		expect(t, res, "llm", true)
		if !strings.Contains(res["llm"], "llm-ok") {
			t.Errorf("llm answer: %q", res["llm"])
		}
		e.mu.Lock()
		auth, paths := append([]string(nil), e.llmAuth...), append([]string(nil), e.llmPaths...)
		e.mu.Unlock()
		if len(auth) != 1 || auth[0] != "Bearer "+ntSecret || paths[0] != "/v1/chat" {
			t.Errorf("upstream saw auth %q paths %q; want the injected key on /v1/chat", auth, paths)
		}
		// The key is nowhere in the guest: not in any file, not in the
		// environment. (The pattern is split so this command line does not
		// itself contain the key.) A control marker written to a file first
		// proves the search really walks the filesystem.
		half := len(ntSecret) / 2
		out, code := e.run(t, c.ID, fmt.Sprintf(`m="control-""marker-91"; echo "$m" >/var/tmp/ctl
k="%s""%s"; for p in "$m" "$k"; do grep -r -l -s -D skip -F "$p" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; done; env | grep -c -F "$k"; exit 0`,
			ntSecret[:half], ntSecret[half:]))
		if code != 0 || strings.TrimSpace(out) != "/var/tmp/ctl\n0" {
			t.Errorf("key search in the guest: %q, want only the control file and a 0 count", out)
		}
		// Nor in the store: audit records and sandbox rows.
		recs := auditOf(t, e, c.ID, "")
		var sawCall bool
		for _, r := range recs {
			if strings.Contains(fmt.Sprint(r), ntSecret) {
				t.Errorf("audit record holds the key: %+v", r)
			}
			if r.Event == "egress" && r.Detail["rule"] == "llm" && r.Detail["status"] == "200" {
				sawCall = true
			}
		}
		if !sawCall {
			t.Errorf("no egress audit record for the credential call: %+v", recs)
		}
		ok(t, e.m.Kill(ctx, ntTenant, c.ID), "kill")
	})

	t.Run("Probe", func(t *testing.T) {
		rs, err := e.m.Probe(ctx, ntTenant, b.ID)
		ok(t, err, "probe under deny-all")
		if len(rs) < 5 {
			t.Errorf("probe results: %+v", rs)
		}
		// No rule may open the host any more; a public address can be.
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.Policy{Default: netpool.DefaultDeny,
			Allow: []netpool.Rule{{Name: "host-ssh", CIDR: hostIPOf(t, b) + "/32"}}})
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("a rule naming the host's slot address: %v, want invalid_argument", err)
		}
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.Policy{Default: netpool.DefaultDeny,
			Allow: []netpool.Rule{{Name: "public", CIDR: ntPublicProbe + "/32"}}})
		ok(t, err, "allow the public probe address")
		rs, err = e.m.Probe(ctx, ntTenant, b.ID)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "tcp-public") {
			t.Errorf("probe with a public address allowed: %v (%+v), want failed_precondition naming tcp-public", err, rs)
		}
		// With a domain rule the guest's resolver is the egress proxy, whose
		// "no such name" for the probe's name is the expected answer.
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.Policy{Default: netpool.DefaultDeny,
			Allow: []netpool.Rule{{Name: "docs", Domain: "docs.example.test"}}})
		ok(t, err, "allow a domain")
		rs, err = e.m.Probe(ctx, ntTenant, b.ID)
		ok(t, err, "probe with a domain rule")
		for _, r := range rs {
			if r.Name == "dns-denied" && !strings.Contains(r.Detail, "no such host") {
				t.Errorf("dns-denied under a domain rule: %+v, want the proxy's no such host", r)
			}
		}
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.DenyAll())
		ok(t, err, "deny again")

		// On create: passes under deny-all, kills the sandbox when a rule
		// opens what the probes try.
		info, err := e.m.Create(ctx, sandbox.CreateRequest{Tenant: ntTenant, Template: vmtest.TemplateName, Probe: true})
		ok(t, err, "create with probe")
		ok(t, e.m.Kill(ctx, ntTenant, info.ID), "kill")
		_, err = e.m.Create(ctx, sandbox.CreateRequest{Tenant: ntTenant, Template: vmtest.TemplateName, Probe: true,
			Egress: &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "public", CIDR: ntPublicProbe + "/32"}}}})
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "egress self-check failed") {
			t.Fatalf("create with probe and an open public address: %v, want failed_precondition", err)
		}
		list, err := e.m.List(ctx, sandbox.ListFilter{Tenant: ntTenant})
		ok(t, err, "list")
		for _, s := range list {
			if s.ID != a.ID && s.ID != b.ID {
				t.Errorf("sandbox %s survived a failed self-check", s.ID)
			}
		}
	})

	// A connection held open through the proxy (a slow download from the
	// DMS by name) is closed at the DMS end by the time the policy change
	// returns, and likewise when the sandbox ends.
	t.Run("HeldConnectionsEndWithTheirAllow", func(t *testing.T) {
		byName := &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "dms-name", Domain: ntDMSName}}}
		c := e.create(t, byName)
		for _, end := range []string{"policy", "kill"} {
			if end == "kill" {
				_, err := e.m.SetEgress(ctx, ntTenant, c.ID, *byName)
				ok(t, err, "allow again")
			}
			e.hold(t, c.ID, end)
			if end == "policy" {
				_, err := e.m.SetEgress(ctx, ntTenant, c.ID, netpool.DenyAll())
				ok(t, err, "revoke")
			} else {
				ok(t, e.m.Kill(ctx, ntTenant, c.ID), "kill")
			}
			select {
			case q := <-e.released:
				if q != end {
					t.Errorf("released %q, want %q", q, end)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("after the %s change returned, the proxy's connection to the DMS was still open", end)
			}
		}
		// The proxy records each session as its goroutine finishes.
		var reasons []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			reasons = reasons[:0]
			for _, r := range auditOf(t, e, c.ID, "egress") {
				reasons = append(reasons, r.Detail["reason"])
			}
			if slices.Contains(reasons, "policy_changed") && slices.Contains(reasons, "sandbox_ended") {
				break
			}
		}
		if !slices.Contains(reasons, "policy_changed") || !slices.Contains(reasons, "sandbox_ended") {
			t.Errorf("egress audit reasons %q; want policy_changed and sandbox_ended", reasons)
		}
	})

	// Another tenant in the same run: its sandbox reaches what its own
	// policy allows, never tenant acme's credential route (naming its host
	// only makes it an ordinary domain rule, which resolves nowhere), while
	// acme's deny-all sandbox stays closed.
	t.Run("SecondTenant", func(t *testing.T) {
		info, err := e.m.Create(ctx, sandbox.CreateRequest{Tenant: "globex", Template: vmtest.TemplateName,
			Egress: &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{
				{Name: "dms-name", Domain: ntDMSName}, {Name: "llm", Domain: ntLLMHost}}}})
		ok(t, err, "create for globex")
		e.mu.Lock()
		calls := len(e.llmAuth)
		e.mu.Unlock()
		var out, errb bytes.Buffer
		script := fmt.Sprintf("%s; echo; %s", httpGet(ntDMSName, ntDMSName, "/"), httpGet(ntLLMHost, ntLLMHost, "/chat"))
		_, err = e.m.Exec(ctx, "globex", info.ID, guest.ExecOptions{Shell: script, Timeout: time.Minute}, &out, &errb)
		ok(t, err, "exec in globex's sandbox")
		if !strings.Contains(out.String(), "dms-ok ") || strings.Contains(out.String(), "llm-ok") {
			t.Errorf("globex's sandbox: %q; want the DMS and not acme's model", out.String())
		}
		e.mu.Lock()
		if len(e.llmAuth) != calls {
			t.Errorf("acme's credential route was used from globex's sandbox")
		}
		e.mu.Unlock()
		if _, err := e.m.Get(ctx, ntTenant, info.ID); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("acme sees globex's sandbox: %v", err)
		}
		res := e.checks(t, b.ID, []check{{"dms-name", httpGet(ntDMSName, ntDMSName, "/")}})
		expect(t, res, "dms-name", false)
		ok(t, e.m.Kill(ctx, "globex", info.ID), "kill")
	})

	// Inspection: the sandbox's CA certificate is in the guest's bundle
	// before create returns; its key is nowhere in the guest; a later
	// switch to inspection installs one too; each sandbox's CA differs.
	t.Run("InspectInstallsCA", func(t *testing.T) {
		pol := &netpool.Policy{Default: netpool.DefaultDeny, TLS: netpool.TLSInspect,
			Allow: []netpool.Rule{{Name: "dms-name", Domain: ntDMSName}}}
		c := e.create(t, pol)
		if c.Egress.TLS != netpool.TLSInspect {
			t.Errorf("create returned policy %+v", c.Egress)
		}
		_, err := e.m.SetEgress(ctx, ntTenant, b.ID, *pol)
		ok(t, err, "switch b to inspect")
		certs := map[string]string{}
		for _, id := range []string{c.ID, b.ID} {
			out, code := e.run(t, id, `n=$(grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt); `+
				`grep -rl "PRIVATE KEY" /etc /usr/local/share /root /tmp 2>/dev/null; echo "n=$n"; cat /usr/local/share/ca-certificates/airlock-egress.crt`)
			if code != 0 || !strings.HasPrefix(out, "n=1\n-----BEGIN CERTIFICATE-----") {
				t.Errorf("%s: trust store %q (exit %d); want exactly the sandbox CA and no key", id, out, code)
			}
			certs[id] = out
		}
		if certs[c.ID] == certs[b.ID] {
			t.Error("two sandboxes share an inspection CA")
		}
		create := auditOf(t, e, c.ID, "create")
		if len(create) != 1 || create[0].Detail["egress_tls"] != "inspect" || len(create[0].Detail["egress_ca_sha256"]) != 64 {
			t.Errorf("create audit: %+v", create)
		}
		_, err = e.m.SetEgress(ctx, ntTenant, b.ID, netpool.DenyAll())
		ok(t, err, "b back to deny-all")
		ok(t, e.m.Kill(ctx, ntTenant, c.ID), "kill")
	})

	t.Run("ForkChildGetsOwnSlotAndPolicy", func(t *testing.T) {
		kids, err := e.m.Fork(ctx, ntTenant, a.ID, 1)
		ok(t, err, "fork")
		k := kids[0]
		if k.NetAddr == "" || k.NetAddr == a.NetAddr {
			t.Fatalf("child address %q, parent %q", k.NetAddr, a.NetAddr)
		}
		res := e.checks(t, k.ID, []check{{"http", httpGet(ntDMS, ntDMS, "/")}, {"other-port", tcpTo(ntDMS, 8080)}})
		expect(t, res, "http", true)
		if !strings.Contains(res["http"], "dms-ok "+k.NetAddr) {
			t.Errorf("child's DMS answer %q; want its own address %s", res["http"], k.NetAddr)
		}
		expect(t, res, "other-port", false)
		ok(t, e.m.Kill(ctx, ntTenant, k.ID), "kill child")
	})
}

// hold opens a slow download from the DMS by name inside sandbox id (in
// the background; the exec is abandoned when the connection dies) and
// returns once the DMS has sent its first line.
func (e *netEnv) hold(t *testing.T, id, tag string) {
	t.Helper()
	go func() {
		script := fmt.Sprintf(`timeout 60 bash -c 'exec 3<>/dev/tcp/%s/80 && printf "GET /hold?%s HTTP/1.0\r\nHost: %s\r\n\r\n" >&3 && cat <&3'`,
			ntDMSName, tag, ntDMSName)
		_, _ = e.m.Exec(context.Background(), ntTenant, id, guest.ExecOptions{Shell: script, Timeout: 90 * time.Second}, io.Discard, io.Discard)
	}()
	select {
	case q := <-e.held:
		if q != tag {
			t.Fatalf("held %q, want %q", q, tag)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the guest's download of /hold?%s never started", tag)
	}
}

// auditOf returns a sandbox's audit records, optionally of one event.
func auditOf(t *testing.T, e *netEnv, id, event string) []store.AuditRecord {
	t.Helper()
	recs, err := e.st.QueryAudit(context.Background(), store.AuditFilter{Tenant: ntTenant, SandboxID: id})
	ok(t, err, "audit query")
	var out []store.AuditRecord
	for _, r := range recs {
		if event == "" || r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// BenchmarkCreateNet compares Manager.Create with and without networking
// (slot from the netpool's prewarmed list, policy applied, proxy entry)
// on the warm-pool path. Each create is timed alone, after the pool has
// had time to refill, and reported as p50/max in ms:
//
//	go test -run '^$' -bench CreateNet -benchtime 8x ./internal/sandbox/
func BenchmarkCreateNet(b *testing.B) {
	pol := &netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{{Name: "dms", CIDR: ntDMS, Protocol: netpool.ProtoTCP, Ports: []uint16{80}}}}
	for _, mode := range []string{"nonet", "net"} {
		b.Run(mode, func(b *testing.B) {
			var m *sandbox.Manager
			req := sandbox.CreateRequest{Tenant: ntTenant, Template: vmtest.TemplateName}
			if mode == "net" {
				m = newNetEnv(b, 1).m
				req.Egress = pol
			} else {
				m, _ = newManager(b, sandbox.Config{WarmPool: 1})
			}
			ctx := context.Background()
			var ds []time.Duration
			for i := 0; i < b.N+1; i++ { // the first create primes the pool
				time.Sleep(4 * time.Second) // let the warm pool refill (untimed)
				t0 := time.Now()
				info, err := m.Create(ctx, req)
				d := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if i > 0 {
					ds = append(ds, d)
				}
				m.Kill(ctx, ntTenant, info.ID)
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
