package mcp

import (
	"bytes"
	"context"
	"fmt"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/jobs"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// ManagerBackend is the Backend of a server running in the daemon: the
// sandbox manager itself, as tenant. The manager audits every call.
func ManagerBackend(m *sandbox.Manager, tenant string) Backend {
	return managerBackend{m: m, tenant: tenant}
}

type managerBackend struct {
	m      *sandbox.Manager
	tenant string
}

func (b managerBackend) Create(ctx context.Context, req CreateRequest) (Sandbox, error) {
	pol := netpool.DenyAll()
	pol.Allow = req.Allow
	info, err := b.m.Create(ctx, sandbox.CreateRequest{Tenant: b.tenant, Template: req.Template, TTL: req.TTL,
		Metadata: req.Metadata, Egress: &pol})
	if err != nil {
		return Sandbox{}, err
	}
	return sandboxOfInfo(info), nil
}

func sandboxOfInfo(in sandbox.Info) Sandbox {
	return Sandbox{ID: in.ID, Template: in.Template, State: in.State, CreatedAt: in.CreatedAt,
		Deadline: in.Deadline, Metadata: in.Metadata}
}

func (b managerBackend) List(ctx context.Context, md map[string]string, all bool) ([]Sandbox, error) {
	f := sandbox.ListFilter{Tenant: b.tenant, Metadata: md}
	if all {
		f.States = []string{store.StateRunning, store.StateKilled, store.StateExpired, store.StateFailed}
	}
	infos, err := b.m.List(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]Sandbox, 0, len(infos))
	for _, in := range infos {
		if in.Tenant == b.tenant { // as the API does: a second line of defence
			out = append(out, sandboxOfInfo(in))
		}
	}
	return out, nil
}

func (b managerBackend) Kill(ctx context.Context, id string) error {
	return b.m.Kill(ctx, b.tenant, id)
}

func (b managerBackend) Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error) {
	var stdout, stderr bytes.Buffer
	res, err := b.m.Exec(ctx, b.tenant, id, guest.ExecOptions{Shell: req.Cmd, Timeout: req.Timeout,
		MaxOutputBytes: req.MaxOutput}, &capped{b: &stdout, max: req.MaxOutput}, &capped{b: &stderr, max: req.MaxOutput})
	if err != nil {
		return ExecResult{}, err
	}
	return ExecResult{ExitCode: res.ExitCode, TimedOut: res.TimedOut, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes,
		StdoutTruncated: res.StdoutTruncated || res.StdoutBytes > req.MaxOutput,
		StderrTruncated: res.StderrTruncated || res.StderrBytes > req.MaxOutput}, nil
}

func (b managerBackend) WriteFile(ctx context.Context, id, path string, data []byte) (int64, error) {
	return b.m.WriteFile(ctx, b.tenant, id, path, bytes.NewReader(data), 0o644)
}

func (b managerBackend) ReadFile(ctx context.Context, id, path string, max int64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := b.m.ReadFile(ctx, b.tenant, id, path, &capped{b: &buf, max: max}, max); err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", path, id, err)
	}
	return buf.Bytes(), nil
}

// Jobs runs the document jobs on the manager. It does not offer
// jobs.Prewarmer: the daemon's warm pools are its operator's to size, not
// one tool call's.
func (b managerBackend) Jobs() jobs.Sandboxes {
	return noPrewarm{jobs.Local{M: b.m, Tenant: b.tenant}}
}

// noPrewarm hides a Sandboxes' Prewarm method from the batch runner.
type noPrewarm struct{ s jobs.Sandboxes }

func (n noPrewarm) Create(ctx context.Context, o jobs.CreateOptions) (jobs.Sandbox, error) {
	return n.s.Create(ctx, o)
}

// capped keeps the first max bytes written and drops the rest, so a
// guest that ignores its output limit cannot fill the host's memory.
type capped struct {
	b   *bytes.Buffer
	max int64
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - int64(c.b.Len()); room > 0 {
		c.b.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}
