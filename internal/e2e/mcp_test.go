package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/docseval/testdocs"
)

// The MCP server on real VMs: an agent loop driven by the Go SDK's
// client over the daemon's /mcp (streamable HTTP on its unix socket), and
// by the official TypeScript SDK's client over `airlock mcp` (stdio).

var mcpTools = []string{"extract_invoice", "redact_document", "review_contract", "sandbox_create", "sandbox_exec",
	"sandbox_kill", "sandbox_list", "sandbox_read_file", "sandbox_write_file"}

// mcpAgentScript is what an agent might write: facts about the contract.
const mcpAgentScript = `import hashlib, json
data = open("job/contract.pdf", "rb").read()
facts = {"bytes": len(data), "pdf": data.startswith(b"%PDF"), "sha256": hashlib.sha256(data).hexdigest()}
open("job/facts.json", "w").write(json.dumps(facts))
print(json.dumps(facts))
`

// TestMCPAgentLoop: create a base sandbox (python3), upload a contract,
// run an agent-written Python script on it, review the contract with
// review_contract in legal-doc-review sandboxes (by path under the docs
// root), read the result and its HTML report, and end; the session's end
// kills its sandboxes, the other tenant sees none of them, and the audit
// log names the client and the session.
func TestMCPAgentLoop(t *testing.T) {
	e := getEnv(t)
	docsTemplate(t, e, "base")
	docsTemplate(t, e, "legal-doc-review")
	docs := t.TempDir()
	contract, err := os.ReadFile(filepath.Join(e.root, "examples", "contract.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(docs, tenantA), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, tenantA, "contract.pdf"), contract, 0o644); err != nil {
		t.Fatal(err)
	}
	docsTemplate(t, e, "invoice-ocr")
	docsTemplate(t, e, "pii-redact")
	// A store of its own (templates shared): "the other tenant sees none
	// of them" must not count what other tests made as that tenant.
	d := startDaemon(t, e.withOwnState(t), "--mcp-docs-root", docs)
	t.Run("go-sdk-http", func(t *testing.T) { mcpGoAgent(t, d, contract) })
	t.Run("invoice-and-redaction", func(t *testing.T) { mcpDocumentTools(t, d) })
	t.Run("ts-sdk-stdio", func(t *testing.T) { mcpTSAgent(t, d, filepath.Join(docs, tenantA)) })
	t.Run("daemon-stop-ends-sessions", func(t *testing.T) { mcpDaemonStop(t, d) })
}

// mcpDaemonStop: a daemon told to stop ends its MCP sessions at once, so
// a session's open event stream does not hold the shutdown for its grace
// period.
func mcpDaemonStop(t *testing.T, d *daemon) {
	hc := &http.Client{Transport: mcpBearer{key: d.env.keys[tenantA], next: d.httpClient().Transport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "airlock-e2e-idle", Version: "1"}, nil).
		Connect(ctx(t), &sdk.StreamableClientTransport{Endpoint: "http://airlock/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcpCall(t, cs, "sandbox_create", map[string]any{"template": "base"}, nil)
	time.Sleep(time.Second) // the client's event stream is open by now
	began := time.Now()
	d.stop(t)
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the daemon took %s to stop with an MCP session open", took)
	} else {
		t.Logf("the daemon stopped in %s with an MCP session open", took.Round(time.Millisecond))
	}
}

// mcpBearer sends tenant's key over the daemon's socket.
type mcpBearer struct {
	key  string
	next http.RoundTripper
}

func (b mcpBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

func mcpGoAgent(t *testing.T, d *daemon, contract []byte) {
	hc := &http.Client{Transport: mcpBearer{key: d.env.keys[tenantA], next: d.httpClient().Transport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "airlock-e2e-agent", Version: "1.0.0"}, nil).
		Connect(ctx(t), &sdk.StreamableClientTransport{Endpoint: "http://airlock/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, mcpTools) {
		t.Fatalf("tools %v, want %v", names, mcpTools)
	}
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	mcpCall(t, cs, "sandbox_create", map[string]any{"template": "base", "ttl_seconds": 900}, &created)
	id := created.SandboxID
	mcpCall(t, cs, "sandbox_write_file", map[string]any{"sandbox_id": id, "path": "/job/contract.pdf",
		"content_base64": base64.StdEncoding.EncodeToString(contract)}, nil)
	mcpCall(t, cs, "sandbox_write_file", map[string]any{"sandbox_id": id, "path": "/job/analyze.py", "content": mcpAgentScript}, nil)
	var ran struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	mcpCall(t, cs, "sandbox_exec", map[string]any{"sandbox_id": id, "cmd": "python3 job/analyze.py", "timeout_seconds": 120}, &ran)
	if ran.ExitCode != 0 || !strings.Contains(ran.Stdout, `"pdf": true`) {
		t.Fatalf("the agent's script in the VM: %+v", ran)
	}
	var facts struct {
		Content string `json:"content"`
	}
	mcpCall(t, cs, "sandbox_read_file", map[string]any{"sandbox_id": id, "path": "/job/facts.json"}, &facts)
	if !strings.Contains(facts.Content, `"bytes": `+itoa(len(contract))) {
		t.Errorf("facts.json %q, want %d bytes", facts.Content, len(contract))
	}
	mcpReview(t, cs)
	c := d.client(t, tenantA)
	if sbxs, _ := c.ListSandboxes(ctx(t), map[string]string{"mcp.client": "airlock-e2e-agent"}); len(sbxs) != 1 {
		t.Errorf("%d running MCP sandboxes before the session ends, want 1", len(sbxs))
	}
	if sbxs, _ := d.client(t, tenantB).ListSandboxes(ctx(t), nil, client.IncludeEnded()); len(sbxs) != 0 {
		t.Errorf("tenant B sees %d sandboxes", len(sbxs))
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitNoneRunning(t, c, map[string]string{"mcp.client": "airlock-e2e-agent"})
	mcpAuditNamesClient(t, c, id)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// mcpReview reviews the contract under the docs root and reads its report.
func mcpReview(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	began := time.Now()
	var rev struct {
		OK    bool            `json:"ok"`
		Error json.RawMessage `json:"error"`
		Pages int             `json:"pages"`
		URI   string          `json:"report_uri"`
		Res   *struct {
			Summary struct {
				Clauses int `json:"clauses"`
			} `json:"summary"`
			Findings []struct {
				Status string `json:"status"`
			} `json:"findings"`
		} `json:"result"`
	}
	mcpCall(t, cs, "review_contract", map[string]any{"path": "contract.pdf"}, &rev)
	t.Logf("review_contract took %s", time.Since(began).Round(time.Millisecond))
	if !rev.OK || rev.Res == nil || rev.Res.Summary.Clauses == 0 || len(rev.Res.Findings) != rev.Res.Summary.Clauses || rev.URI == "" {
		t.Fatalf("review: ok=%v error=%s result=%+v report=%q", rev.OK, rev.Error, rev.Res, rev.URI)
	}
	rr, err := cs.ReadResource(ctx(t), &sdk.ReadResourceParams{URI: rev.URI})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/html" || !strings.Contains(rr.Contents[0].Text, "<html") {
		t.Fatalf("report resource %s: %v", rev.URI, err)
	}
}

func mcpCall(t *testing.T, cs *sdk.ClientSession, tool string, args, out any) {
	t.Helper()
	res, err := cs.CallTool(ctx(t), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: %v", tool, res.Content[0].(*sdk.TextContent).Text)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s: %v", tool, b, err)
		}
	}
}

// waitNoneRunning waits until no sandbox carrying md runs.
func waitNoneRunning(t *testing.T, c *client.Client, md map[string]string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sbxs, err := c.ListSandboxes(ctx(t), md)
		if err == nil && len(sbxs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sandboxes with %v still run after the MCP session ended (%v)", len(sbxs), md, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mcpAuditNamesClient: the audit records of the session's sandboxes (its
// own and the review's) name the client and the session.
func mcpAuditNamesClient(t *testing.T, c *client.Client, id string) {
	t.Helper()
	recs, err := c.Audit(ctx(t), client.AuditFilter{Metadata: map[string]string{"mcp.client": "airlock-e2e-agent"}})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]int{}
	for _, r := range recs {
		if r.SandboxID == id || r.Metadata["job"] == "review" {
			events[r.Event+"/"+r.Metadata["job"]]++
		}
		if r.Metadata["mcp.client_version"] != "1.0.0" || !strings.HasPrefix(r.Metadata["mcp.session"], "mcp-") {
			t.Errorf("audit %s of %s: metadata %v", r.Event, r.SandboxID, r.Metadata)
		}
	}
	for _, want := range []string{"create/", "exec/", "file_write/", "file_read/", "kill/", "create/review", "exec/review", "kill/review"} {
		if events[want] == 0 {
			t.Errorf("no %s audit record naming the MCP client (have %v)", want, events)
		}
	}
}

// mcpTSAgent runs testdata/tsclient/agent.mjs against `airlock mcp`.
func mcpTSAgent(t *testing.T, d *daemon, docsRoot string) {
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
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(d.env.root, "internal", "mcp", "testdata", "tsclient", "agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"transport": "stdio", "command": d.env.bin,
		"args":     []string{"mcp", "--docs-root", docsRoot},
		"env":      map[string]string{"AIRLOCK_URL": d.url(), "AIRLOCK_API_KEY": d.env.keys[tenantA], "PATH": os.Getenv("PATH")},
		"contract": filepath.Join(docsRoot, "contract.pdf"), "review": map[string]any{"path": "contract.pdf"}})
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, node, filepath.Join(dir, "agent.mjs"), string(cfg))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node agent.mjs: %v\n%s", err, stderr.String())
	}
	mcpCheckTSAgent(t, out)
	waitNoneRunning(t, d.client(t, tenantA), map[string]string{"mcp.client": "airlock-ts-agent"})
}

func mcpCheckTSAgent(t *testing.T, out []byte) {
	t.Helper()
	var got struct {
		Tools []string `json:"tools"`
		Exec  struct {
			ExitCode int  `json:"exit_code"`
			Fenced   bool `json:"fenced"`
		} `json:"exec"`
		Facts struct {
			Bytes int `json:"bytes"`
		} `json:"facts"`
		ContractBytes int `json:"contract_bytes"`
		Big           struct {
			Stdout    int  `json:"stdout"`
			Truncated bool `json:"truncated"`
		} `json:"big"`
		Review struct {
			OK       bool     `json:"ok"`
			Statuses []string `json:"statuses"`
			Report   struct {
				HTML bool `json:"html"`
			} `json:"report"`
		} `json:"review"`
		Refused string `json:"refused"`
		Killed  bool   `json:"killed"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("agent output %q: %v", out, err)
	}
	if !slices.Equal(got.Tools, mcpTools) || got.Exec.ExitCode != 0 || !got.Exec.Fenced || got.Facts.Bytes != got.ContractBytes {
		t.Errorf("TypeScript agent: %s", out)
	}
	if !got.Review.OK || len(got.Review.Statuses) == 0 || !got.Review.Report.HTML {
		t.Errorf("TypeScript agent's review: %+v", got.Review)
	}
	if got.Big.Stdout != 64<<10 || !got.Big.Truncated || got.Refused != "permission_denied" || !got.Killed {
		t.Errorf("TypeScript agent: big %+v, refused %q, killed %v", got.Big, got.Refused, got.Killed)
	}
}

// mcpDocumentTools runs extract_invoice and redact_document on real VMs:
// the invoice is judged on the host against the vendor master the agent
// passes (inline), and the redacted letter comes back only once a second
// sandbox verified it, with no value of the findings in the result.
func mcpDocumentTools(t *testing.T, d *daemon) {
	hc := &http.Client{Transport: mcpBearer{key: d.env.keys[tenantA], next: d.httpClient().Transport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "airlock-e2e-docs", Version: "1"}, nil).
		Connect(ctx(t), &sdk.StreamableClientTransport{Endpoint: "http://airlock/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var pdf bytes.Buffer
	if err := testdocs.WriteFlowPDF(&pdf, testdocs.Flow{Blocks: []testdocs.Block{
		{Kind: testdocs.Title, Text: "INVOICE"},
		{Kind: testdocs.Paragraph, Text: "Acme Widgets Inc."},
		{Kind: testdocs.Paragraph, Text: "Invoice number: INV-7001"},
		{Kind: testdocs.Paragraph, Text: "Invoice date: 2026-03-02"},
		{Kind: testdocs.Paragraph, Text: "Total due: USD 1,250.00"},
	}}, testdocs.PDFOptions{}); err != nil {
		t.Fatal(err)
	}
	invoice := pdf.Bytes()
	vendors := `{"tenant_id": "` + tenantA + `", "vendors": [{"vendor_id": "v-acme", "name": "Acme Widgets Inc.", "aliases": [],
		"tax_id": "", "country": "US", "currency": "USD", "address": "", "email": "", "payment_terms_days": 30,
		"bank": {"iban": "", "bic": "", "bank_name": "", "account_number": "", "routing_number": "", "sort_code": "", "account_name": ""}}]}`
	var inv struct {
		OK     bool            `json:"ok"`
		Error  json.RawMessage `json:"error"`
		Result *struct {
			Decision string `json:"decision"`
			VendorID string `json:"vendor_id"`
			Fields   struct {
				InvoiceNumber *string `json:"invoice_number"`
				Total         *string `json:"total"`
			} `json:"fields"`
		} `json:"result"`
	}
	mcpCall(t, cs, "extract_invoice", map[string]any{"content_base64": base64.StdEncoding.EncodeToString(invoice),
		"filename": "inv-7001.pdf", "vendors": vendors}, &inv)
	if !inv.OK || inv.Result == nil || inv.Result.VendorID != "v-acme" || inv.Result.Fields.InvoiceNumber == nil ||
		*inv.Result.Fields.InvoiceNumber != "INV-7001" || inv.Result.Fields.Total == nil || *inv.Result.Fields.Total != "1250.00" {
		t.Fatalf("extract_invoice: ok=%v error=%s result=%+v", inv.OK, inv.Error, inv.Result)
	}
	letter := "Dear Grace Kim,\nYour card 4111 1111 1111 1111 is on file; write to grace.kim@example.com.\n"
	var red struct {
		OK     bool            `json:"ok"`
		Error  json.RawMessage `json:"error"`
		Result *struct {
			Released   bool   `json:"released"`
			Verified   bool   `json:"verified"`
			OutputText string `json:"output_text"`
			Findings   []struct {
				Type string `json:"type"`
			} `json:"findings"`
		} `json:"result"`
	}
	mcpCall(t, cs, "redact_document", map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte(letter)),
		"filename": "letter.txt"}, &red)
	if !red.OK || red.Result == nil || !red.Result.Released || !red.Result.Verified || len(red.Result.Findings) < 3 {
		t.Fatalf("redact_document: ok=%v error=%s result=%+v", red.OK, red.Error, red.Result)
	}
	for _, pii := range []string{"Grace", "4111", "grace.kim@example.com"} {
		if strings.Contains(red.Result.OutputText, pii) {
			t.Errorf("released output still holds %q: %s", pii, red.Result.OutputText)
		}
	}
}
