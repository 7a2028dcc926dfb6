package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
)

func sandboxA() Sandbox {
	return Sandbox{
		ID: "sbx-a", Tenant: "tenant-1",
		Domains: []DomainRule{
			{Name: "dms", Pattern: "dms.test"},
			{Name: "example", Pattern: "*.example.test"},
		},
		Routes: []CredentialRoute{{
			Name: "llm", Host: "llm.internal", Upstream: "https://api.upstream.test/v1",
			Header: "Authorization", Value: "Bearer " + testSecret,
		}},
	}
}

func sandboxB() Sandbox {
	return Sandbox{ID: "sbx-b", Tenant: "tenant-2", Domains: []DomainRule{{Name: "other", Pattern: "other.test"}}}
}

func TestValidate(t *testing.T) {
	route := func(mod func(*CredentialRoute)) Sandbox {
		r := CredentialRoute{Name: "r", Host: "llm.internal", Upstream: "https://api.example.com/v1",
			Header: "Authorization", Value: "Bearer " + testSecret}
		mod(&r)
		return Sandbox{ID: "s", Routes: []CredentialRoute{r}}
	}
	dom := func(pattern string) Sandbox {
		return Sandbox{ID: "s", Domains: []DomainRule{{Name: "d", Pattern: pattern}}}
	}
	tests := []struct {
		name string
		sb   Sandbox
		ok   bool
	}{
		{"exact", dom("api.example.com"), true},
		{"wildcard", dom("*.example.com"), true},
		{"case and trailing dot", dom("API.Example.COM."), true},
		{"empty", dom(""), false},
		{"bare star", dom("*"), false},
		{"star dot", dom("*."), false},
		{"ipv4 literal", dom("10.1.2.3"), false},
		{"ipv6 literal", dom("::1"), false},
		{"bracketed ipv6", dom("[::1]"), false},
		{"numeric last label", dom("example.123"), false},
		{"wildcard over tld", dom("*.com"), false},
		{"inner star", dom("a.*.example.com"), false},
		{"partial star", dom("*foo.example.com"), false},
		{"double wildcard", dom("*.*.example.com"), false},
		{"underscore", dom("a_b.example.com"), false},
		{"space", dom("a b.example.com"), false},
		{"missing id", Sandbox{Domains: []DomainRule{{Name: "d", Pattern: "a.example.com"}}}, false},
		{"bad rule name", Sandbox{ID: "s", Domains: []DomainRule{{Name: "a b", Pattern: "a.example.com"}}}, false},
		{"duplicate names", Sandbox{ID: "s", Domains: []DomainRule{{Name: "d", Pattern: "a.example.com"}},
			Routes: []CredentialRoute{{Name: "d", Host: "llm.internal", Upstream: "https://x.example.com", Header: "X-Key", Value: "v"}}}, false},
		{"route ok", route(func(*CredentialRoute) {}), true},
		{"route upstream with port", route(func(r *CredentialRoute) { r.Upstream = "https://api.example.com:8443/v1/" }), true},
		{"route upstream ip", route(func(r *CredentialRoute) { r.Upstream = "https://10.1.2.3/" }), true},
		{"route http upstream", route(func(r *CredentialRoute) { r.Upstream = "http://api.example.com/v1" }), false},
		{"route query", route(func(r *CredentialRoute) { r.Upstream = "https://api.example.com/v1?key=" + testSecret }), false},
		{"route userinfo", route(func(r *CredentialRoute) { r.Upstream = "https://u:" + testSecret + "@api.example.com/" }), false},
		{"route no upstream", route(func(r *CredentialRoute) { r.Upstream = "" }), false},
		{"route host wildcard", route(func(r *CredentialRoute) { r.Host = "*.internal" }), false},
		{"route host ip", route(func(r *CredentialRoute) { r.Host = "10.0.0.1" }), false},
		{"route header host", route(func(r *CredentialRoute) { r.Header = "host" }), false},
		{"route header hop-by-hop", route(func(r *CredentialRoute) { r.Header = "Connection" }), false},
		{"route header invalid", route(func(r *CredentialRoute) { r.Header = "X Key" }), false},
		{"route value CRLF", route(func(r *CredentialRoute) { r.Value = testSecret + "\r\nX-Evil: 1" }), false},
		{"route value empty", route(func(r *CredentialRoute) { r.Value = "" }), false},
		{"route host overlaps rule", Sandbox{ID: "s", Domains: []DomainRule{{Name: "d", Pattern: "*.example.com"}},
			Routes: []CredentialRoute{{Name: "r", Host: "llm.example.com", Upstream: "https://x.example.org", Header: "X-Key", Value: "v"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sb.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, errdefs.ErrInvalidArgument) {
					t.Errorf("error %v is not InvalidArgument", err)
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Errorf("error quotes the secret: %v", err)
				}
			}
		})
	}
}

func TestMatchDomain(t *testing.T) {
	pol, err := compile(Sandbox{ID: "s", Domains: []DomainRule{
		{Name: "wild", Pattern: "*.Example.com."},
		{Name: "exact", Pattern: "api.example.com"},
		{Name: "apex", Pattern: "example.org"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host        string
		rule, label string // rule "" = refused
		exact       bool
	}{
		{"a.example.com", "wild", "*.example.com", false},
		{"a.b.example.com", "wild", "*.example.com", false},
		{"A.EXAMPLE.COM.", "wild", "*.example.com", false},
		{"api.example.com", "exact", "api.example.com", true}, // exact wins over wildcard
		{"example.com", "", "", false},                        // wildcard excludes the apex
		{"badexample.com", "", "", false},
		{"example.com.evil.net", "", "", false},
		{"example.org", "apex", "example.org", true},
		{"www.example.org", "", "", false}, // exact excludes sub-domains
		{"", "", "", false},
	}
	for _, tc := range tests {
		m, ok := pol.matchDomain(normalizeHost(tc.host))
		if ok != (tc.rule != "") || m.rule != tc.rule || m.label != tc.label || m.exact != tc.exact {
			t.Errorf("matchDomain(%q) = %+v, %v; want rule %q label %q exact %v", tc.host, m, ok, tc.rule, tc.label, tc.exact)
		}
	}
}

// TestUpstreamAddressPolicy: what a tenant's domain rule may resolve to.
// Tenants control their own DNS, so exact and wildcard rules are alike:
// never the host's own addresses (a proxy on the host connecting to one
// reaches every service the host runs) or loopback, link-local, metadata
// and the like; private and other special-purpose ranges only where the
// operator opened them or resolved the name itself (static hosts,
// credential routes).
func TestUpstreamAddressPolicy(t *testing.T) {
	hostPublic := netip.MustParseAddr("198.51.99.7") // a public address on one of the host's interfaces
	p, err := New(Config{ListenAddr: netip.MustParseAddr("10.99.0.1"), Lookup: func(netip.Addr) (Sandbox, bool) { return Sandbox{}, false },
		Guard: netguard.Guard{Open: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")},
			HostAddrs: func() []netip.Addr { return []netip.Addr{hostPublic, netip.MustParseAddr("10.0.2.15")} }}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr             string
		tenant, operator bool // a tenant's rule; a name the operator resolved
	}{
		{"93.184.215.14", true, true},
		{"2606:4700::1111", true, true},
		{"198.51.99.7", false, false}, // the host's own public address
		{"10.0.2.15", false, false},   // the host's own private address
		{"127.0.0.1", false, false},
		{"127.77.1.20", false, false},
		{"::1", false, false},
		{"::ffff:127.0.0.1", false, false},
		{"0.0.0.0", false, false},
		{"169.254.169.254", false, false}, // cloud metadata: never
		{"fe80::1", false, false},
		{"224.0.0.1", false, false},
		{"255.255.255.255", false, false},
		{"64:ff9b::7f00:1", false, false},     // NAT64 of 127.0.0.1
		{"2001:0:4136:e378::1", false, false}, // Teredo
		{"10.1.2.3", false, true},             // private: the operator's choice only
		{"10.20.9.9", true, true},             // inside --egress-open
		{"172.16.5.5", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"198.18.0.1", false, true},
		{"203.0.113.5", false, true},
		{"fd00::1", false, true},
		{"10.200.0.6", false, false}, // netpool's slot range (Config.Internal default)
		{"10.99.0.1", false, false},  // the proxy itself
	}
	for _, tc := range tests {
		a := netip.MustParseAddr(tc.addr)
		if got := p.upstreamAllowed(a, false); got != tc.tenant {
			t.Errorf("upstreamAllowed(%s) for a tenant's rule = %v, want %v", a, got, tc.tenant)
		}
		if got := p.upstreamAllowed(a, true); got != tc.operator {
			t.Errorf("upstreamAllowed(%s) for an operator's name = %v, want %v", a, got, tc.operator)
		}
	}
}

// dnsQuery asks the proxy from src over network ("udp" or "tcp").
func dnsQuery(t *testing.T, e *env, network string, src netip.Addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	var local net.Addr = &net.UDPAddr{IP: src.AsSlice()}
	if network == "tcp" {
		local = &net.TCPAddr{IP: src.AsSlice()}
	}
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{LocalAddr: local, Timeout: 2 * time.Second}}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := c.Exchange(m, netip.AddrPortFrom(e.proxyIP, testDNSPort).String())
	if err != nil {
		t.Fatalf("dns %s %s from %s: %v", network, name, src, err)
	}
	return r
}

func TestDNS(t *testing.T) {
	e := newEnv(t)
	e.setSandbox(e.guestA, sandboxA())
	e.setSandbox(e.guestB, sandboxB())
	e.start()

	tests := []struct {
		network string
		src     netip.Addr
		name    string
		qtype   uint16
		rcode   int
		answer  bool
	}{
		{"udp", e.guestA, "dms.test", dns.TypeA, dns.RcodeSuccess, true},
		{"udp", e.guestA, "DMS.Test", dns.TypeA, dns.RcodeSuccess, true},
		{"tcp", e.guestA, "dms.test", dns.TypeA, dns.RcodeSuccess, true},
		{"udp", e.guestA, "a.b.example.test", dns.TypeA, dns.RcodeSuccess, true},
		{"udp", e.guestA, "llm.internal", dns.TypeA, dns.RcodeSuccess, true},
		{"udp", e.guestA, "dms.test", dns.TypeAAAA, dns.RcodeSuccess, false},
		{"udp", e.guestA, "dms.test", dns.TypeTXT, dns.RcodeSuccess, false},
		{"udp", e.guestA, "example.test", dns.TypeA, dns.RcodeNameError, false}, // wildcard excludes apex
		{"udp", e.guestA, "evil.test", dns.TypeA, dns.RcodeNameError, false},
		{"udp", e.guestA, "other.test", dns.TypeA, dns.RcodeNameError, false}, // B's rule
		{"udp", e.guestB, "other.test", dns.TypeA, dns.RcodeSuccess, true},
		{"udp", e.guestB, "dms.test", dns.TypeA, dns.RcodeNameError, false}, // A's rule
		{"udp", e.stranger, "dms.test", dns.TypeA, dns.RcodeRefused, false},
	}
	for _, tc := range tests {
		r := dnsQuery(t, e, tc.network, tc.src, tc.name, tc.qtype)
		if r.Rcode != tc.rcode {
			t.Errorf("%s %s %s from %s: rcode %s, want %s", tc.network, tc.name, dns.TypeToString[tc.qtype], tc.src,
				dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode])
			continue
		}
		if !tc.answer {
			if len(r.Answer) != 0 {
				t.Errorf("%s %s: unexpected answer %v", tc.name, dns.TypeToString[tc.qtype], r.Answer)
			}
			continue
		}
		if len(r.Answer) != 1 {
			t.Errorf("%s: want one answer, got %v", tc.name, r.Answer)
			continue
		}
		a, ok := r.Answer[0].(*dns.A)
		if !ok || !a.A.Equal(e.proxyIP.AsSlice()) || a.Hdr.Ttl != 5 {
			t.Errorf("%s: answer %v, want A %s ttl 5", tc.name, r.Answer[0], e.proxyIP)
		}
	}

	// Refused names are guest-chosen content: audited without the name.
	evs := e.waitEvents(12) // every query but the stranger's
	for _, ev := range evs {
		if ev.Kind != KindDNS || ev.SandboxID == "" {
			t.Errorf("bad dns event %+v", ev)
		}
		if strings.Contains(ev.Host, "evil") || (ev.Outcome == OutcomeDenied && ev.Host != "") {
			t.Errorf("denied event records a name: %+v", ev)
		}
	}
	if !strings.Contains(e.logs.String(), "unknown source") {
		t.Errorf("stranger's query not logged")
	}
}

func TestTLS(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.setSandbox(e.guestA, sandboxA())
	e.setSandbox(e.guestB, sandboxB())
	for _, n := range []string{"dms.test", "other.test", "api.example.test", "example.test"} {
		e.resolveTo(n, e.upIP)
	}
	accepts := e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.Host)
	}))
	e.start()

	get := func(src netip.Addr, url string) (string, error) {
		resp, err := e.guestClient(src, roots).Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	// Allowed exact name reaches the upstream, end-to-end TLS.
	body, err := get(e.guestA, "https://dms.test/x")
	if err != nil || body != "hello from dms.test" {
		t.Fatalf("allowed SNI: %q, %v", body, err)
	}
	ev := e.event(1)
	if ev.Kind != KindTLS || ev.SandboxID != "sbx-a" || ev.Tenant != "tenant-1" || ev.Rule != "dms" || ev.Host != "dms.test" ||
		ev.Outcome != OutcomeOK || ev.Upstream != netip.AddrPortFrom(e.upIP, 443).String() || ev.BytesUp == 0 || ev.BytesDown == 0 || ev.Duration <= 0 {
		t.Errorf("allowed event: %+v", ev)
	}

	// Wildcard: a sub-domain passes and is recorded as the pattern.
	body, err = get(e.guestA, "https://api.example.test/")
	if err != nil || body != "hello from api.example.test" {
		t.Fatalf("wildcard SNI: %q, %v", body, err)
	}
	if ev := e.event(2); ev.Host != "*.example.test" || ev.Rule != "example" || ev.Outcome != OutcomeOK {
		t.Errorf("wildcard event: %+v", ev)
	}
	before := accepts.Load()

	// Refused: a name nobody allowed, the wildcard's apex, B's name from A,
	// A's name from B.
	refused := []struct {
		src netip.Addr
		url string
	}{
		{e.guestA, "https://other.test/"},
		{e.guestA, "https://example.test/"},
		{e.guestB, "https://dms.test/"},
	}
	for i, tc := range refused {
		if body, err := get(tc.src, tc.url); err == nil {
			t.Errorf("%s from %s: got %q, want refusal", tc.url, tc.src, body)
		}
		ev := e.event(3 + i)
		if ev.Outcome != OutcomeDenied || ev.Reason != "not_allowed" || ev.Host != "" || ev.Rule != "" || ev.Upstream != "" {
			t.Errorf("refused event: %+v", ev)
		}
	}
	// B's own policy works for B.
	if body, err := get(e.guestB, "https://other.test/"); err != nil || body != "hello from other.test" {
		t.Errorf("B's allowed SNI: %q, %v", body, err)
	}
	if ev := e.event(6); ev.SandboxID != "sbx-b" || ev.Outcome != OutcomeOK {
		t.Errorf("B event: %+v", ev)
	}
	before++

	// No SNI at all.
	c, err := e.dialFrom(e.guestA, testTLSPort)
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true}) // no ServerName: no SNI
	if err := tc.Handshake(); err == nil {
		t.Errorf("handshake without SNI succeeded")
	}
	c.Close()
	if ev := e.event(7); ev.Reason != "no_sni" || ev.Outcome != OutcomeDenied {
		t.Errorf("no-SNI event: %+v", ev)
	}

	// Not TLS at all.
	c, err = e.dialFrom(e.guestA, testTLSPort)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: dms.test\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, _ := c.Read(make([]byte, 100)); n != 0 {
		t.Errorf("plain text on the TLS port got %d bytes back", n)
	}
	c.Close()
	if ev := e.event(8); ev.Reason != "not_tls" {
		t.Errorf("not-TLS event: %+v", ev)
	}

	if got := accepts.Load(); got != before {
		t.Errorf("refused connections reached the upstream: %d accepts, want %d", got, before)
	}
}

func TestDefaultRefusesLoopback(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.cfg.AllowUpstream = nil // the default: PublicAddr
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("dms.test", e.upIP) // an exact rule pointing at loopback: still refused
	e.resolveTo("api.example.test", e.upIP)
	e.resolveTo("api.upstream.test", e.upIP)
	tlsAccepts := e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	httpAccepts := e.upstream(80, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	e.start()

	client := e.guestClient(e.guestA, roots)
	if _, err := client.Get("https://dms.test/"); err == nil {
		t.Errorf("TLS to a loopback-resolving name succeeded")
	}
	if ev := e.event(1); ev.Outcome != OutcomeDenied || ev.Reason != "refused_address" || ev.Upstream != "" {
		t.Errorf("event: %+v", ev)
	}
	for i, url := range []string{"http://dms.test/", "http://api.example.test/", "http://llm.internal/"} {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", url, resp.StatusCode)
		}
		if ev := e.event(2 + i); ev.Reason != "refused_address" || ev.Status != http.StatusForbidden {
			t.Errorf("%s event: %+v", url, ev)
		}
	}
	if tlsAccepts.Load() != 0 || httpAccepts.Load() != 0 {
		t.Errorf("upstream reached despite loopback refusal")
	}
}

// TestTenantDNSReachesNoPrivateNetwork: the attack where a tenant's
// domain rule names a host whose DNS it controls and points it at a
// private address. Refused (403, refused_address, nothing dialled) unless
// the operator opened that range or resolved the name itself.
func TestTenantDNSReachesNoPrivateNetwork(t *testing.T) {
	e := newEnv(t)
	e.cfg.AllowUpstream = nil // the production guard
	e.cfg.Guard = netguard.Guard{Open: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	e.cfg.Hosts = map[string][]netip.Addr{"dms.test": {netip.MustParseAddr("10.1.2.3")}}
	var dialled []string
	e.cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		e.mu.Lock()
		dialled = append(dialled, addr)
		e.mu.Unlock()
		return nil, fmt.Errorf("test dial: nothing listens at %s", addr)
	}
	sb := sandboxA()
	sb.Domains = append(sb.Domains, DomainRule{Name: "evil", Pattern: "evil.test"}, DomainRule{Name: "opened", Pattern: "opened.test"})
	e.setSandbox(e.guestA, sb)
	e.resolveTo("evil.test", netip.MustParseAddr("10.1.2.3"))    // the tenant's DNS
	e.resolveTo("opened.test", netip.MustParseAddr("10.20.0.9")) // inside --egress-open
	e.resolveTo("meta.example.test", netip.MustParseAddr("169.254.169.254"))
	e.start()
	client := e.guestClient(e.guestA, nil)
	for _, c := range []struct {
		url    string
		status int
		reason string
	}{
		{"http://evil.test/", http.StatusForbidden, "refused_address"},
		{"http://meta.example.test/latest/meta-data/", http.StatusForbidden, "refused_address"},
		{"http://opened.test/", http.StatusBadGateway, "dial_failed"}, // allowed, then nothing listens
		{"http://dms.test/", http.StatusBadGateway, "dial_failed"},    // the operator's static host
	} {
		resp, err := client.Get(c.url)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.url, resp.StatusCode, c.status)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(dialled) != 2 || dialled[0] != "10.20.0.9:80" || dialled[1] != "10.1.2.3:80" {
		t.Errorf("dialled %v, want only the opened and the operator's addresses", dialled)
	}
}

func TestHTTPDomain(t *testing.T) {
	e := newEnv(t)
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("dms.test", e.upIP)
	var mu sync.Mutex
	var seen []*http.Request
	accepts := e.upstream(80, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		w.Header().Set("X-Upstream", "yes")
		io.WriteString(w, "doc list for "+r.Host+r.URL.RequestURI())
	}))
	e.start()

	client := e.guestClient(e.guestA, nil)
	resp, err := client.Get("http://dms.test/docs?id=7")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "doc list for dms.test/docs?id=7" || resp.Header.Get("X-Upstream") != "yes" {
		t.Errorf("allowed host: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if ev := e.event(1); ev.Kind != KindHTTP || ev.Status != 200 || ev.Rule != "dms" || ev.Host != "dms.test" ||
		ev.Outcome != OutcomeOK || ev.BytesUp == 0 || ev.BytesDown == 0 || ev.Upstream == "" {
		t.Errorf("allowed event: %+v", ev)
	}

	// raw sends one request by hand and returns the status and body.
	raw := func(req string) (int, string) {
		t.Helper()
		c, err := e.dialFrom(e.guestA, testHTTPPort)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, req string
		status    int
		body      string // substring
	}{
		{"refused host", "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", 403, `"evil.test" is not allowed`},
		{"B's host", "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n", 403, "other.test"},
		{"absolute form", "GET http://dms.test/abs HTTP/1.1\r\nHost: dms.test\r\n\r\n", 200, "dms.test/abs"},
		{"absolute form with :80", "GET http://dms.test:80/abs HTTP/1.1\r\nHost: DMS.test\r\n\r\n", 200, "dms.test/abs"},
		{"absolute form disagrees with Host", "GET http://dms.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", 400, "different hosts"},
		{"absolute form smuggles refused host", "GET http://evil.test/ HTTP/1.1\r\nHost: dms.test\r\n\r\n", 400, "different hosts"},
		{"absolute form refused", "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", 403, "evil.test"},
		{"https absolute form", "GET https://dms.test/ HTTP/1.1\r\nHost: dms.test\r\n\r\n", 400, "http://"},
		{"other port", "GET / HTTP/1.1\r\nHost: dms.test:8080\r\n\r\n", 400, "port 80"},
		{"CONNECT", "CONNECT dms.test:443 HTTP/1.1\r\nHost: dms.test:443\r\n\r\n", 405, "CONNECT"},
		{"no Host", "GET / HTTP/1.0\r\n\r\n", 400, "Host"},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: dms.test\r\nHost: evil.test\r\n\r\n", 400, ""},
		{"ip literal", "GET / HTTP/1.1\r\nHost: 127.77.0.20\r\n\r\n", 403, ""},
		{"header too large", "GET / HTTP/1.1\r\nHost: dms.test\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431, ""},
	}
	n := 1
	for _, tc := range tests {
		status, body := raw(tc.req)
		if status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q, want %d containing %q", tc.name, status, body, tc.status, tc.body)
		}
		n++
		ev := e.event(n)
		if ev.Status != tc.status || ev.SandboxID != "sbx-a" {
			t.Errorf("%s: event %+v", tc.name, ev)
		}
		if tc.status >= 400 && (ev.Host != "" || ev.Outcome != OutcomeDenied) {
			t.Errorf("%s: refused event %+v", tc.name, ev)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || int(accepts.Load()) != 3 {
		t.Errorf("upstream saw %d requests on %d connections, want 3 and 3", len(seen), accepts.Load())
	}
	for _, r := range seen {
		if r.Header.Get("Proxy-Authorization") != "" || r.Header.Get("X-Forwarded-For") != "" {
			t.Errorf("upstream got proxy headers: %v", r.Header)
		}
	}
}

func TestCredentialRoute(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.cfg.UpstreamTLS = &tls.Config{RootCAs: roots}
	e.setSandbox(e.guestA, sandboxA())
	e.setSandbox(e.guestB, sandboxB())
	e.resolveTo("api.upstream.test", e.upIP)
	type seenReq struct {
		auth             []string
		host, uri, body  string
		proxyAuth, other string
	}
	var mu sync.Mutex
	var seen []seenReq
	e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenReq{auth: r.Header.Values("Authorization"), host: r.Host, uri: r.URL.RequestURI(), body: string(b),
			proxyAuth: r.Header.Get("Proxy-Authorization"), other: r.Header.Get("X-Guest")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"answer":"42"}`)
	}))
	e.start()

	req, _ := http.NewRequest("POST", "http://llm.internal/chat/completions?stream=false", strings.NewReader(`{"q":"?"}`))
	req.Header.Set("Authorization", "Bearer guest-forged")
	req.Header.Set("Proxy-Authorization", "Basic Zm9vOmJhcg==")
	req.Header.Set("X-Guest", "kept")
	resp, err := e.guestClient(e.guestA, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(body) != `{"answer":"42"}` {
		t.Fatalf("route response: %d %q", resp.StatusCode, body)
	}
	for k, v := range resp.Header {
		if strings.Contains(strings.Join(v, ","), testSecret) {
			t.Errorf("response header %s carries the secret", k)
		}
	}
	mu.Lock()
	if len(seen) != 1 {
		t.Fatalf("upstream saw %d requests", len(seen))
	}
	got := seen[0]
	mu.Unlock()
	if len(got.auth) != 1 || got.auth[0] != "Bearer "+testSecret {
		t.Errorf("upstream Authorization = %q, want exactly the injected secret", got.auth)
	}
	if got.host != "api.upstream.test" || got.uri != "/v1/chat/completions?stream=false" || got.body != `{"q":"?"}` {
		t.Errorf("upstream request: %+v", got)
	}
	if got.proxyAuth != "" || got.other != "kept" {
		t.Errorf("headers: Proxy-Authorization %q (want stripped), X-Guest %q (want kept)", got.proxyAuth, got.other)
	}
	ev := e.event(1)
	if ev.Kind != KindCredential || ev.Rule != "llm" || ev.Host != "llm.internal" || ev.Status != 201 || ev.Outcome != OutcomeOK ||
		ev.Upstream != netip.AddrPortFrom(e.upIP, 443).String() || ev.BytesUp == 0 || ev.BytesDown == 0 {
		t.Errorf("credential event: %+v", ev)
	}

	// Dot segments cannot climb out of the route's path.
	c, err := e.dialFrom(e.guestA, testHTTPPort)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /../admin HTTP/1.1\r\nHost: llm.internal\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || r.StatusCode != 400 {
		t.Errorf("dot segments: %v %v", r, err)
	}
	c.Close()

	// Another sandbox has no such route.
	resp, err = e.guestClient(e.guestB, nil).Get("http://llm.internal/chat")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("B using A's route: %d, want 403", resp.StatusCode)
	}
	mu.Lock()
	if len(seen) != 1 {
		t.Errorf("refused requests reached the upstream")
	}
	mu.Unlock()
	e.waitEvents(3)
	// e.start's cleanup asserts no event and no log line carries the secret.
}

func TestConnectionLimit(t *testing.T) {
	e := newEnv(t)
	e.cfg.MaxConnsPerSandbox = 2
	e.setSandbox(e.guestA, sandboxA())
	e.setSandbox(e.guestB, sandboxB())
	e.start()

	// open dials and reports whether the proxy kept the connection (a held
	// connection times out reading; a refused one reads EOF at once).
	open := func(src netip.Addr, port int) (net.Conn, bool) {
		t.Helper()
		c, err := e.dialFrom(src, port)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		held := errors.As(err, &ne) && ne.Timeout()
		c.SetReadDeadline(time.Time{})
		return c, held
	}
	a1, ok1 := open(e.guestA, testTLSPort)
	a2, ok2 := open(e.guestA, testHTTPPort)
	if !ok1 || !ok2 {
		t.Fatalf("first two connections refused")
	}
	a3, ok3 := open(e.guestA, testTLSPort)
	if ok3 {
		t.Errorf("third connection of sandbox A held open; limit is 2")
	}
	a3.Close()
	a4, ok4 := open(e.guestA, testDNSPort) // DNS over TCP counts too
	if ok4 {
		t.Errorf("DNS/TCP connection over the limit held open")
	}
	a4.Close()
	b1, okB := open(e.guestB, testTLSPort)
	if !okB {
		t.Errorf("sandbox B refused because of A's connections")
	}
	b1.Close()

	ev := e.event(1)
	if ev.SandboxID != "sbx-a" || ev.Reason != "limit" || ev.Outcome != OutcomeDenied {
		t.Errorf("limit event: %+v", ev)
	}

	// Closing one frees a slot.
	a1.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, ok := open(e.guestA, testTLSPort)
		c.Close()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slot not released after close")
		}
	}
	a2.Close()
}

func TestTimeouts(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.cfg.HeaderTimeout = 300 * time.Millisecond
	e.cfg.IdleTimeout = 500 * time.Millisecond
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("dms.test", e.upIP)
	e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	e.start()

	closedWithin := func(c net.Conn, d time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}

	// Slowloris: a request header that never ends.
	c, err := e.dialFrom(e.guestA, testHTTPPort)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: dms.test\r\n")
	if !closedWithin(c, 3*time.Second) {
		t.Errorf("unfinished HTTP header not cut off")
	}
	c.Close()
	if ev := e.event(1); ev.Reason != "header_timeout" {
		t.Errorf("http header timeout event: %+v", ev)
	}

	// A TLS connection that never says hello.
	c, err = e.dialFrom(e.guestA, testTLSPort)
	if err != nil {
		t.Fatal(err)
	}
	if !closedWithin(c, 3*time.Second) {
		t.Errorf("silent TLS connection not cut off")
	}
	c.Close()
	if ev := e.event(2); ev.Reason != "header_timeout" {
		t.Errorf("tls hello timeout event: %+v", ev)
	}

	// An established, idle tunnel.
	c, err = e.dialFrom(e.guestA, testTLSPort)
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(c, &tls.Config{ServerName: "dms.test", RootCAs: roots})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	tc.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = tc.Read(make([]byte, 1))
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("idle tunnel not closed: %v", err)
	} else if time.Since(start) < 300*time.Millisecond {
		t.Errorf("idle tunnel closed too early (%v)", time.Since(start))
	}
	tc.Close()
	if ev := e.event(3); ev.Outcome != OutcomeOK || ev.Reason != "idle_timeout" {
		t.Errorf("idle event: %+v", ev)
	}
}

func TestCloseWithOpenConnections(t *testing.T) {
	e := newEnv(t)
	e.setSandbox(e.guestA, sandboxA())
	e.start()
	var conns []net.Conn
	for _, port := range []int{testHTTPPort, testTLSPort, testDNSPort} {
		c, err := e.dialFrom(e.guestA, port)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { e.proxy.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung with open connections")
	}
	for _, c := range conns {
		c.Close()
	}
	if _, err := e.dialFrom(e.guestA, testHTTPPort); err == nil {
		t.Errorf("still listening after Close")
	}
	e.proxy.Close() // idempotent
}

func TestNewValidates(t *testing.T) {
	lookup := func(netip.Addr) (Sandbox, bool) { return Sandbox{}, false }
	bad := []Config{
		{Lookup: lookup},
		{ListenAddr: netip.MustParseAddr("127.0.0.1")},
		{ListenAddr: netip.MustParseAddr("127.0.0.1"), Lookup: lookup, HTTPPort: 70000},
		{ListenAddr: netip.MustParseAddr("127.0.0.1"), Lookup: lookup, HTTPPort: 443},
		{ListenAddr: netip.MustParseAddr("127.0.0.1"), Lookup: lookup, IdleTimeout: -1},
	}
	for i, cfg := range bad {
		if _, err := New(cfg); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("config %d: err %v, want InvalidArgument", i, err)
		}
	}
}

// An LLM answer streams (server-sent events): the proxy must pass each
// chunk on as it comes, not buffer the response.
func TestCredentialRouteStreams(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.cfg.UpstreamTLS = &tls.Config{RootCAs: roots}
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("api.upstream.test", e.upIP)
	firstRead := make(chan struct{})
	e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: part1\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-time.After(5 * time.Second):
			return // the proxy buffered: the guest never saw part1
		}
		io.WriteString(w, "data: part2\n\n")
	}))
	e.start()

	resp, err := e.guestClient(e.guestA, nil).Get("http://llm.internal/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: part1\n" {
		t.Fatalf("first chunk: %q, %v", line, err)
	}
	close(firstRead)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: part2\n\n" {
		t.Fatalf("rest: %q, %v", rest, err)
	}
	if ev := e.event(1); ev.Kind != KindCredential || ev.Status != 200 || ev.Outcome != OutcomeOK {
		t.Errorf("event: %+v", ev)
	}
}

func TestStartTwice(t *testing.T) {
	e := newEnv(t)
	e.start()
	if err := e.proxy.Start(t.Context()); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("second Start: %v, want FailedPrecondition", err)
	}
}
