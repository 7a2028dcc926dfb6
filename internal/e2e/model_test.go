package e2e

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	invcorpus "github.com/airlock-dev/airlock/internal/docseval/invoicecorpus"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
)

// fakeModelHost is an OpenAI-compatible endpoint on a host of its own: a
// network namespace the test makes, reached from the host over a veth on a
// private /30 (so only an exact credential route may reach it). It is the
// one stand-in in these tests: a paid model API cannot run here.
type fakeModelHost struct {
	addr   string // host:port the upstream listens on (TLS)
	caFile string // PEM of the certificate it serves, for the daemon to trust
	mu     sync.Mutex
	auth   []string // Authorization headers seen
	docs   []string // user messages seen
}

func startFakeModelHost(t *testing.T, answer string) *fakeModelHost {
	t.Helper()
	f := &fakeModelHost{}
	ip, caFile := startUpstreamHost(t, "llm", nil, f.handler(answer))
	f.addr, f.caFile = net.JoinHostPort(ip.String(), "443"), caFile
	return f
}

// startUpstreamHost runs an HTTPS server on port 443 of a host of its own:
// a network namespace the test makes (named after tag), reached from the
// host over a veth on a private /30, so only exact rules and credential
// routes may reach it. Its certificate is self-signed for its address and
// names; caFile holds it, for the daemon (--egress-ca or SSL_CERT_FILE).
func startUpstreamHost(t *testing.T, tag string, names []string, h http.Handler) (ip netip.Addr, caFile string) {
	t.Helper()
	ns, _, upIP := upstreamNetns(t, tag)
	var ln net.Listener
	inNS(t, ns, func() error {
		var err error
		ln, err = net.Listen("tcp4", net.JoinHostPort(upIP.String(), "443"))
		return err
	})
	cert, pemBytes := selfSigned(t, upIP, names...)
	caFile = filepath.Join(t.TempDir(), tag+"-ca.pem")
	if err := os.WriteFile(caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return upIP, caFile
}

// upstreamNetns makes a host of its own for an upstream server: a network
// namespace named after tag, reached from the host over a veth on a
// private /30 (so only exact rules and credential routes may reach it).
// It returns the namespace, its name and the upstream's address in it.
func upstreamNetns(t *testing.T, tag string) (ns netns.NsHandle, name string, upIP netip.Addr) {
	t.Helper()
	name = netpooltest.NetnsName(tag)
	base := netip.MustParsePrefix(netpooltest.FreeBase(t, 30))
	hostIP := base.Addr().Next()
	upIP = hostIP.Next()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	ns, err = netns.NewNamed(name)
	netns.Set(orig)
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("%s netns: %v", tag, err)
	}
	t.Cleanup(func() { ns.Close(); netns.DeleteNamed(name) })
	veth := netpooltest.Instance() + tag
	la := netlink.NewLinkAttrs()
	la.Name = veth
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}); err != nil {
		t.Fatalf("veth: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(veth); err == nil {
			netlink.LinkDel(l)
		}
	})
	hl, _ := netlink.LinkByName(veth)
	must30 := func(a netip.Addr) *netlink.Addr {
		return &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(30, 32)}}
	}
	if err := netlink.AddrAdd(hl, must30(hostIP)); err != nil {
		t.Fatal(err)
	}
	netlink.LinkSetUp(hl)
	inNS(t, ns, func() error {
		nh, err := netlink.NewHandleAt(ns)
		if err != nil {
			return err
		}
		defer nh.Close()
		l, _ := nh.LinkByName("eth0")
		lo, _ := nh.LinkByName("lo")
		nh.AddrAdd(l, must30(upIP))
		nh.LinkSetUp(l)
		nh.LinkSetUp(lo)
		return nil
	})
	return ns, name, upIP
}

// selfSigned makes a certificate for ip and names (credential routes must
// use https: a key never crosses a network in clear).
func selfSigned(t *testing.T, ip netip.Addr, names ...string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e upstream"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{ip.AsSlice()}, DNSNames: names, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pemBytes
}

func inNS(t *testing.T, ns netns.NsHandle, fn func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, _ := netns.Get()
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		err := fn()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func (f *fakeModelHost) handler(answer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		if len(req.Messages) == 2 {
			f.docs = append(f.docs, req.Messages[1].Content)
		}
		f.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"content": answer}, "finish_reason": "stop"}}})
	})
}

// TestInvoiceWithModel asks a tenant's model for a second reading of an
// invoice: the guest reaches it only as llm.internal through the daemon's
// egress proxy, which adds the key (the guest never has it); the document
// arrives fenced as data; the model's disagreement on the total sends the
// invoice to review; the rules' value stands.
func TestInvoiceWithModel(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "invoice-ocr")
	c, err := invcorpus.Generate(11, 21)
	if err != nil {
		t.Fatal(err)
	}
	var cs *invcorpus.Case
	for i := range c.Cases {
		if c.Cases[i].Clean() && c.Cases[i].Render.Mode == invcorpus.ModeTextPDF {
			cs = &c.Cases[i]
			break
		}
	}
	answer, _ := json.Marshal(map[string]any{"vendor_name": cs.Truth.VendorName, "invoice_number": cs.Truth.InvoiceNumber,
		"invoice_date": nil, "due_date": nil, "currency": cs.Truth.Currency, "subtotal": nil, "tax": nil, "shipping": nil,
		"total": "1.00", "po_number": nil, "iban": nil, "bic": nil, "account_number": nil, "routing_number": nil,
		"sort_code": nil, "vendor_tax_id": nil, "line_items": nil})
	model := startFakeModelHost(t, string(answer))
	const secret = "sk-e2e-model-key-0042"
	creds := filepath.Join(t.TempDir(), "credentials.json")
	os.WriteFile(creds, []byte(fmt.Sprintf(`{%q: [{"name": "llm", "host": "llm.internal", "upstream": "https://%s",
		"header": "Authorization", "value": "Bearer %s"}]}`, tenantA, model.addr, secret)), 0o600)
	// The daemon's proxy verifies the upstream normally; the test's CA is
	// the only extra root it trusts.
	d := startDaemonEnv(t, e, []string{"SSL_CERT_FILE=" + model.caFile}, "--net", "--net-base-cidr", netpooltest.FreeBase(t, 24), "--proxy-addr", netpooltest.FreeAddr(t),
		"--credentials", creds)

	dir := t.TempDir()
	var b bytes.Buffer
	if err := invcorpus.WriteDocument(&b, cs); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "invoice.pdf"), b.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "vendors.json"), invcorpus.VendorMaster(), 0o644)
	args := []string{"invoice", "--json", "--tenant", invcorpus.TenantID, "--vendors", filepath.Join(dir, "vendors.json"),
		"--as-of", invcorpus.AsOf().Format("2006-01-02"), "--history", filepath.Join(t.TempDir(), "h.db"),
		"--model", "llm.internal", "--model-name", "test-model", filepath.Join(dir, "invoice.pdf")}
	out, stderr, code := d.cli(t, tenantA, args...)
	if code != 0 {
		t.Fatalf("airlock invoice --model: exit %d\n%s", code, stderr)
	}
	var l struct {
		Decision     string                          `json:"decision"`
		Flags        []struct{ Code, Detail string } `json:"flags"`
		Fields       map[string]any                  `json:"fields"`
		FieldSources map[string]struct {
			Method string
			Issues []string
		} `json:"field_sources"`
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.auth) != 1 || model.auth[0] != "Bearer "+secret {
		t.Fatalf("the model saw Authorization %q; want the proxy's injected key, once", model.auth)
	}
	if !strings.HasPrefix(model.docs[0], "<document>\n") || !strings.Contains(model.docs[0], *cs.Truth.InvoiceNumber) {
		t.Errorf("the model was not sent the fenced document: %.200q", model.docs[0])
	}
	if l.Fields["total"] != *cs.Truth.Total || l.Decision != "review" {
		t.Errorf("decision %s, total %v (printed %s); want the rules' total kept and review\n%s", l.Decision, l.Fields["total"], *cs.Truth.Total, out)
	}
	if src := l.FieldSources["total"]; !containsStr(src.Issues, "model_disagrees") {
		t.Errorf("total source %+v; want model_disagrees", src)
	}
	if strings.Contains(out, secret) || strings.Contains(stderr, secret) {
		t.Error("the model key reached the job's output")
	}

	// Without a daemon the guest has no way to the model: a usage error.
	if _, _, code := e.cli(t, append(args[:len(args)-1], "--state-dir", e.stateDir, filepath.Join(dir, "invoice.pdf"))...); code != 2 {
		t.Errorf("--model without --url: exit %d, want 2", code)
	}
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
