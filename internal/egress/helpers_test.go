package egress

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Test layout: every test gets its own 127.77.<n>.0/24 so tests never share
// sockets. .2 is the proxy, .10 and .11 are the guests of sandboxes A and B,
// .12 is a source no sandbox owns, .20 runs the upstream test servers.
// 127.0.0.0/8 is all loopback on Linux, so nothing needs configuring.
var testNet atomic.Int32

const (
	testHTTPPort = 18080
	testTLSPort  = 18443
	testDNSPort  = 18053
)

const testSecret = "sk-test-SECRET-4f9a1c" // must never appear in events or logs

type env struct {
	t        testing.TB
	proxy    *Proxy
	cfg      Config
	proxyIP  netip.Addr
	guestA   netip.Addr
	guestB   netip.Addr
	stranger netip.Addr
	upIP     netip.Addr

	mu        sync.Mutex
	sandboxes map[netip.Addr]Sandbox // guarded by mu
	names     map[string]netip.Addr  // guarded by mu; what Resolve answers
	ports     map[uint16]string      // guarded by mu; upstream port -> test server address
	events    []Event                // guarded by mu
	logs      bytes.Buffer           // guarded by mu (via lockedWriter)
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

// newEnv builds (but does not start) a proxy; tweak e.cfg, then e.start().
func newEnv(t testing.TB) *env {
	n := testNet.Add(1)
	ip := func(last int) netip.Addr { return netip.AddrFrom4([4]byte{127, 77, byte(n), byte(last)}) }
	e := &env{
		t: t, proxyIP: ip(2), guestA: ip(10), guestB: ip(11), stranger: ip(12), upIP: ip(20),
		sandboxes: map[netip.Addr]Sandbox{}, names: map[string]netip.Addr{}, ports: map[uint16]string{},
	}
	e.cfg = Config{
		ListenAddr: e.proxyIP,
		HTTPPort:   testHTTPPort, TLSPort: testTLSPort, DNSPort: testDNSPort,
		Lookup: func(src netip.Addr) (Sandbox, bool) {
			e.mu.Lock()
			defer e.mu.Unlock()
			sb, ok := e.sandboxes[src]
			return sb, ok
		},
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			if a, ok := e.names[host]; ok {
				return []netip.Addr{a}, nil
			}
			return nil, fmt.Errorf("no such host")
		},
		// Upstreams listen on random ports of upIP; the proxy dials the
		// standard ports, so map them here.
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			ap, err := netip.ParseAddrPort(addr)
			if err != nil {
				return nil, fmt.Errorf("test dial: proxy dialled a non-literal %q", addr)
			}
			e.mu.Lock()
			real, ok := e.ports[ap.Port()]
			e.mu.Unlock()
			if !ok || ap.Addr() != e.upIP {
				return nil, fmt.Errorf("test dial: unexpected %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, real)
		},
		AllowUpstream: func(a netip.Addr) bool { return a == e.upIP },
		Audit: func(ev Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
		},
		HeaderTimeout: 2 * time.Second,
	}
	e.cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&e.mu, &e.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return e
}

func (e *env) start() {
	e.t.Helper()
	p, err := New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.proxy = p
	e.t.Cleanup(func() {
		p.Close()
		e.assertNoSecret()
	})
}

func (e *env) setSandbox(src netip.Addr, sb Sandbox) {
	if err := sb.Validate(); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sandboxes[src] = sb
}

func (e *env) resolveTo(name string, a netip.Addr) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.names[name] = a
}

// upstream starts an httptest server on upIP that the proxy reaches at
// upIP:stdPort. tlsCert nil = plain HTTP.
func (e *env) upstream(stdPort uint16, tlsCert *tls.Certificate, h http.Handler) (accepts *atomic.Int32) {
	e.t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(e.upIP, 0).String())
	if err != nil {
		e.t.Fatal(err)
	}
	accepts = new(atomic.Int32)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepts.Add(1)
		}
	}
	if tlsCert != nil {
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{*tlsCert}}
		srv.StartTLS()
	} else {
		srv.Start()
	}
	e.t.Cleanup(srv.Close)
	e.mu.Lock()
	e.ports[stdPort] = ln.Addr().String()
	e.mu.Unlock()
	return accepts
}

// dialFrom opens a TCP connection from a guest address to a proxy port.
func (e *env) dialFrom(src netip.Addr, port int) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Timeout: 2 * time.Second}
	return d.Dial("tcp", net.JoinHostPort(e.proxyIP.String(), strconv.Itoa(port)))
}

// guestClient is an http.Client whose every connection comes from src and
// goes to the proxy's HTTP or TLS port, like a guest whose DNS points at the
// proxy.
func (e *env) guestClient(src netip.Addr, roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				port := testHTTPPort
				if strings.HasSuffix(addr, ":443") {
					port = testTLSPort
				}
				return e.dialFrom(src, port)
			},
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			DisableKeepAlives: true,
		},
	}
}

// waitEvents waits until at least n events were recorded and returns them.
func (e *env) waitEvents(n int) []Event {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		evs := append([]Event(nil), e.events...)
		e.mu.Unlock()
		if len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("want %d audit events, have %d: %+v", n, len(evs), evs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastEvent waits for the n-th event and returns it.
func (e *env) event(n int) Event {
	e.t.Helper()
	return e.waitEvents(n)[n-1]
}

func (e *env) assertNoSecret() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if s := fmt.Sprintf("%#v", ev); strings.Contains(s, testSecret) {
			e.t.Errorf("audit event contains the secret: %s", s)
		}
	}
	if strings.Contains(e.logs.String(), testSecret) {
		e.t.Errorf("logs contain the secret")
	}
}

// testCert is a self-signed certificate for the test names; trusting it as
// a root is enough for verification.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "egress test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"dms.test", "other.test", "*.example.test", "example.test", "api.upstream.test"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
