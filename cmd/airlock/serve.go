package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
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
	cluster           nodeFlags
}

// nodeFlags make `airlock serve` a cluster node.
type nodeFlags struct {
	api, tokenFile, nodeID, addr, listen, blobs string
}

func (n *nodeFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&n.api, "cluster-api", "", "join a cluster: the API tier's internal listener (http://host:port); the node then serves only the tier (see airlock api)")
	f.StringVar(&n.tokenFile, "cluster-token-file", "", "file holding the cluster's join token (with --cluster-api)")
	f.StringVar(&n.nodeID, "node-id", "", "this node's name in the cluster (default: the host name)")
	f.StringVar(&n.listen, "node-listen", "", "TCP address the node's API listens on for the tier, e.g. 10.0.0.5:7443 (with --cluster-api)")
	f.StringVar(&n.addr, "node-addr", "", "host:port the tier reaches the node's API on (default: --node-listen)")
	f.StringVar(&n.blobs, "cluster-blobs", "", "blob store the node pulls published templates from: file:///DIR or http(s)://HOST[/PREFIX] (with --cluster-api; without it the node pulls none)")
}

// options turns the flags into the daemon's; nil without --cluster-api.
func (o *serveOptions) clusterOptions() (*daemon.ClusterOptions, error) {
	n := o.cluster
	if n.api == "" {
		if n.tokenFile != "" || n.nodeID != "" || n.listen != "" || n.addr != "" || n.blobs != "" {
			return nil, errdefs.InvalidArgument("--cluster-token-file, --node-id, --node-listen, --node-addr and --cluster-blobs need --cluster-api")
		}
		return nil, nil
	}
	if n.tokenFile == "" || n.listen == "" {
		return nil, errdefs.InvalidArgument("--cluster-api needs --cluster-token-file and --node-listen")
	}
	if o.tcp != "" {
		return nil, errdefs.InvalidArgument("a cluster node serves the tier on --node-listen; --tcp is for single hosts")
	}
	id := n.nodeID
	if id == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		id = strings.ToLower(h)
	}
	addr := n.addr
	if addr == "" {
		addr = n.listen
	}
	memMiB := o.maxMemoryMiB * o.maxSandboxes
	if memMiB <= 0 {
		memMiB = 1 << 20
	}
	vcpus := o.maxVCPUs * o.maxSandboxes
	if vcpus <= 0 {
		vcpus = 4 * o.maxSandboxes
	}
	return &daemon.ClusterOptions{API: n.api, TokenFile: n.tokenFile, NodeID: id, Addr: addr, Version: version, Blobs: n.blobs,
		Capacity: nodewire.Capacity{Slots: o.maxSandboxes, MemMiB: int64(memMiB), VCPUs: vcpus}, Net: o.nf.enabled}, nil
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
	o.cluster.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.socket, "socket", "", "unix socket to serve on (default: env AIRLOCK_SOCKET, or AIRLOCK_URL when it is unix://, the variable clients read, else airlock.sock in the run directory: "+api.DefaultSocket+" as root)")
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

// run serves until ctx ends. The host, store, network and manager come
// from internal/daemon, which closes them in reverse order when run
// returns.
func (o *serveOptions) run(ctx context.Context) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o.hf.verbose = level <= slog.LevelInfo
	if o.socket == "" {
		o.socket = serveSocket(o.hf.g.runDir)
	}
	netOpts, err := o.nf.options()
	if err != nil {
		return err
	}
	clusterOpts, err := o.clusterOptions()
	if err != nil {
		return err
	}
	warmPool := o.warmPool
	if warmPool <= 0 {
		warmPool = -1 // the manager reads 0 as "default"
	}
	m := metrics.New()
	d, err := daemon.Open(ctx, daemon.Options{StateDir: o.hf.stateDir, Host: o.hf.hostConfig(), Exclusive: true,
		Net: netOpts, KillOnClose: o.killOnExit, Log: log, Cluster: clusterOpts,
		Manager: sandbox.Config{Metrics: m, MaxTTL: o.maxTTL, MaxSandboxes: o.maxSandboxes, WarmPool: warmPool,
			WarmPoolMax: o.warmPoolMax, MaxMemoryMiB: o.maxMemoryMiB, MaxVCPUs: o.maxVCPUs, MetricsPerSandbox: o.metricsPerSandbox,
			// Fault-injection tests only (internal/e2e): the daemon kills
			// itself at the named step. Never set in production.
			Failpoint: os.Getenv("AIRLOCK_FAILPOINT")}})
	if err != nil {
		return err
	}
	defer d.Close(context.WithoutCancel(ctx))
	mh, err := o.mcpHandler(d.Manager, log)
	if err != nil {
		return err
	}
	// A cluster node serves the tier's assertions only (and no MCP: agents
	// reach the cluster through the tier).
	h := d.Handler(api.Config{Logger: log, Metrics: m, MaxUploadBytes: o.maxUpload, Admission: o.admission, MCP: mh})
	ls, err := o.listen()
	if err != nil {
		return err
	}
	if clusterOpts != nil {
		nl, err := api.ListenTCP(o.cluster.listen)
		if err != nil {
			return err
		}
		ls = append(ls, nl)
		log.Info("cluster node", "node", clusterOpts.NodeID, "api", clusterOpts.API, "listen", nl.Addr().String())
	}
	log.Info("airlock serving", "socket", o.socket, "tcp", o.tcp, "accel", d.Host.Accel.Accel, "kernel", d.Host.Kernel.Release, "version", version)
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

// serveSocket is the default socket: AIRLOCK_SOCKET, else the path of a
// unix:// AIRLOCK_URL (so the variable clients read works for the server
// too), else airlock.sock in the run directory (runDir, else
// AIRLOCK_RUN_DIR, else the default: /run/airlock/airlock.sock as root).
func serveSocket(runDir string) string {
	if s := os.Getenv("AIRLOCK_SOCKET"); s != "" {
		return s
	}
	if p, ok := strings.CutPrefix(os.Getenv("AIRLOCK_URL"), "unix://"); ok && strings.HasPrefix(p, "/") {
		return p
	}
	return runDirSocket(runDir)
}

// runDirSocket is the socket a daemon with run directory runDir ("" = the
// default) listens on when told nothing else.
func runDirSocket(runDir string) string {
	if runDir == "" {
		runDir = vm.DefaultRunDir()
	}
	return filepath.Join(runDir, filepath.Base(api.DefaultSocket))
}
