package egress

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostRecorder is an upstream handler that answers with the Host it was
// asked for and remembers every Host it saw.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.Host)
	h.mu.Unlock()
	io.WriteString(w, "hello from "+r.Host)
}

func (h *hostRecorder) saw() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hosts...)
}

// frontedGet asks the proxy's TLS port, from src, for host inside a TLS
// connection whose SNI is sni: domain fronting when the two differ.
func frontedGet(e *env, src netip.Addr, roots *x509.CertPool, sni, host string) (int, string, error) {
	c, err := e.dialFrom(src, testTLSPort)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	tc := tls.Client(c, &tls.Config{ServerName: sni, RootCAs: roots})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		return 0, "", err
	}
	io.WriteString(tc, "GET / HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func certPool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// TestPassthroughAllowsFronting pins down the documented limit of the
// default mode: the proxy never sees inside TLS, so an allowed SNI can
// carry a request for another site served by the same upstream.
func TestPassthroughAllowsFronting(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("dms.test", e.upIP)
	rec := &hostRecorder{}
	e.upstream(443, &cert, rec)
	e.start()

	code, body, err := frontedGet(e, e.guestA, roots, "dms.test", "other.test")
	if err != nil || code != 200 || body != "hello from other.test" {
		t.Fatalf("fronted request in passthrough mode: %d %q %v; the README says it reaches the upstream", code, body, err)
	}
}

func TestInspect(t *testing.T) {
	cert, upstreamRoots := testCert(t)
	e := newEnv(t)
	e.cfg.UpstreamTLS = &tls.Config{RootCAs: upstreamRoots} // the operator's extra upstream CA
	caA, err := NewCA("sbx-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caB, err := NewCA("sbx-b", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a := sandboxA()
	a.TLS, a.CA = TLSInspect, caA
	e.setSandbox(e.guestA, a)
	b := sandboxB()
	b.TLS, b.CA = TLSInspect, caB
	e.setSandbox(e.guestB, b)
	for _, n := range []string{"dms.test", "other.test", "api.example.test"} {
		e.resolveTo(n, e.upIP)
	}
	rec := &hostRecorder{}
	accepts := e.upstream(443, &cert, rec)
	e.start()
	trustA := certPool(caA.Certificate())

	// The guest trusts its sandbox's CA, and only that: the request goes
	// through, re-encrypted to the upstream, which the proxy verified.
	code, body, err := frontedGet(e, e.guestA, trustA, "dms.test", "dms.test")
	if err != nil || code != 200 || body != "hello from dms.test" {
		t.Fatalf("inspected request: %d %q %v", code, body, err)
	}
	ev := e.event(1)
	if ev.Kind != KindTLS || ev.Rule != "dms" || ev.Host != "dms.test" || ev.Status != 200 || ev.Outcome != OutcomeOK ||
		ev.Upstream != netip.AddrPortFrom(e.upIP, 443).String() || ev.BytesUp == 0 || ev.BytesDown == 0 {
		t.Errorf("inspected event: %+v", ev)
	}
	// Wildcards and ports: Host "api.example.test:443" is the same host.
	if code, body, err := frontedGet(e, e.guestA, trustA, "api.example.test", "api.example.test:443"); err != nil || code != 200 ||
		body != "hello from api.example.test" {
		t.Errorf("wildcard with :443: %d %q %v", code, body, err)
	}
	if ev := e.event(2); ev.Host != "*.example.test" || ev.Status != 200 {
		t.Errorf("wildcard event: %+v", ev)
	}
	before := accepts.Load()

	// Fronting: allowed SNI, another Host inside. Refused with 421 before
	// anything goes upstream, even though other.test is allowed for B.
	code, body, err = frontedGet(e, e.guestA, trustA, "dms.test", "other.test")
	if err != nil || code != http.StatusMisdirectedRequest || !strings.Contains(body, "domain fronting") {
		t.Errorf("fronted request: %d %q %v, want 421", code, body, err)
	}
	if ev := e.event(3); ev.Outcome != OutcomeDenied || ev.Reason != "host_mismatch" || ev.Status != 421 {
		t.Errorf("fronting event: %+v", ev)
	}
	// An absolute-form URI naming another host is the same attempt.
	if code, _, _ := frontedGetRaw(e, e.guestA, trustA, "dms.test", "GET https://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n"); code != http.StatusMisdirectedRequest {
		t.Errorf("absolute-form fronting: %d, want 421", code)
	}
	e.waitEvents(4)

	// Sandbox B's CA does not vouch for A's connections: each sandbox's
	// certificates are its own.
	if _, _, err := frontedGet(e, e.guestA, certPool(caB.Certificate()), "dms.test", "dms.test"); err == nil {
		t.Error("A's connection verified against B's CA")
	}
	if ev := e.event(5); ev.Outcome != OutcomeDenied || ev.Reason != "tls_handshake" {
		t.Errorf("untrusted-CA event: %+v", ev)
	}
	if got := accepts.Load(); got != before {
		t.Errorf("refused requests reached the upstream: %d accepts, want %d", got, before)
	}
	for _, h := range rec.saw() {
		if h == "other.test" {
			t.Errorf("the upstream served other.test to a fronted request: %v", rec.saw())
		}
	}

	// The upstream is verified normally: a proxy that does not trust the
	// upstream's certificate answers 502 instead of passing it on.
	e2 := newEnv(t) // system roots only
	e2.setSandbox(e2.guestB, b)
	e2.resolveTo("other.test", e2.upIP)
	e2.upstream(443, &cert, rec)
	e2.start()
	if code, _, err := frontedGet(e2, e2.guestB, certPool(caB.Certificate()), "other.test", "other.test"); err != nil || code != http.StatusBadGateway {
		t.Errorf("untrusted upstream: %d %v, want 502", code, err)
	}
	if hosts := rec.saw(); len(hosts) != 2 {
		t.Errorf("upstream saw %v; want only the two allowed requests", hosts)
	}
}

// frontedGetRaw sends a raw request inside TLS and returns the status.
func frontedGetRaw(e *env, src netip.Addr, roots *x509.CertPool, sni, raw string) (int, string, error) {
	c, err := e.dialFrom(src, testTLSPort)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	tc := tls.Client(c, &tls.Config{ServerName: sni, RootCAs: roots})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(tc, raw); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestCAValidation(t *testing.T) {
	if err := (Sandbox{ID: "s", TLS: TLSInspect}).Validate(); err == nil || !strings.Contains(err.Error(), "ca: required") {
		t.Errorf("inspect without a CA: %v", err)
	}
	if err := (Sandbox{ID: "s", TLS: "sniff"}).Validate(); err == nil {
		t.Error("unknown TLS mode accepted")
	}
	ca, err := NewCA("s", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := ca.Certificate()
	if !c.IsCA || !c.MaxPathLenZero || strings.Contains(string(ca.CertPEM()), "PRIVATE KEY") {
		t.Errorf("CA certificate: IsCA %v MaxPathLenZero %v", c.IsCA, c.MaxPathLenZero)
	}
	l, err := ca.leaf("dms.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Leaf.Verify(x509.VerifyOptions{DNSName: "dms.test", Roots: certPool(c)}); err != nil {
		t.Errorf("leaf does not verify: %v", err)
	}
	if l2, _ := ca.leaf("dms.test"); l2 != l {
		t.Error("leaf not cached")
	}
}

// streamingUpstream answers every request with one line, then holds the
// response open until the client goes away, and reports each departure.
func streamingUpstream(gone chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "open "+r.Host+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			gone <- r.Host
		case <-time.After(30 * time.Second):
		}
	})
}

// openStream starts a request through the proxy and returns once the
// first line arrived, with the body still open.
func openStream(t *testing.T, c *http.Client, url string) io.ReadCloser {
	t.Helper()
	c.Timeout = 0
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "open ") {
		t.Fatalf("open %s: first line %q, %v", url, line, err)
	}
	return resp.Body
}

// closedSoon reports whether r ends (EOF or error) within a few seconds.
func closedSoon(r io.Reader) bool {
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, r); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

func waitGone(t *testing.T, gone <-chan string, want string) {
	t.Helper()
	select {
	case h := <-gone:
		if h != want {
			t.Errorf("upstream connection for %s closed, want %s", h, want)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("upstream connection for %s still open after the recheck", want)
	}
}

// TestRecheckClosesBothSides holds connections open across policy changes:
// those the new policy drops are closed on the guest side and on the
// upstream side by the time Recheck returns; the others carry on.
func TestRecheckClosesBothSides(t *testing.T) {
	cert, roots := testCert(t)
	e := newEnv(t)
	e.cfg.UpstreamTLS = &tls.Config{RootCAs: roots}
	e.setSandbox(e.guestA, sandboxA())
	e.setSandbox(e.guestB, sandboxB())
	for _, n := range []string{"dms.test", "other.test", "api.example.test", "api.upstream.test"} {
		e.resolveTo(n, e.upIP)
	}
	gone := make(chan string, 16)
	e.upstream(443, &cert, streamingUpstream(gone))
	e.upstream(80, nil, streamingUpstream(gone))
	e.start()
	clientA := func() *http.Client { return e.guestClient(e.guestA, roots) }

	tlsDMS := openStream(t, clientA(), "https://dms.test/")                       // spliced TLS
	httpDMS := openStream(t, clientA(), "http://dms.test/")                       // HTTP port
	wild := openStream(t, clientA(), "https://api.example.test/")                 // stays allowed
	route := openStream(t, clientA(), "http://llm.internal/stream")               // credential route
	other := openStream(t, e.guestClient(e.guestB, roots), "https://other.test/") // another sandbox

	// Revoke dms.test; keep the wildcard and the route as they are.
	a := sandboxA()
	a.Domains = a.Domains[1:]
	e.setSandbox(e.guestA, a)
	if n := e.proxy.Recheck(e.guestA); n != 2 {
		t.Errorf("Recheck closed %d connections, want 2 (dms.test over TLS and HTTP)", n)
	}
	waitGone(t, gone, "dms.test")
	waitGone(t, gone, "dms.test")
	if !closedSoon(tlsDMS) || !closedSoon(httpDMS) {
		t.Error("the guest side of a revoked connection stayed open")
	}

	// Rotating the route's secret ends calls made with the old one.
	a.Routes[0].Value = "Bearer rotated-" + testSecret[:4]
	e.setSandbox(e.guestA, a)
	if n := e.proxy.Recheck(e.guestA); n != 1 {
		t.Errorf("Recheck after a route change closed %d, want 1", n)
	}
	waitGone(t, gone, "api.upstream.test")
	if !closedSoon(route) {
		t.Error("the route call stayed open on the guest side")
	}

	// Switching to inspection ends spliced TLS sessions (their Host was
	// never seen); B is untouched throughout.
	ca, err := NewCA("sbx-a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a.TLS, a.CA = TLSInspect, ca
	e.setSandbox(e.guestA, a)
	if n := e.proxy.Recheck(e.guestA); n != 1 {
		t.Errorf("Recheck after switching to inspect closed %d, want 1", n)
	}
	waitGone(t, gone, "api.example.test")
	if !closedSoon(wild) {
		t.Error("a spliced session survived the switch to inspection")
	}

	// The sandbox ends: whatever it still had open goes too.
	inspected := openStream(t, e.guestClient(e.guestA, certPool(ca.Certificate())), "https://api.example.test/")
	e.mu.Lock()
	delete(e.sandboxes, e.guestA)
	e.mu.Unlock()
	if n := e.proxy.Recheck(e.guestA); n != 1 {
		t.Errorf("Recheck after the sandbox ended closed %d, want 1", n)
	}
	waitGone(t, gone, "api.example.test")
	if !closedSoon(inspected) {
		t.Error("an inspected session survived its sandbox")
	}

	select {
	case h := <-gone:
		t.Errorf("an unrelated upstream connection (%s) was closed", h)
	default:
	}
	other.Close()
	waitGone(t, gone, "other.test")

	var reasons []string
	for _, ev := range e.waitEvents(6) {
		if ev.SandboxID == "sbx-a" {
			reasons = append(reasons, ev.Reason)
		}
	}
	want := "policy_changed,policy_changed,policy_changed,policy_changed,sandbox_ended"
	slices.Sort(reasons)
	got := strings.Join(reasons, ",")
	if got != want {
		t.Errorf("sbx-a event reasons %s, want %s", got, want)
	}
}
