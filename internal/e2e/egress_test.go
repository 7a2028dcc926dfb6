package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
)

// frontHost is an upstream serving two names on one address, as a CDN
// front does: it answers with the Host it was asked for, and /hold keeps
// a response open until the client goes away.
type frontHost struct {
	mu       sync.Mutex
	hosts    []string    // Host of every request, in order
	held     chan string // a /hold request started (its query)
	released chan string // a /hold request's client went away
}

func (f *frontHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hosts = append(f.hosts, r.Host)
	f.mu.Unlock()
	if r.URL.Path == "/hold" {
		io.WriteString(w, "held\n")
		w.(http.Flusher).Flush()
		f.held <- r.URL.RawQuery
		select {
		case <-r.Context().Done():
			f.released <- r.URL.RawQuery
		case <-time.After(2 * time.Minute):
		}
		return
	}
	io.WriteString(w, "hello from "+r.Host+"\n")
}

func (f *frontHost) saw(host string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.hosts {
		if h == host {
			return true
		}
	}
	return false
}

// TestEgressThroughDaemon drives the egress proxy from real guests (curl
// in a shipped template) through a --net daemon: passthrough and
// inspecting TLS, domain fronting, a download held open across a policy
// change and across a kill, and a second tenant in the same run.
func TestEgressThroughDaemon(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "base") // curl and the CA bundle: the job templates have neither
	front := &frontHost{held: make(chan string, 4), released: make(chan string, 4)}
	ip, caFile := startUpstreamHost(t, "cdn", []string{"api.test", "other.test"}, front)
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte(fmt.Sprintf("# the front\n%s api.test other.test\n", ip)), 0o644)
	d := startDaemon(t, e, "--net", "--net-base-cidr", netpooltest.FreeBase(t, 24), "--proxy-addr", netpooltest.FreeAddr(t),
		"--egress-hosts", hosts, "--egress-ca", caFile)
	ctx := context.Background()
	ca := d.client(t, tenantA)
	cb := d.client(t, tenantB)
	apiOnly := client.EgressPolicy{Default: "deny", Allow: []client.EgressRule{{Name: "api", Domain: "api.test"}}}

	create := func(c *client.Client, pol client.EgressPolicy) *client.Sandbox {
		t.Helper()
		sbx, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base", Egress: &pol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sbx.Kill(context.Background()) })
		return sbx
	}
	sh := func(sbx *client.Sandbox, script string) (string, int) {
		t.Helper()
		res, err := sbx.Exec(ctx, script, client.WithTimeout(2*time.Minute))
		if err != nil {
			t.Fatalf("exec in %s: %v", sbx.ID, err)
		}
		return res.Stdout + res.Stderr, res.ExitCode
	}
	// curl prints the status code last; -k only where the guest has no
	// reason to trust the upstream's test certificate (passthrough).
	curl := func(flags, url string) string {
		return fmt.Sprintf(`curl -sS --max-time 20 -w '\n%%{http_code}\n' %s %s`, flags, url)
	}

	t.Run("Passthrough", func(t *testing.T) {
		sbx := create(ca, apiOnly)
		out, code := sh(sbx, curl("-k", "https://api.test/"))
		if code != 0 || !strings.Contains(out, "hello from api.test") {
			t.Fatalf("allowed name: exit %d %q", code, out)
		}
		// The documented limit of passthrough: the front serves another
		// name to a request inside an allowed SNI.
		out, _ = sh(sbx, curl("-k -H 'Host: other.test'", "https://api.test/"))
		if !strings.Contains(out, "hello from other.test") {
			t.Errorf("fronting in passthrough: %q; the README says it gets through", out)
		}
		out, code = sh(sbx, curl("-k", "https://other.test/"))
		if code == 0 {
			t.Errorf("SNI other.test reached the upstream: %q", out)
		}
	})

	t.Run("Inspect", func(t *testing.T) {
		before := front.saw("other.test")
		pol := apiOnly
		pol.TLS = "inspect"
		sbx := create(ca, pol)
		// No -k: the guest verifies the proxy's certificate with its own
		// system bundle, which holds its sandbox's CA.
		out, code := sh(sbx, curl("", "https://api.test/x"))
		if code != 0 || !strings.Contains(out, "hello from api.test") || !strings.HasSuffix(strings.TrimSpace(out), "200") {
			t.Fatalf("inspected request: exit %d %q", code, out)
		}
		out, _ = sh(sbx, curl("-H 'Host: other.test'", "https://api.test/"))
		if !strings.Contains(out, "domain fronting") || !strings.HasSuffix(strings.TrimSpace(out), "421") {
			t.Errorf("fronting under inspection: %q, want 421", out)
		}
		if !before && front.saw("other.test") {
			t.Error("the upstream served other.test to a fronted request under inspection")
		}
		// The same switch at run time, through the CLI, on a sandbox made
		// in passthrough mode.
		sbx2 := create(ca, apiOnly)
		if out, stderr, code := d.cli(t, tenantA, "sandbox", "egress", sbx2.ID, "--allow", "api=api.test", "--tls", "inspect"); code != 0 ||
			!strings.Contains(out, "tls inspect") {
			t.Fatalf("sandbox egress --tls inspect: exit %d %q %s", code, out, stderr)
		}
		if out, code := sh(sbx2, curl("", "https://api.test/")); code != 0 || !strings.Contains(out, "hello from api.test") {
			t.Errorf("after switching to inspection: exit %d %q", code, out)
		}
		recs, err := ca.Audit(ctx, client.AuditFilter{SandboxID: sbx.ID})
		if err != nil {
			t.Fatal(err)
		}
		var sawDenied bool
		for _, r := range recs {
			if r.Event == "egress" && r.Detail["reason"] == "host_mismatch" {
				sawDenied = true
			}
			if strings.Contains(fmt.Sprint(r), "other.test") {
				t.Errorf("an audit record names the refused host: %+v", r)
			}
		}
		if !sawDenied {
			t.Errorf("no host_mismatch egress record: %+v", recs)
		}

		// A daemon killed and restarted has lost the CA's key: it makes a
		// new CA and installs it in the re-attached guest, whose inspected
		// TLS works again.
		d.crash(t)
		d.start(t)
		var out2 string
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			res, err := sbx.Exec(ctx, curl("", "https://api.test/again"), client.WithTimeout(time.Minute))
			if err == nil && res.ExitCode == 0 && strings.Contains(res.Stdout, "hello from api.test") {
				break
			}
			if err == nil {
				out2 = res.Stdout + res.Stderr
			} else {
				out2 = err.Error()
			}
			if time.Now().After(deadline) {
				t.Fatalf("inspected request after a daemon restart: %s", out2)
			}
		}
		out, _ = sh(sbx, "grep -c 'BEGIN CERTIFICATE' /usr/local/share/ca-certificates/airlock-egress.crt; grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt")
		t.Logf("after the restart: CA file certificates, bundle certificates: %q", out)
	})

	// A download held open through the proxy ends at the upstream by the
	// time `sandbox egress --deny-all` returns, and when the sandbox is
	// killed.
	t.Run("HeldConnections", func(t *testing.T) {
		sbx := create(ca, apiOnly)
		for _, end := range []string{"policy", "kill"} {
			go sbx.Exec(context.Background(), curl("-k -N", "https://api.test/hold?"+end), client.WithTimeout(90*time.Second))
			select {
			case q := <-front.held:
				if q != end {
					t.Fatalf("held %q, want %q", q, end)
				}
			case <-time.After(90 * time.Second):
				t.Fatalf("the guest's download (%s) never started", end)
			}
			if end == "policy" {
				if _, stderr, code := d.cli(t, tenantA, "sandbox", "egress", sbx.ID, "--deny-all"); code != 0 {
					t.Fatalf("sandbox egress --deny-all: %s", stderr)
				}
			} else {
				if _, stderr, code := d.cli(t, tenantA, "sandbox", "kill", sbx.ID); code != 0 {
					t.Fatalf("sandbox kill: %s", stderr)
				}
			}
			select {
			case q := <-front.released:
				if q != end {
					t.Errorf("released %q, want %q", q, end)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("after %s, the upstream connection was still open", end)
			}
			if end == "policy" {
				if err := sbx.SetEgress(ctx, apiOnly); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	// A second tenant: its own rules work in its own sandbox, tenant A's
	// sandboxes and rules are invisible to it, and A's deny-all sandbox
	// stays closed meanwhile.
	t.Run("SecondTenant", func(t *testing.T) {
		b := create(cb, client.EgressPolicy{Default: "deny", Allow: []client.EgressRule{{Name: "other", Domain: "other.test"}}})
		a := create(ca, client.DenyAll())
		if out, code := sh(b, curl("-k", "https://other.test/")); code != 0 || !strings.Contains(out, "hello from other.test") {
			t.Errorf("tenant B's own rule: exit %d %q", code, out)
		}
		if out, code := sh(b, curl("-k", "https://api.test/")); code == 0 {
			t.Errorf("tenant B reached tenant A's name: %q", out)
		}
		if out, code := sh(a, curl("-k", "https://other.test/")); code == 0 {
			t.Errorf("A's deny-all sandbox reached B's name: %q", out)
		}
		if _, err := cb.GetSandbox(ctx, a.ID); err == nil {
			t.Error("tenant B can see tenant A's sandbox")
		}
		if err := cb.Sandbox(a.ID).SetEgress(ctx, client.EgressPolicy{Default: "allow"}); err == nil {
			t.Error("tenant B changed tenant A's egress")
		}
	})
}
