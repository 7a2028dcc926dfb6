package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// DefaultSocket is where `airlock serve` listens and clients look first.
const DefaultSocket = "/run/airlock/airlock.sock"

// SocketMode is the unix socket's permission: owner and group may connect
// (connecting needs write permission), nobody else. Put the users allowed to
// reach the daemon in the socket's group. Keys are still required.
const SocketMode = 0o660

// ListenUnix listens on a unix socket at path with SocketMode, creating the
// parent directory if needed. A stale socket left by a dead daemon is
// removed; a live one (something answers) is FailedPrecondition, and a
// non-socket file at path is never removed. gid >= 0 sets the socket's
// group.
func ListenUnix(path string, gid int) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("api: socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, errdefs.FailedPrecondition("api: %s exists and is not a socket; not removing it", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, errdefs.FailedPrecondition("api: another process is serving on %s", path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("api: probe existing socket %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("api: remove stale socket: %w", err)
		}
	}
	// The socket is created with the process umask (normally leaving it
	// writable by the owner only) and then opened up to the group, so there
	// is no moment where it is more open than SocketMode.
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", path, err)
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			l.Close()
			return nil, fmt.Errorf("api: chown socket: %w", err)
		}
	}
	if err := os.Chmod(path, SocketMode); err != nil {
		l.Close()
		return nil, fmt.Errorf("api: chmod socket: %w", err)
	}
	return l, nil
}

// ListenTCP listens on a TCP address. The API has no TLS of its own: bind
// to loopback, or put a TLS-terminating proxy in front, since keys travel
// as bearer tokens.
func ListenTCP(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	return l, nil
}

// ShutdownGrace is how long Serve lets in-flight requests (long execs and
// streams included) finish after ctx ends before cancelling them.
const ShutdownGrace = 30 * time.Second

// ServeOptions tune Serve.
type ServeOptions struct {
	Log *slog.Logger // nil = slog.Default()
	// MaxConnections bounds the client connections held at once, over all
	// listeners (see connGovernor); <= 0 = DefaultMaxConnections().
	MaxConnections int
}

// Serve serves h on every listener until ctx ends, then shuts down
// gracefully: no new connections, in-flight requests get ShutdownGrace,
// then their contexts are cancelled and connections closed. It returns nil
// after a shutdown caused by ctx, or the first listener's failure.
func Serve(ctx context.Context, h http.Handler, opts ServeOptions, ls ...net.Listener) error {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	gov := newConnGovernor(opts.MaxConnections)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout or WriteTimeout: uploads, downloads and execs
		// legitimately run for minutes; their deadlines are the sandbox's.
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return base },
		ConnState:      gov.connState,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	for i, l := range ls {
		ls[i] = govern(l, gov)
	}
	errc := make(chan error, len(ls))
	for _, l := range ls {
		log.Info("api listening", "network", l.Addr().Network(), "addr", l.Addr().String())
		go func() { errc <- srv.Serve(l) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		cancelBase()
		srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
