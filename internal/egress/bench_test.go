package egress

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Proxy throughput on loopback: a guest client downloads a body through
// the proxy from an upstream in the same process, one connection per
// request, as guests do. Compare with BenchmarkDirect* (same client and
// upstream, no proxy) to see the proxy's own cost. Run with
//
//	go test -run '^$' -bench . -benchtime 20x ./internal/egress/
const benchBody = 8 << 20

func benchUpstream(b *testing.B) (*env, []byte) {
	body := bytes.Repeat([]byte("airlock-"), benchBody/8)
	e := newEnv(b)
	e.cfg.Audit = func(Event) {} // events would pile up over b.N requests
	e.setSandbox(e.guestA, sandboxA())
	e.resolveTo("dms.test", e.upIP)
	return e, body
}

func download(b *testing.B, c *http.Client, url string) {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != benchBody || resp.StatusCode != 200 {
		b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
	}
}

// BenchmarkProxyHTTP: plain HTTP domain rule (request parsed, response
// forwarded by the proxy's HTTP client).
func BenchmarkProxyHTTP(b *testing.B) {
	e, body := benchUpstream(b)
	e.upstream(80, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	e.start()
	c := e.guestClient(e.guestA, nil)
	b.SetBytes(benchBody)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		download(b, c, "http://dms.test/doc")
	}
}

// BenchmarkProxyTLS: HTTPS through a domain rule (SNI read, then bytes
// spliced; TLS is end to end, so this includes both ends' crypto).
func BenchmarkProxyTLS(b *testing.B) {
	e, body := benchUpstream(b)
	cert, roots := testCert(b)
	e.upstream(443, &cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	e.start()
	c := e.guestClient(e.guestA, roots)
	b.SetBytes(benchBody)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		download(b, c, "https://dms.test/doc")
	}
}

// BenchmarkDirectHTTP is BenchmarkProxyHTTP's baseline: the same client
// straight to the upstream.
func BenchmarkDirectHTTP(b *testing.B) {
	e, body := benchUpstream(b)
	e.upstream(80, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	e.mu.Lock()
	addr := e.ports[80]
	e.mu.Unlock()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	b.SetBytes(benchBody)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		download(b, c, "http://"+addr+"/doc")
	}
}
