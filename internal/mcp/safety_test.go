package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionEndKillsSandboxes: the sandboxes a session created are
// killed when it ends, over HTTP (the client's DELETE) and over stdio
// (the client closing its end), and a session that goes idle ends too.
func TestSessionEndKillsSandboxes(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		e := newTestEnv(t, Options{})
		keep := e.connect(tenantA) // another session of the same tenant: untouched
		mustCall(t, keep, "sandbox_create", map[string]any{"template": "base"}, nil)
		cs := e.connect(tenantA)
		for range 3 {
			mustCall(t, cs, "sandbox_create", map[string]any{"template": "base"}, nil)
		}
		if n := e.running(tenantA); n != 4 {
			t.Fatalf("%d running before the session ends, want 4", n)
		}
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		e.waitRunning(tenantA, 1)
		if e.mcp.Sessions() != 1 {
			t.Errorf("%d live sessions after one of two ended", e.mcp.Sessions())
		}
		e.mcp.Close() // the daemon stopping ends the rest, session and all
		e.waitRunning(tenantA, 0)
		if _, err := keep.CallTool(context.Background(), &sdk.CallToolParams{Name: "sandbox_list",
			Arguments: map[string]any{}}); err == nil {
			t.Error("a session outlived the handler's Close")
		}
		if e.mcp.Sessions() != 0 {
			t.Errorf("%d live sessions after Close", e.mcp.Sessions())
		}
	})
	t.Run("stdio", func(t *testing.T) {
		e := newTestEnv(t, Options{})
		cs, served := e.stdio(t, tenantA)
		for range 2 {
			mustCall(t, cs, "sandbox_create", map[string]any{"template": "base"}, nil)
		}
		if n := e.running(tenantA); n != 2 {
			t.Fatalf("%d running before the session ends, want 2", n)
		}
		cs.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Serve did not return after the client went")
		}
		if n := e.running(tenantA); n != 0 {
			t.Errorf("%d running after Serve returned, want 0", n)
		}
	})
	t.Run("idle", func(t *testing.T) {
		e := newTestEnvCfg(t, HTTPConfig{IdleTimeout: 300 * time.Millisecond})
		cs := e.connect(tenantA)
		mustCall(t, cs, "sandbox_create", map[string]any{"template": "base"}, nil)
		e.waitRunning(tenantA, 0) // nothing asked for 300 ms: the session ended
	})
}

// stdio runs Serve over pipes with the Go client backend, as `airlock
// mcp` does, and connects the Go SDK's client to it.
func (e *testEnv) stdio(t testing.TB, tenant string) (*sdk.ClientSession, chan error) {
	t.Helper()
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), ClientBackend(e.client(tenant)), Options{Logger: e.mcp.opts.Logger}, sr, sw)
		sw.Close()
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "airlock-test-agent", Version: "1.2.3"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, served
}

// TestTenantIsolation: a second tenant sees nothing of the first's MCP
// sandboxes, whether through MCP or the API, cannot use its sandbox ids,
// and cannot take over its session with its own key; and one session
// cannot touch another's sandboxes, even of the same tenant.
func TestTenantIsolation(t *testing.T) {
	e := newTestEnv(t, Options{})
	a := e.connect(tenantA)
	var sbx SandboxInfo
	mustCall(t, a, "sandbox_create", map[string]any{"template": "base"}, &sbx)

	b := e.connect(tenantB)
	var list ListOutput
	mustCall(t, b, "sandbox_list", map[string]any{"all": true}, &list)
	if len(list.Sandboxes) != 0 {
		t.Errorf("tenant B's session lists %+v", list.Sandboxes)
	}
	for tool, args := range map[string]map[string]any{
		"sandbox_exec":      {"sandbox_id": sbx.SandboxID, "cmd": "true"},
		"sandbox_read_file": {"sandbox_id": sbx.SandboxID, "path": "/etc/motd"},
		"sandbox_kill":      {"sandbox_id": sbx.SandboxID},
	} {
		wantToolError(t, call(t, b, tool, args), "not_found")
	}
	sbxs, err := e.client(tenantB).ListSandboxes(context.Background(), nil)
	if err != nil || len(sbxs) != 0 {
		t.Errorf("tenant B's API list: %v, %v", sbxs, err)
	}
	a2 := e.connect(tenantA)
	wantToolError(t, call(t, a2, "sandbox_exec", map[string]any{"sandbox_id": sbx.SandboxID, "cmd": "true"}), "not_found")

	// Tenant B's key with tenant A's session id.
	hijack := &http.Client{Transport: sessionThief{key: e.keys[tenantB], session: a.ID()}}
	req, _ := http.NewRequest("POST", e.url+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sandbox_kill","arguments":{"sandbox_id":"`+sbx.SandboxID+`"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := hijack.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("another tenant's key on a session: %d %s, want 403", res.StatusCode, body)
	}
	if e.running(tenantA) != 1 {
		t.Error("tenant A's sandbox did not survive")
	}
}

// sessionThief sends a key and an Mcp-Session-Id that do not belong
// together.
type sessionThief struct{ key, session string }

func (s sessionThief) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+s.key)
	r.Header.Set("Mcp-Session-Id", s.session)
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return http.DefaultTransport.RoundTrip(r)
}

// TestOutputsCapped: an exec's output is cut at the limit and marked,
// and files over the limit are refused both ways with resource_exhausted.
func TestOutputsCapped(t *testing.T) {
	e := newTestEnv(t, Options{MaxOutputBytes: 64 << 10, MaxFileBytes: 256 << 10})
	cs := e.connect(tenantA)
	var sbx SandboxInfo
	mustCall(t, cs, "sandbox_create", map[string]any{"template": "base"}, &sbx)
	var out ExecOutput
	mustCall(t, cs, "sandbox_exec", map[string]any{"sandbox_id": sbx.SandboxID,
		"cmd": "head -c 300000 /dev/zero | tr '\\0' a; head -c 100 /dev/zero | tr '\\0' b >&2"}, &out)
	if len(out.Stdout) != 64<<10 || !out.Truncated || out.StdoutBytes != 300000 || len(out.Stderr) != 100 {
		t.Errorf("stdout %d bytes (of %d), stderr %d, truncated %v; want 65536 of 300000, 100, true",
			len(out.Stdout), out.StdoutBytes, len(out.Stderr), out.Truncated)
	}
	mustCall(t, cs, "sandbox_exec", map[string]any{"sandbox_id": sbx.SandboxID, "cmd": "head -c 300000 /dev/zero > big"}, nil)
	msg := wantToolError(t, call(t, cs, "sandbox_read_file", map[string]any{"sandbox_id": sbx.SandboxID, "path": "/big"}), "resource_exhausted")
	if !strings.Contains(msg, "head -c") {
		t.Errorf("the refusal does not say how to read part of it: %q", msg)
	}
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 300000))
	wantToolError(t, call(t, cs, "sandbox_write_file", map[string]any{"sandbox_id": sbx.SandboxID, "path": "/up",
		"content_base64": big}), "resource_exhausted")
	wantToolError(t, call(t, cs, "sandbox_write_file", map[string]any{"sandbox_id": sbx.SandboxID, "path": "/up",
		"content": strings.Repeat("y", 300000)}), "resource_exhausted")
	wantToolError(t, call(t, cs, "sandbox_write_file", map[string]any{"sandbox_id": sbx.SandboxID, "path": "/up"}), "invalid_argument")
	wantToolError(t, call(t, cs, "sandbox_exec", map[string]any{"sandbox_id": "sbx-nope", "cmd": "true"}), "not_found")
	wantToolError(t, call(t, cs, "sandbox_create", map[string]any{"template": "base", "egress": []string{"anywhere"}}), "invalid_argument")
	wantToolError(t, call(t, cs, "sandbox_create", map[string]any{"template": "base", "metadata": map[string]string{"mcp.session": "x"}}), "invalid_argument")
}

// TestDocsRoot: a document tool reads by path only under the docs root:
// "..", absolute paths outside and symlinks out are refused with errors
// that say so; paths inside it (relative, absolute, through a symlink
// that stays inside) are read. In the daemon each tenant has its own.
func TestDocsRoot(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	root := filepath.Join(base, tenantA)
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(base, tenantB)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "sub", "c.txt"), "Alice Smith, alice@example.com")
	write(filepath.Join(outside, "secret.txt"), "not for agents")
	write(filepath.Join(base, tenantB, "b.txt"), "tenant B's")
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "out.txt")))
	must(t, os.Symlink(outside, filepath.Join(root, "outdir")))
	must(t, os.Symlink("sub/c.txt", filepath.Join(root, "in.txt")))
	e := newTestEnv(t, Options{DocsRoot: base})
	cs := e.connect(tenantA)
	refused := map[string]string{
		"../" + tenantB + "/b.txt":            "permission_denied",
		"sub/../../" + tenantB + "/b.txt":     "permission_denied",
		filepath.Join(outside, "secret.txt"):  "permission_denied",
		filepath.Join(base, tenantB, "b.txt"): "permission_denied",
		"out.txt":                             "permission_denied",
		"outdir/secret.txt":                   "permission_denied",
		"missing.txt":                         "not_found",
		"sub":                                 "invalid_argument",
		"/etc/passwd":                         "permission_denied",
		"b.txt":                               "not_found", // tenant B's file is not in A's root
		filepath.Join(root, "..", tenantB, "b.txt"): "permission_denied",
	}
	for p, code := range refused {
		msg := wantToolError(t, call(t, cs, "redact_document", map[string]any{"path": p}), code)
		if code == "permission_denied" && !strings.Contains(msg, "docs root") {
			t.Errorf("%s: %q does not say it is outside the docs root", p, msg)
		}
	}
	for _, p := range []string{"sub/c.txt", "in.txt", filepath.Join(root, "sub", "c.txt")} {
		var r DocumentResult[RedactResult]
		mustCall(t, cs, "redact_document", map[string]any{"path": p}, &r)
		if r.Document.Bytes != 30 || r.Document.SHA256 == "" {
			t.Errorf("%s: document %+v, want the 30-byte file read", p, r.Document)
		}
	}
	noRoot := newTestEnv(t, Options{}).connect(tenantA)
	wantToolError(t, call(t, noRoot, "review_contract", map[string]any{"path": "c.pdf"}), "failed_precondition")
	wantToolError(t, call(t, cs, "review_contract", map[string]any{"path": "sub/c.txt", "content_base64": "eA=="}), "invalid_argument")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
