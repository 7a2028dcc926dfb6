package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/mcp"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// mcpFlags are what the operator allows an agent: shared by `airlock mcp`
// and `airlock serve` (prefixed --mcp- there).
type mcpFlags struct {
	docsRoot    string
	playbooks   string
	egressRules string
	maxTTL      time.Duration
}

func (f *mcpFlags) register(cmd *cobra.Command, prefix, docsRootHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.docsRoot, prefix+"docs-root", "", docsRootHelp)
	fl.StringVar(&f.playbooks, prefix+"playbooks", "", "directory of review playbooks review_contract may name (NAME.yaml, NAME.yml or NAME.json); unset: the built-in one only")
	fl.StringVar(&f.egressRules, prefix+"egress-rules", "", "JSON list of egress rules sandbox_create may ask for by name ([{\"name\": \"pypi\", \"domain\": \"pypi.org\"}, ...]); unset: no network for an agent's sandboxes")
	fl.DurationVar(&f.maxTTL, prefix+"max-ttl", time.Hour, "longest lifetime an agent may give a sandbox")
}

// options turns the flags into the server's options.
func (f *mcpFlags) options(log *slog.Logger) (mcp.Options, error) {
	o := mcp.Options{MaxTTL: f.maxTTL, Version: version, Logger: log}
	for _, d := range []struct{ dir, flag string }{{f.docsRoot, "docs-root"}, {f.playbooks, "playbooks"}} {
		if d.dir == "" {
			continue
		}
		fi, err := os.Stat(d.dir)
		if err != nil || !fi.IsDir() {
			return o, errdefs.InvalidArgument("--%s %s: not a directory", d.flag, d.dir)
		}
	}
	var err error
	if f.docsRoot != "" {
		if o.DocsRoot, err = filepath.Abs(f.docsRoot); err != nil {
			return o, err
		}
	}
	o.PlaybookDir = f.playbooks
	if f.egressRules != "" {
		data, err := os.ReadFile(f.egressRules)
		if err != nil {
			return o, errdefs.InvalidArgument("--egress-rules: %v", err)
		}
		if o.Egress, err = mcp.ParseEgressRules(data); err != nil {
			return o, fmt.Errorf("--egress-rules %s: %w", f.egressRules, err)
		}
	}
	return o, nil
}

func newMCPCmd() *cobra.Command {
	cf := &clientFlags{}
	f := &mcpFlags{}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio: an AI agent's tool calls run in this daemon's sandboxes",
		Long: `Serve the Model Context Protocol on standard input and output, for an
MCP-capable agent host that starts airlock as a tool server. Each tool call
goes to the daemon at --url / AIRLOCK_URL as the tenant of AIRLOCK_API_KEY.
Every sandbox the session created is killed when the host closes the
session (or at its TTL, at most --max-ttl). Logs go to stderr; stdout
carries only the protocol.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError{fmt.Errorf("--log-level: %w", err)}
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			opts, err := f.options(log)
			if err != nil {
				return err
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			return runMCP(cmd.Context(), c, opts, os.Stdin, os.Stdout)
		},
	}
	pf := cmd.Flags()
	pf.StringVar(&cf.url, "url", daemonURL(), "daemon address: unix:///path.sock or http://host:port (env AIRLOCK_URL)")
	pf.StringVar(&cf.apiKey, "api-key", "", "API key (env AIRLOCK_API_KEY, preferred: flags are visible in ps)")
	pf.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error (stderr)")
	f.register(cmd, "", "the one directory whose files the document tools may read by path; unset: documents only as content_base64")
	return cmd
}

// runMCP serves one session over in and out.
func runMCP(ctx context.Context, c *client.Client, opts mcp.Options, in io.ReadCloser, out io.WriteCloser) error {
	if err := c.Health(ctx); err != nil {
		return fmt.Errorf("the daemon does not answer: %w", err)
	}
	return mcp.Serve(ctx, mcp.ClientBackend(c), opts, in, out)
}

// mcpHandler is the daemon's /mcp: sessions on the manager, each as the
// tenant of the key that opened it. Tenant T reads documents under
// --mcp-docs-root/T only.
func (o *serveOptions) mcpHandler(mgr *sandbox.Manager, log *slog.Logger) (*mcp.HTTPHandler, error) {
	opts, err := o.mcp.options(log)
	if err != nil {
		return nil, err
	}
	return mcp.NewHTTPHandler(mcp.HTTPConfig{
		Caller: func(r *http.Request) (string, string, bool) {
			c, ok := api.CallerFrom(r.Context())
			return c.Tenant, c.KeyID, ok
		},
		Backend: func(tenant string) mcp.Backend { return mcp.ManagerBackend(mgr, tenant) },
		Options: opts,
	}), nil
}
