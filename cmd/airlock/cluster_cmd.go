package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/placement/sim"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Tools for airlock across many hosts",
	}
	cmd.AddCommand(newClusterSimCmd(), newClusterMigrateCmd(), newClusterKeyCmd(), newClusterImportCmd())
	return cmd
}

// clusterStore opens the cluster database named by dsn or $AIRLOCK_CLUSTER_DSN.
func clusterStore(ctx context.Context, dsn string) (*pgstore.Store, error) {
	if dsn == "" {
		dsn = os.Getenv(clusterDSNEnv)
	}
	if dsn == "" {
		return nil, errdefs.InvalidArgument("no database: pass --dsn or set %s", clusterDSNEnv)
	}
	return pgstore.Open(ctx, dsn, pgstore.Options{})
}

func newClusterKeyCmd() *cobra.Command {
	var dsn, name string
	cmd := &cobra.Command{Use: "key", Short: "Manage the cluster's tenant API keys (in PostgreSQL)"}
	create := &cobra.Command{
		Use:   "create TENANT [--name NAME] [--dsn DSN]",
		Short: "Make an API key for TENANT in the cluster and print it (shown once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			key, _, err := st.CreateKey(ctx, args[0], name)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	create.Flags().StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	create.Flags().StringVar(&name, "name", "cli", "the key's label")
	cmd.AddCommand(create)
	return cmd
}

// verifyCluster is `airlock audit verify --cluster`: every chain in the
// cluster database, node chains and the control chain, walked in full.
func verifyCluster(cmd *cobra.Command, dsn string, asJSON bool) error {
	ctx := cmd.Context()
	st, err := clusterStore(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	chains, err := st.ListChains(ctx)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	bad := 0
	var reports []map[string]any
	for _, c := range chains {
		rep, err := st.VerifyChain(ctx, c.ID)
		if err != nil {
			return err
		}
		if !rep.OK {
			bad++
		}
		if asJSON {
			reports = append(reports, map[string]any{"chain": c.ID, "kind": c.Kind, "node": c.Node, "ok": rep.OK,
				"records": rep.Records, "first_bad_seq": rep.FirstBadSeq, "problem": rep.Problem, "last_hash": rep.LastHash})
			continue
		}
		who := c.Node
		if who == "" {
			who = "(control)"
		}
		if rep.OK {
			fmt.Fprintf(out, "chain %s %s ok: %d records, last hash %s\n", c.ID, who, rep.Records, rep.LastHash)
		} else {
			fmt.Fprintf(out, "chain %s %s BROKEN at record %d: %s\n", c.ID, who, rep.FirstBadSeq, rep.Problem)
		}
	}
	if asJSON {
		if err := printJSON(out, map[string]any{"ok": bad == 0, "chains": reports}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return exitError{1}
	}
	return nil
}

// clusterDSNEnv names the variable that gives the cluster database's
// connection string where --dsn is not given (a flag's value shows in
// the process list; a password belongs in the environment or a
// PostgreSQL password file).
const clusterDSNEnv = "AIRLOCK_CLUSTER_DSN"

func newClusterMigrateCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "migrate [--dsn DSN]",
		Short: "Bring the cluster's PostgreSQL schema up to this binary's",
		Long: `Apply the cluster schema migrations this binary knows and the database has
not seen, under an advisory lock (replicas starting at the same time wait
for each other), and print the schema version. A database whose schema is
newer than this binary is refused. The single-host daemon never needs this.

The DSN is a PostgreSQL connection string or URL; without --dsn it is read
from $` + clusterDSNEnv + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dsn == "" {
				dsn = os.Getenv(clusterDSNEnv)
			}
			if dsn == "" {
				return errdefs.InvalidArgument("no database: pass --dsn or set %s", clusterDSNEnv)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			v, err := pgstore.Migrate(ctx, dsn)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster schema at version %d\n", v)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	return cmd
}

func newClusterSimCmd() *cobra.Command {
	cfg := sim.DefaultConfig()
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sim [--nodes N] [--slots S] [--load 0.5,0.8,0.9,0.95] [--seed X] [--json]",
		Short: "Simulate placement across a fleet, on virtual time",
		Long: `Simulate placement across a fleet of nodes: the real placement code and the
real lease rules (heartbeats, sweeps, fencing) on a virtual clock, three API
replicas placing side by side, Poisson arrivals at each target load, 16
templates of Zipf popularity, heavy-tailed lifetimes, and 1% of nodes failing
per hour. No VM, network or database is used. Each load level starts filled
to its target and runs one mean lifetime (about an hour of virtual time); the
full run takes about two minutes and 200 MiB.

The same seed gives the same numbers, except the wall-clock ones: decision
time (the real placement call), wall time and RSS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				_, err := sim.Run(cfg, func(r sim.Report) { enc.Encode(r) })
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
			printSimHeader(tw)
			_, err := sim.Run(cfg, func(r sim.Report) { printSimRow(tw, r) })
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes in the fleet")
	f.IntVar(&cfg.Slots, "slots", cfg.Slots, "sandbox slots per node")
	f.Float64SliceVar(&cfg.Loads, "load", cfg.Loads, "target loads, as fractions of capacity")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every random choice")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per load level")
	return cmd
}

func printSimHeader(tw *tabwriter.Writer) {
	fmt.Fprintln(tw, "load\tcreates\tsuccess\tattempts/create\trefusals/create\tmean fill\tmax/mean fill\tp99/mean fill\twarm hits\tdecision p50 us\tdecision p99 us\tdead-node dispatches\tfailures\tdetection mean/max s\twall s\tRSS MiB\t")
	tw.Flush()
}

// printSimRow prints one level and flushes, so a long run shows each
// level as it ends.
func printSimRow(tw *tabwriter.Writer, r sim.Report) {
	fmt.Fprintf(tw, "%.2f\t%d\t%.5f\t%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%d\t%d\t%.1f/%.1f\t%.1f\t%.0f\t\n",
		r.Load, r.Creates, r.SuccessRate, r.AttemptsPerCreate, r.RefusalsPerCreate, r.MeanFill,
		r.MaxFillOverMean, r.P99FillOverMean, r.WarmHitRatio, r.DecisionP50us, r.DecisionP99us,
		r.DeadNodeDispatches, r.NodeFailures, r.Detection.Mean, r.Detection.Max, r.WallS, r.RSSMiB)
	tw.Flush()
}
