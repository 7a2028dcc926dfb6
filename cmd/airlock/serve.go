package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vm"
)

// serveOptions are the flags of `airlock serve`.
type serveOptions struct {
	hf           *hostFlags
	nf           *netFlags
	socket       string
	tcp          string
	gid          int
	maxTTL       time.Duration
	maxSandboxes int
	maxMemoryMiB int
	maxVCPUs     int
	// metricsPerSandbox adds one usage series per running sandbox to /metrics.
	metricsPerSandbox bool
	warmPool          int
	warmPoolMax       int
	maxUpload         int64
	logLevel          string
	killOnExit        bool
	admission         api.Admission
	maxConns          int
	mcp               mcpFlags
}

func newServeCmd(g *globalFlags) *cobra.Command {
	o := &serveOptions{hf: &hostFlags{g: g}, nf: &netFlags{}}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: HTTP API on a unix socket (and optionally TCP)",
		Long: `Run the airlock daemon for this host. It recovers what a previous daemon
left (adopting running sandboxes, reaping overdue ones and orphaned VMs),
then serves the HTTP API. Sandboxes keep running across a daemon restart
unless --kill-on-exit is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.hf.register(cmd)
	o.nf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.socket, "socket", serveSocket(), "unix socket to serve on (env AIRLOCK_SOCKET, or AIRLOCK_URL when it is unix://, the variable clients read)")
	f.StringVar(&o.tcp, "tcp", os.Getenv("AIRLOCK_TCP"), "also serve on this TCP address, e.g. 127.0.0.1:7070 (env AIRLOCK_TCP)")
	f.IntVar(&o.gid, "socket-gid", -1, "group owning the socket (-1 = unchanged)")
	f.DurationVar(&o.maxTTL, "max-ttl", 24*time.Hour, "longest lifetime any sandbox may have")
	f.IntVar(&o.maxSandboxes, "max-sandboxes", 64, "most sandboxes running at once")
	f.IntVar(&o.maxMemoryMiB, "max-memory-mib", 0, "refuse sandboxes of templates with more guest memory than this (0: no cap)")
	f.IntVar(&o.maxVCPUs, "max-vcpus", 0, "refuse sandboxes of templates with more vCPUs than this (0: no cap)")
	f.BoolVar(&o.metricsPerSandbox, "metrics-per-sandbox", false, "add one CPU/memory series per running sandbox to /metrics (labelled with sandbox ids; /metrics needs no key)")
	f.IntVar(&o.warmPool, "warm-pool", 2, "restored, idle clones kept ready per template so a create is one identity push (0 or less disables)")
	f.IntVar(&o.warmPoolMax, "warm-pool-max", 0, "the most clones a pool grows to while creates drain it (each create finding it empty adds one; 30 s without one gives one back; default 4x --warm-pool)")
	f.Int64Var(&o.maxUpload, "max-upload-bytes", 512<<20, "largest single file upload")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&o.killOnExit, "kill-on-exit", false, "kill all sandboxes when the daemon stops")
	f.IntVar(&o.admission.Requests, "tenant-max-requests", api.DefaultTenantRequests, "requests one tenant may have in progress at once (then 429)")
	f.IntVar(&o.admission.LongPolls, "tenant-max-long-polls", api.DefaultTenantLongPolls, "process waits and output long-polls one tenant may have waiting at once (then 429)")
	f.IntVar(&o.admission.Streams, "tenant-max-streams", api.DefaultTenantStreams, "execs and file or archive transfers one tenant may have in progress at once (then 429)")
	f.IntVar(&o.admission.GlobalRequests, "max-requests", api.DefaultGlobalRequests, "requests in progress at once over all tenants; the last 1/16 are kept for tenants with fewer than 16")
	o.mcp.register(cmd, "mcp-", "directory of the tenants' docs roots for /mcp: tenant T's document tools read files under DIR/T only; unset: documents only as content_base64")
	f.IntVar(&o.maxConns, "max-connections", 0, "client connections held at once; at the limit the longest-idle one is closed, else the new one gets 503 (0: half the descriptor limit)")
	return cmd
}

// run serves until ctx ends. What each step opens is closed, in reverse
// order, when it returns: the proxy and the network pool outlive the
// manager's shutdown (which releases slots), the store and the host
// outlive everything.
func (o *serveOptions) run(ctx context.Context) error {
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(ctx) }()
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o.hf.verbose = level <= slog.LevelInfo
	host, st, err := o.openState(ctx, log, &cu)
	if err != nil {
		return err
	}
	mgr, m, err := o.startManager(ctx, log, host, st, &cu)
	if err != nil {
		return err
	}
	mh, err := o.mcpHandler(mgr, log)
	if err != nil {
		return err
	}
	h := api.New(api.Config{Backend: mgr, Store: st, Logger: log, Metrics: m, MaxUploadBytes: o.maxUpload,
		Admission: o.admission, MCP: mh})
	ls, err := o.listen()
	if err != nil {
		return err
	}
	log.Info("airlock serving", "socket", o.socket, "tcp", o.tcp, "accel", host.Accel.Accel, "kernel", host.Kernel.Release, "version", version)
	// MCP sessions live in this process, so they end with it, and their
	// sandboxes die before the manager stops. They end as soon as the
	// daemon is told to stop: a session's event stream is a request that
	// would otherwise hold the shutdown for its whole grace period.
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			mh.Close()
		case <-stopped:
		}
	}()
	err = api.Serve(ctx, h, api.ServeOptions{Log: log, MaxConnections: o.maxConns}, ls...)
	mh.Close()
	return err
}

// openState opens the host, locks the state and run directories (one
// daemon per each: two would adopt, expire and reap each other's
// sandboxes) and opens the store.
func (o *serveOptions) openState(ctx context.Context, log *slog.Logger, cu *cleanup.Stack) (*vm.Host, *store.Store, error) {
	o.hf.stateDir = filepath.Clean(o.hf.stateDir)
	if err := os.MkdirAll(o.hf.stateDir, 0o700); err != nil {
		return nil, nil, err
	}
	host, err := o.hf.host(ctx)
	if err != nil {
		return nil, nil, err
	}
	cu.AddFunc(func() { host.Close() })
	for _, d := range []struct{ dir, what string }{{o.hf.stateDir, "state directory"}, {host.RunDir, "run directory"}} {
		lock, err := lockExclusive(d.dir, d.what)
		if err != nil {
			return nil, nil, err
		}
		cu.AddFunc(func() { lock.Close() })
	}
	st, err := store.Open(filepath.Join(o.hf.stateDir, "airlock.db"))
	if err != nil {
		return nil, nil, err
	}
	cu.AddFunc(func() { st.Close() })
	if err := st.AuditIntegrity(); err != nil {
		// Every sandbox operation is audited; a daemon that went on would
		// bury the evidence under new records, so it does not start.
		log.Error("AUDIT LOG TAMPERED WITH: the daemon will not start", "err", err, "state_dir", o.hf.stateDir)
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	if !st.SealAuditAnchor() {
		log.Warn("audit anchor cannot be made append-only on this filesystem; truncation is still detected unless the anchor is cut too")
	}
	return host, st, nil
}

// startManager sets up host networking (with --net) and starts the
// sandbox manager and the egress proxy.
func (o *serveOptions) startManager(ctx context.Context, log *slog.Logger, host *vm.Host, st *store.Store, cu *cleanup.Stack) (*sandbox.Manager, *metrics.Metrics, error) {
	reg, err := o.hf.registry()
	if err != nil {
		return nil, nil, err
	}
	warmPool := o.warmPool
	if warmPool <= 0 {
		warmPool = -1 // the manager reads 0 as "default"
	}
	hn, err := o.nf.setup(log, o.hf.stateDir)
	if err != nil {
		return nil, nil, err
	}
	cu.AddFunc(func() { hn.close(log) })
	m := metrics.New()
	cfg := sandbox.Config{Host: host, Templates: reg, Store: st, Metrics: m,
		Logger: log, MaxTTL: o.maxTTL, MaxSandboxes: o.maxSandboxes, WarmPool: warmPool, WarmPoolMax: o.warmPoolMax,
		MaxMemoryMiB: o.maxMemoryMiB, MaxVCPUs: o.maxVCPUs, MetricsPerSandbox: o.metricsPerSandbox,
		// Fault-injection tests only (internal/e2e): the daemon kills
		// itself at the named step. Never set in production.
		Failpoint: os.Getenv("AIRLOCK_FAILPOINT")}
	if cfg.Failpoint != "" {
		log.Warn("AIRLOCK_FAILPOINT is set: this daemon will kill itself at that step (fault-injection tests only)", "failpoint", cfg.Failpoint)
	}
	if hn != nil {
		cfg.Net, cfg.Credentials = hn.pool, hn.credentials
	}
	mgr, err := sandbox.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	cu.AddFunc(func() {
		if o.killOnExit {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			mgr.Shutdown(sctx)
			cancel()
		} else {
			mgr.Close()
		}
	})
	if err := hn.startProxy(ctx, log, mgr); err != nil {
		return nil, nil, err
	}
	return mgr, m, nil
}

// listen opens the unix socket and, with --tcp, the TCP listener.
func (o *serveOptions) listen() ([]net.Listener, error) {
	ul, err := api.ListenUnix(o.socket, o.gid)
	if err != nil {
		return nil, err
	}
	ls := []net.Listener{ul}
	if o.tcp != "" {
		tl, err := api.ListenTCP(o.tcp)
		if err != nil {
			return nil, err
		}
		ls = append(ls, tl)
	}
	return ls, nil
}

// lockExclusive holds an exclusive lock on dir itself until the returned
// file is closed (or the process dies: the kernel drops it). Locking the
// directory leaves nothing behind in it.
func lockExclusive(dir, what string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errdefs.FailedPrecondition("another airlock serve is using the %s %s; give each daemon its own (--state-dir, --run-dir)", what, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	return f, nil
}

// serveSocket is the default socket: AIRLOCK_SOCKET, else the path of a
// unix:// AIRLOCK_URL (so the variable clients read works for the server
// too), else the default.
func serveSocket() string {
	if s := os.Getenv("AIRLOCK_SOCKET"); s != "" {
		return s
	}
	if p, ok := strings.CutPrefix(os.Getenv("AIRLOCK_URL"), "unix://"); ok && strings.HasPrefix(p, "/") {
		return p
	}
	return api.DefaultSocket
}
