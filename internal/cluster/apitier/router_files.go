package apitier

import (
	"context"
	"io"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

func (r *Router) WriteFile(ctx context.Context, tenant, id, path string, body io.Reader, mode uint32) (int64, error) {
	var n int64
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		var opts []client.WriteOption
		if mode != 0 {
			opts = append(opts, client.WithMode(mode))
		}
		var err error
		n, err = s.Files().Write(ctx, path, body, opts...)
		return err
	})
	return n, err
}

// ReadFile copies the node's answer through; nothing is written to w
// before the node answered 200.
func (r *Router) ReadFile(ctx context.Context, tenant, id, path string, w io.Writer, maxBytes int64) (int64, error) {
	var n int64
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		rc, err := s.Files().Read(ctx, path)
		if err != nil {
			return err
		}
		defer rc.Close()
		src := io.Reader(rc)
		if maxBytes > 0 {
			src = io.LimitReader(rc, maxBytes+1)
		}
		n, err = io.Copy(w, src)
		if err == nil && maxBytes > 0 && n > maxBytes {
			return errdefs.ResourceExhausted("file is larger than the read limit of %d bytes", maxBytes)
		}
		return err
	})
	return n, err
}

func (r *Router) WriteArchive(ctx context.Context, tenant, id, dir string, body io.Reader, _ int64) (guest.ArchiveStats, error) {
	var st guest.ArchiveStats
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		res, err := s.Files().WriteArchive(ctx, dir, body)
		if res != nil {
			st = guest.ArchiveStats{Entries: res.Entries, Bytes: res.Bytes}
		}
		return err
	})
	return st, err
}

func (r *Router) ReadArchive(ctx context.Context, tenant, id, path string, w io.Writer, _ int64) (int64, error) {
	var n int64
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		var err error
		n, err = s.Files().ReadArchive(ctx, path, w)
		return err
	})
	return n, err
}

func (r *Router) StatFile(ctx context.Context, tenant, id, path string) (sandbox.FileInfo, error) {
	var fi sandbox.FileInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		got, err := s.Files().Stat(ctx, path)
		if got != nil {
			fi = fileInfo(*got)
		}
		return err
	})
	return fi, err
}

func (r *Router) ListFiles(ctx context.Context, tenant, id, path string) ([]sandbox.FileInfo, error) {
	var out []sandbox.FileInfo
	err := r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		got, err := s.Files().List(ctx, path)
		for _, fi := range got {
			out = append(out, fileInfo(fi))
		}
		return err
	})
	return out, err
}

func (r *Router) RemoveFile(ctx context.Context, tenant, id, path string, recursive bool) error {
	return r.on(ctx, tenant, id, func(s *client.Sandbox) error {
		if recursive {
			return s.Files().RemoveAll(ctx, path)
		}
		return s.Files().Remove(ctx, path)
	})
}

func (r *Router) MakeDir(ctx context.Context, tenant, id, path string) error {
	return r.on(ctx, tenant, id, func(s *client.Sandbox) error { return s.Files().Mkdir(ctx, path) })
}
