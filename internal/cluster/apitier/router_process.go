package apitier

import (
	"context"
	"io"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

func (r *Router) StartProcess(ctx context.Context, tenant, id string, po sandbox.ProcessOptions) (sandbox.ProcessInfo, error) {
	o := po.ExecOptions
	var stdin []byte
	if o.Stdin != nil {
		b, err := io.ReadAll(io.LimitReader(o.Stdin, 16<<20))
		if err != nil {
			return sandbox.ProcessInfo{}, err
		}
		stdin = b
	}
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		er := execRequest(o, stdin)
		p, err := s.StartProcess(ctx, client.ProcessRequest{Cmd: er.Cmd, Argv: er.Argv, Env: er.Env, Cwd: er.Cwd, Timeout: er.Timeout, Stdin: er.Stdin,
			StdinOpen: po.OpenStdin, User: er.User, Pty: er.Pty})
		if p != nil {
			out = processInfo(p.ProcessInfo)
		}
		return err
	})
	return out, err
}

func (r *Router) Processes(ctx context.Context, tenant, id string) ([]sandbox.ProcessInfo, error) {
	var out []sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		ps, err := s.Processes(ctx)
		for _, p := range ps {
			out = append(out, processInfo(p.ProcessInfo))
		}
		return err
	})
	return out, err
}

func (r *Router) Process(ctx context.Context, tenant, id, pid string) (sandbox.ProcessInfo, error) {
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		p := s.Process(pid)
		err := p.Refresh(ctx)
		out = processInfo(p.ProcessInfo)
		return err
	})
	return out, err
}

func (r *Router) WaitProcess(ctx context.Context, tenant, id, pid string, timeout time.Duration) (sandbox.ProcessInfo, error) {
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		p := s.Process(pid)
		if timeout <= 0 {
			// The API's "do not wait": one look (the client's Wait(0)
			// would wait for ever).
			if err := p.Refresh(ctx); err != nil {
				return err
			}
			out = processInfo(p.ProcessInfo)
			if p.State == client.ProcessRunning {
				return errdefs.DeadlineExceeded("process %s is still running", pid)
			}
			return nil
		}
		err := p.Wait(ctx, timeout)
		out = processInfo(p.ProcessInfo)
		return err
	})
	return out, err
}

func (r *Router) ReadProcessOutput(ctx context.Context, tenant, id, pid, stream string, offset int64, limit int, wait time.Duration) (sandbox.ProcessOutput, error) {
	var out sandbox.ProcessOutput
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		opts := []client.OutputOption{client.WithMaxBytes(limit)}
		if wait > 0 {
			opts = append(opts, client.WithWait(wait))
		}
		o, err := s.Process(pid).Output(ctx, stream, offset, opts...)
		if o != nil {
			out = sandbox.ProcessOutput{Data: o.Data, Offset: o.Offset, NextOffset: o.NextOffset, Dropped: o.Dropped, EOF: o.EOF}
		}
		return err
	})
	return out, err
}

func (r *Router) KillProcess(ctx context.Context, tenant, id, pid, signal string) (sandbox.ProcessInfo, error) {
	var out sandbox.ProcessInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		p := s.Process(pid)
		err := p.Kill(ctx, signal)
		out = processInfo(p.ProcessInfo)
		return err
	})
	return out, err
}
