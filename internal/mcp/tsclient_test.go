package mcp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// tsAgent is what testdata/tsclient/agent.mjs prints.
type tsAgent struct {
	Server string   `json:"server"`
	Tools  []string `json:"tools"`
	Exec   struct {
		ExitCode  int      `json:"exit_code"`
		Untrusted []string `json:"untrusted"`
		Fenced    bool     `json:"fenced"`
	} `json:"exec"`
	Facts struct {
		Bytes int  `json:"bytes"`
		PDF   bool `json:"pdf"`
	} `json:"facts"`
	ContractBytes int `json:"contract_bytes"`
	Big           struct {
		Stdout    int  `json:"stdout"`
		Truncated bool `json:"truncated"`
	} `json:"big"`
	Review *struct {
		OK    bool `json:"ok"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Statuses []string `json:"statuses"`
	} `json:"review"`
	Refused   string   `json:"refused"`
	Listed    []string `json:"listed"`
	Killed    bool     `json:"killed"`
	SandboxID string   `json:"sandbox_id"`
}

// runTSAgent runs the TypeScript SDK's client script with cfg, skipping
// the test where node or the npm packages (scripts/setup.sh) are missing.
func runTSAgent(t *testing.T, cfg map[string]any) tsAgent {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (run scripts/setup.sh)")
	}
	cache := os.Getenv("AIRLOCK_CACHE_DIR")
	if cache == "" {
		cache = "/var/cache/airlock"
	}
	modules := filepath.Join(cache, "npm", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the MCP TypeScript SDK is not in %s (run scripts/setup.sh)", modules)
	}
	// The script beside its node_modules, as node resolves packages.
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "tsclient", "agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent.mjs"), src, 0o644))
	must(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	arg, _ := json.Marshal(cfg)
	cmd := exec.Command(node, filepath.Join(dir, "agent.mjs"), string(arg))
	cmd.Stderr = &testWriter{t: t}
	began := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node agent.mjs: %v", err)
	}
	t.Logf("the TypeScript agent ran in %s", time.Since(began).Round(time.Millisecond))
	var got tsAgent
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("agent output %q: %v", out, err)
	}
	return got
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("node: %s", p)
	return len(p), nil
}

// TestTypeScriptClient: the official TypeScript SDK's client lists the
// tools (their schemas compile in ajv, and it validates every structured
// result against them) and runs the scripted agent loop over streamable
// HTTP through the API's /mcp.
func TestTypeScriptClient(t *testing.T) {
	docs := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(docs, tenantA), 0o755))
	e := newTestEnv(t, Options{DocsRoot: docs})
	contract, _ := filepath.Abs(filepath.Join("..", "..", "examples", "contract.pdf"))
	got := runTSAgent(t, map[string]any{"transport": "http", "url": e.url + "/mcp", "key": e.keys[tenantA],
		"contract": contract, "review": map[string]any{"content_base64": "JVBERi0xLjQK", "filename": "c.pdf"}})
	checkTSAgent(t, got)
	// Local machines have no legal-doc-review template: the review fails
	// as the platform's, with a result the client validated.
	if got.Review == nil || got.Review.OK || got.Review.Error == nil || got.Review.Error.Code != "sandbox_failed" {
		t.Errorf("review: %+v, want a sandbox_failed result", got.Review)
	}
	if n := e.running(tenantA); n != 0 {
		t.Errorf("%d sandboxes still running after the TypeScript agent left", n)
	}
}

func checkTSAgent(t *testing.T, got tsAgent) {
	t.Helper()
	if got.Server != "airlock" || !slices.Equal(got.Tools, toolNames) {
		t.Errorf("server %q, tools %v; want airlock, %v", got.Server, got.Tools, toolNames)
	}
	if got.Exec.ExitCode != 0 || !got.Exec.Fenced || !slices.Equal(got.Exec.Untrusted, []string{"stdout", "stderr"}) {
		t.Errorf("exec: %+v", got.Exec)
	}
	if got.Facts.Bytes != got.ContractBytes || !got.Facts.PDF {
		t.Errorf("the agent script's facts %+v, want %d bytes of PDF", got.Facts, got.ContractBytes)
	}
	if got.Big.Stdout != 64<<10 || !got.Big.Truncated {
		t.Errorf("oversized output: %+v, want 65536 characters, truncated", got.Big)
	}
	if got.Refused != "permission_denied" {
		t.Errorf("a path out of the docs root: %q, want permission_denied", got.Refused)
	}
	if !slices.Equal(got.Listed, []string{got.SandboxID}) || !got.Killed {
		t.Errorf("listed %v, killed %v; want [%s], true", got.Listed, got.Killed, got.SandboxID)
	}
}
