package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// ClientBackend is the Backend of `airlock mcp`: a daemon reached through
// the Go client, as the tenant of the client's key. The daemon audits
// every call.
func ClientBackend(c *client.Client) Backend { return clientBackend{c: c} }

type clientBackend struct{ c *client.Client }

func (b clientBackend) Create(ctx context.Context, req CreateRequest) (Sandbox, error) {
	pol := client.DenyAll()
	for _, r := range req.Allow {
		pol.Allow = append(pol.Allow, client.EgressRule{Name: r.Name, CIDR: r.CIDR, Ports: r.Ports,
			Protocol: r.Protocol, Domain: r.Domain})
	}
	s, err := b.c.CreateSandbox(ctx, client.CreateOptions{Template: req.Template, TTLSeconds: int(req.TTL / time.Second),
		Metadata: req.Metadata, Egress: &pol})
	if err != nil {
		return Sandbox{}, err
	}
	return sandboxOfClient(s.SandboxInfo), nil
}

func sandboxOfClient(in client.SandboxInfo) Sandbox {
	return Sandbox{ID: in.ID, Template: in.Template, State: in.State, CreatedAt: in.CreatedAt,
		Deadline: in.Deadline, Metadata: in.Metadata}
}

func (b clientBackend) List(ctx context.Context, md map[string]string, all bool) ([]Sandbox, error) {
	var opts []client.ListOption
	if all {
		opts = append(opts, client.IncludeEnded())
	}
	sbxs, err := b.c.ListSandboxes(ctx, md, opts...)
	if err != nil {
		return nil, err
	}
	out := make([]Sandbox, len(sbxs))
	for i, s := range sbxs {
		out[i] = sandboxOfClient(s.SandboxInfo)
	}
	return out, nil
}

func (b clientBackend) Kill(ctx context.Context, id string) error {
	return b.c.Sandbox(id).Kill(ctx)
}

func (b clientBackend) Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error) {
	res, err := b.c.Sandbox(id).ExecRequest(ctx, client.ExecRequest{Cmd: req.Cmd, Timeout: req.Timeout,
		MaxOutputBytes: req.MaxOutput})
	if err != nil {
		return ExecResult{}, err
	}
	// The daemon keeps to MaxOutputBytes; the cut is repeated here so a
	// daemon that did not cannot flood the agent.
	stdout, stderr := []byte(res.Stdout), []byte(res.Stderr)
	return ExecResult{ExitCode: res.ExitCode, TimedOut: res.TimedOut,
		Stdout: stdout[:min(int64(len(stdout)), req.MaxOutput)], Stderr: stderr[:min(int64(len(stderr)), req.MaxOutput)],
		StdoutBytes: res.StdoutBytes, StderrBytes: res.StderrBytes,
		StdoutTruncated: res.StdoutTruncated || int64(len(stdout)) > req.MaxOutput,
		StderrTruncated: res.StderrTruncated || int64(len(stderr)) > req.MaxOutput}, nil
}

func (b clientBackend) WriteFile(ctx context.Context, id, path string, data []byte) (int64, error) {
	return b.c.Sandbox(id).Files().Write(ctx, path, bytes.NewReader(data))
}

func (b clientBackend) ReadFile(ctx context.Context, id, path string, max int64) ([]byte, error) {
	f := b.c.Sandbox(id).Files()
	fi, err := f.Stat(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", path, id, err)
	}
	if fi.Size > max {
		return nil, errdefs.ResourceExhausted("%s is %d bytes, over the %d-byte limit", path, fi.Size, max)
	}
	rc, err := f.Read(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", path, id, err)
	}
	defer rc.Close()
	// The file may have grown since the stat: stop one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w: %w", path, id, errdefs.ErrUnavailable, err)
	}
	if int64(len(data)) > max {
		return nil, errdefs.ResourceExhausted("%s grew past the %d-byte limit while it was read", path, max)
	}
	return data, nil
}

func (b clientBackend) Jobs() jobs.Sandboxes { return jobs.Daemon{C: b.c} }
