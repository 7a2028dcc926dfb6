package egress

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/publish/davtest"
)

// TestCredentialRoutePutDAV sends WebDAV PUTs through a credential route
// to a real nginx (http_dav_module, HTTP Basic, TLS): bodies sized by
// Content-Length, chunked, and behind "Expect: 100-continue" (what curl
// sends for large files) all land byte for byte; the guest's own
// Authorization is replaced by the route's; a route with a wrong secret
// gets the server's 401 and writes nothing; the secret appears in no
// event or log.
func TestCredentialRoutePutDAV(t *testing.T) {
	e := newEnv(t)
	port := freePort(t, e.upIP)
	const user = "publisher"
	dav := davtest.Start(t, davtest.Options{Addr: netip.AddrPortFrom(e.upIP, port), User: user, Password: testSecret,
		TLS: true, Names: []string{"dav.upstream.test"}})
	pem, err := os.ReadFile(dav.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	e.cfg.UpstreamTLS = &tls.Config{RootCAs: roots}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+testSecret))
	route := func(name, host, value string) CredentialRoute {
		return CredentialRoute{Name: name, Host: host, Upstream: "https://dav.upstream.test/airlock", Header: "Authorization", Value: value}
	}
	e.setSandbox(e.guestA, Sandbox{ID: "sbx-dav", Tenant: "tenant-1", Routes: []CredentialRoute{
		route("dav", "dav.internal", basic), route("dav-wrong", "wrong.internal", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":nope")))}})
	e.resolveTo("dav.upstream.test", e.upIP)
	e.mu.Lock()
	e.ports[443] = netip.AddrPortFrom(e.upIP, port).String()
	e.mu.Unlock()
	e.start()

	body := bytes.Repeat([]byte("report <ins>redline</ins>\n"), 80<<10) // ~2 MiB
	put := func(host, path string, r io.Reader, length int64, expect bool) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, "http://"+host+path, r)
		req.ContentLength = length
		req.Header.Set("Authorization", "Basic Z3Vlc3Q6Zm9yZ2Vk") // the guest's forgery is replaced
		if expect {
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := e.guestClient(e.guestA, nil).Do(req)
		if err != nil {
			t.Fatalf("PUT %s%s: %v", host, path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, c := range []struct {
		name   string
		length int64
		expect bool
	}{{"sized", int64(len(body)), false}, {"chunked", -1, false}, {"expect", int64(len(body)), true}} {
		path := fmt.Sprintf("/reports/%s.html", c.name)
		var r io.Reader = bytes.NewReader(body)
		if c.length < 0 {
			r = io.MultiReader(r) // hides the length: sent chunked
		}
		if st := put("dav.internal", path, r, c.length, c.expect); st != http.StatusCreated {
			t.Fatalf("%s: status %d, want 201\n%s", c.name, st, dav.Logs())
		}
		got, err := dav.File("airlock" + path)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: nginx holds %d bytes (%v), want %d", c.name, len(got), err, len(body))
		}
		ev := e.event(i + 1)
		if ev.Kind != KindCredential || ev.Rule != "dav" || ev.Host != "dav.internal" || ev.Status != 201 || ev.BytesUp < int64(len(body)) {
			t.Errorf("%s: event %+v", c.name, ev)
		}
	}
	if st := put("wrong.internal", "/reports/x.html", bytes.NewReader(body), int64(len(body)), false); st != http.StatusUnauthorized {
		t.Fatalf("wrong secret: status %d, want 401", st)
	}
	if _, err := dav.File("airlock/reports/x.html"); !os.IsNotExist(err) {
		t.Fatalf("a refused PUT left a file: %v", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range []string{basic, basic[len("Basic "):]} {
		if strings.Contains(e.logs.String(), s) || strings.Contains(fmt.Sprintf("%#v", e.events), s) {
			t.Errorf("the route's credential is in the proxy's logs or events")
		}
	}
}

// freePort is a TCP port nothing listens on at a.
func freePort(t *testing.T, a netip.Addr) uint16 {
	t.Helper()
	l, err := net.Listen("tcp4", netip.AddrPortFrom(a, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return netip.MustParseAddrPort(l.Addr().String()).Port()
}
