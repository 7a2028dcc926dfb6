package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
)

// These tests drive the server with real MCP clients over the daemon's
// real API handler, on a real sandbox manager whose machines are local
// (internal/sandbox/localmachines: directories and host processes, no
// VMs). The manager and the API share one store, so the audit records the
// manager writes are the ones a tenant reads. internal/e2e runs the agent
// loop on real VMs.

const (
	tenantA = "acme"
	tenantB = "globex"
)

type testEnv struct {
	t    testing.TB
	st   *store.Store
	mgr  *sandbox.Manager
	mcp  *HTTPHandler
	url  string            // http://127.0.0.1:port
	keys map[string]string // tenant -> API key
}

// apiCaller is how the daemon wires api.CallerFrom into HTTPConfig.
func apiCaller(r *http.Request) (string, string, bool) {
	c, ok := api.CallerFrom(r.Context())
	return c.Tenant, c.KeyID, ok
}

// newTestEnv serves the API, with /mcp, over a local-machines manager
// with one template, base.
func newTestEnv(t testing.TB, opts Options) *testEnv {
	t.Helper()
	return newTestEnvCfg(t, HTTPConfig{Options: opts})
}

// newTestEnvCfg is newTestEnv with the MCP handler's whole configuration
// (Caller and Backend are filled in).
func newTestEnvCfg(t testing.TB, cfg HTTPConfig) *testEnv {
	t.Helper()
	opts := cfg.Options
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	layer, err := localmachines.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, nil); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	mgr, err := sandbox.New(context.Background(), sandbox.Config{Machines: layer, TemplateSource: layer, Store: st,
		WarmPool: -1, MaxTTL: 2 * time.Hour, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Shutdown(context.Background()) })
	if opts.Logger == nil {
		opts.Logger = log
	}
	e := &testEnv{t: t, st: st, mgr: mgr, keys: map[string]string{}}
	cfg.Caller, cfg.Options = apiCaller, opts
	cfg.Backend = func(tenant string) Backend { return ManagerBackend(mgr, tenant) }
	e.mcp = NewHTTPHandler(cfg)
	t.Cleanup(func() { e.mcp.Close() })
	h := api.New(api.Config{Backend: mgr, Store: st, Logger: log, MCP: e.mcp})
	l, err := api.ListenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = api.Serve(ctx, h, api.ServeOptions{Log: log}, l) }()
	t.Cleanup(func() { cancel(); <-done })
	e.url = "http://" + l.Addr().(*net.TCPAddr).String()
	for _, tenant := range []string{tenantA, tenantB} {
		k, _, err := st.CreateKey(context.Background(), tenant, "test")
		if err != nil {
			t.Fatal(err)
		}
		e.keys[tenant] = k
	}
	return e
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over streamable HTTP with tenant's key,
// as the Go SDK's client named airlock-test-agent 1.2.3; it is closed
// when the test ends unless the test closed it.
func (e *testEnv) connect(tenant string) *sdk.ClientSession {
	e.t.Helper()
	return e.connectKey(e.keys[tenant], nil)
}

func (e *testEnv) connectKey(key string, hc *http.Client) *sdk.ClientSession {
	e.t.Helper()
	if hc == nil {
		hc = &http.Client{Transport: bearer{key}}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "airlock-test-agent", Version: "1.2.3"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// client is a Go API client of tenant.
func (e *testEnv) client(tenant string) *client.Client {
	e.t.Helper()
	c, err := client.New(e.url, e.keys[tenant])
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// running counts tenant's running sandboxes.
func (e *testEnv) running(tenant string) int {
	e.t.Helper()
	infos, err := e.mgr.List(context.Background(), sandbox.ListFilter{Tenant: tenant})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(infos)
}

// waitRunning waits until tenant has want running sandboxes.
func (e *testEnv) waitRunning(tenant string, want int) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := e.running(tenant)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("tenant %s has %d running sandboxes, want %d", tenant, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call runs a tool and fails the test on a protocol error; a tool error
// is returned as the result (IsError).
func call(t testing.TB, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// mustCall is call for a tool that must succeed; it decodes the
// structured result into out.
func mustCall(t testing.TB, cs *sdk.ClientSession, tool string, args, out any) *sdk.CallToolResult {
	t.Helper()
	res := call(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, contentText(res))
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured result %s: %v", tool, b, err)
		}
	}
	return res
}

// wantToolError checks a call failed as a tool error with code, and
// returns its message.
func wantToolError(t testing.TB, res *sdk.CallToolResult, code string) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error %s, got success: %s", code, contentText(res))
	}
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(contentText(res)), &body); err != nil {
		t.Fatalf("tool error is not the API's error shape: %q", contentText(res))
	}
	if body.Error.Code != code || res.Meta[MetaErrorCode] != code {
		t.Fatalf("tool error %q (meta %v), want code %s", contentText(res), res.Meta[MetaErrorCode], code)
	}
	return body.Error.Message
}

func contentText(res *sdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
