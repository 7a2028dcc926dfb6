package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/apitier"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/metrics"
)

// apiOptions are the flags of `airlock api`.
type apiOptions struct {
	dsn, listen, internal, tokenFile, logLevel string
	lease                                      lease.Config
	createTimeout, keyCache, reconcileAfter    time.Duration
	maxUpload                                  int64
	admission                                  api.Admission
}

func newAPICmd() *cobra.Command {
	o := &apiOptions{lease: lease.Defaults()}
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Run a cluster API process: the public API in front of many nodes (PostgreSQL)",
		Long: `Run one replica of a cluster's API tier. Clients (SDKs, CLI, document jobs)
talk to it exactly as to a single daemon; it places each new sandbox on a
node, records it in PostgreSQL and proxies every call to the owning node.
Nodes are ` + "`airlock serve --cluster-api=http://THIS:INTERNAL`" + ` daemons; they
register on --internal-listen with the join token and never see the
database or a tenant key. Run as many replicas as you like on one
database; each also sweeps lost nodes and reconciles half-done creates.

The DSN is a PostgreSQL connection string or URL; without --dsn it is read
from $` + clusterDSNEnv + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "public API address (clients)")
	f.StringVar(&o.internal, "internal-listen", "127.0.0.1:8443", "internal address (nodes register, heartbeat and ship here)")
	f.StringVar(&o.tokenFile, "cluster-token-file", "", "file holding the cluster's join token, which nodes present to register (required)")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.DurationVar(&o.lease.Heartbeat, "heartbeat", o.lease.Heartbeat, "how often nodes renew their lease")
	f.DurationVar(&o.lease.TTL, "lease-ttl", o.lease.TTL, "how long a heartbeat keeps a node's lease")
	f.DurationVar(&o.lease.Grace, "lease-grace", o.lease.Grace, "how long past its lease a node survives a sweep")
	f.DurationVar(&o.lease.SweepInterval, "sweep-interval", o.lease.SweepInterval, "how often this replica sweeps for lost nodes")
	f.DurationVar(&o.lease.FenceAfter, "fence-after", o.lease.FenceAfter, "a node cut off from the tier this long destroys its sandboxes (0: never)")
	f.DurationVar(&o.createTimeout, "create-timeout", 30*time.Second, "longest a create may take, placement and node included")
	f.DurationVar(&o.reconcileAfter, "reconcile-after", 0, "a create still unconfirmed this long after its row was made is resolved by asking its node (default: --create-timeout + 10s)")
	f.DurationVar(&o.keyCache, "key-cache", 30*time.Second, "how long an authenticated key is trusted without the database (revocations take this long; negative: off)")
	f.Int64Var(&o.maxUpload, "max-upload-bytes", 512<<20, "largest single file upload")
	f.IntVar(&o.admission.Requests, "tenant-max-requests", api.DefaultTenantRequests, "requests one tenant may have in progress at once on this replica (then 429)")
	f.IntVar(&o.admission.Streams, "tenant-max-streams", api.DefaultTenantStreams, "execs and transfers one tenant may have in progress at once on this replica (then 429)")
	f.IntVar(&o.admission.GlobalRequests, "max-requests", api.DefaultGlobalRequests, "requests in progress at once on this replica")
	return cmd
}

func (o *apiOptions) run(ctx context.Context) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if o.dsn == "" {
		o.dsn = os.Getenv(clusterDSNEnv)
	}
	if o.dsn == "" {
		return errdefs.InvalidArgument("no database: pass --dsn or set %s", clusterDSNEnv)
	}
	tok, err := os.ReadFile(o.tokenFile)
	if err != nil {
		return fmt.Errorf("--cluster-token-file: %w", err)
	}
	token := strings.TrimSpace(string(tok))
	if len(token) < 16 {
		return errdefs.InvalidArgument("cluster join token in %s: want at least 16 characters", o.tokenFile)
	}
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	st, err := pgstore.Open(octx, o.dsn, pgstore.Options{Lease: o.lease})
	cancel()
	if err != nil {
		return err
	}
	defer st.Close()
	failpoint := os.Getenv("AIRLOCK_API_FAILPOINT")
	if failpoint != "" {
		log.Warn("AIRLOCK_API_FAILPOINT is set: this API process will kill itself at that create or fork step (fault-injection tests only)", "failpoint", failpoint)
	}
	t, err := apitier.New(ctx, apitier.Config{Store: st, JoinToken: token, CreateTimeout: o.createTimeout, ReconcileAfter: o.reconcileAfter,
		KeyCache: o.keyCache, Failpoint: failpoint, Log: log})
	if err != nil {
		return err
	}
	pub, err := api.ListenTCP(o.listen)
	if err != nil {
		return err
	}
	in, err := api.ListenTCP(o.internal)
	if err != nil {
		pub.Close()
		return err
	}
	log.Info("airlock api serving", "listen", pub.Addr().String(), "internal", in.Addr().String(), "version", version)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Run(ctx)
	}()
	errc := make(chan error, 1)
	go func() { errc <- api.Serve(ctx, t.InternalHandler(), api.ServeOptions{Log: log}, in) }()
	err = api.Serve(ctx, t.PublicHandler(api.Config{Logger: log, Metrics: metrics.New(), MaxUploadBytes: o.maxUpload,
		Admission: o.admission}), api.ServeOptions{Log: log}, pub)
	stop()
	<-done
	if ierr := <-errc; err == nil {
		err = ierr
	}
	return err
}
