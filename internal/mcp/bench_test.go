package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/client"
)

// BenchmarkMCPOverhead measures what the MCP layer adds to a call, against
// the same call through the HTTP API, in one run: each iteration makes the
// API call (Go client) and then the MCP tool call on the same sandbox of
// the same local-machines daemon, timing each. Two shapes of MCP:
//   - http: the daemon's /mcp (streamable HTTP, the Go SDK's client) on
//     the manager, as a remote agent uses it;
//   - stdio: `airlock mcp`'s shape, the server in front of the Go client
//     over pipes, as a desktop agent host uses it (so it pays the API call
//     too).
//
// It reports api_us/op, mcp_us/op and their ratio per operation:
//
//	go test -run XXX -bench MCPOverhead -benchtime 300x ./internal/mcp/
func BenchmarkMCPOverhead(b *testing.B) {
	e := newTestEnv(b, Options{})
	api := e.client(tenantA)
	sessions := map[string]*sdk.ClientSession{"http": e.connect(tenantA)}
	cs, _ := e.stdio(b, tenantA)
	sessions["stdio"] = cs
	for _, shape := range []string{"http", "stdio"} {
		cs := sessions[shape]
		var created SandboxInfo
		mustCall(b, cs, "sandbox_create", map[string]any{"template": "base", "ttl_seconds": 3600}, &created)
		sbx := api.Sandbox(created.SandboxID)
		payload := strings.Repeat("x", 1024)
		if _, err := sbx.Files().Write(context.Background(), "/f", strings.NewReader(payload)); err != nil {
			b.Fatal(err)
		}
		ops := []struct {
			name string
			api  func(ctx context.Context) error
			tool string
			args map[string]any
		}{
			{"exec-true", func(ctx context.Context) error {
				_, err := sbx.Exec(ctx, "true", client.WithMaxOutputBytes(64<<10), client.WithTimeout(time.Minute))
				return err
			}, "sandbox_exec", map[string]any{"sandbox_id": sbx.ID, "cmd": "true"}},
			{"write-1KiB", func(ctx context.Context) error {
				_, err := sbx.Files().Write(ctx, "/f", strings.NewReader(payload))
				return err
			}, "sandbox_write_file", map[string]any{"sandbox_id": sbx.ID, "path": "/f", "content": payload}},
			{"read-1KiB", func(ctx context.Context) error {
				// One GET. The stdio shape's client backend makes two (a
				// stat for the size limit first): that is in its overhead.
				_, err := sbx.Files().ReadAll(ctx, "/f")
				return err
			}, "sandbox_read_file", map[string]any{"sandbox_id": sbx.ID, "path": "/f"}},
		}
		for _, op := range ops {
			b.Run(shape+"/"+op.name, func(b *testing.B) {
				ctx := context.Background()
				var apiT, mcpT time.Duration
				for b.Loop() {
					began := time.Now()
					if err := op.api(ctx); err != nil {
						b.Fatal(err)
					}
					apiT += time.Since(began)
					began = time.Now()
					if res := call(b, cs, op.tool, op.args); res.IsError {
						b.Fatal(contentText(res))
					}
					mcpT += time.Since(began)
				}
				n := float64(b.N)
				b.ReportMetric(float64(apiT.Microseconds())/n, "api_us/op")
				b.ReportMetric(float64(mcpT.Microseconds())/n, "mcp_us/op")
				b.ReportMetric(float64(mcpT)/float64(apiT), "mcp/api")
			})
		}
	}
}
