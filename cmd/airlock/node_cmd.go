package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// The node commands are operator tools: they talk to the cluster's
// PostgreSQL directly (--dsn or $AIRLOCK_CLUSTER_DSN), as `cluster key`
// does. Whoever can run them holds the database's credentials, which is
// the operator's privilege; a tenant's API key reaches none of this.

func newNodeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Operate a cluster's nodes (reads and writes the cluster's PostgreSQL)",
		Long: `List, drain and undrain the nodes of a cluster. These commands connect to the
cluster's PostgreSQL (--dsn, or $` + clusterDSNEnv + `) with the operator's
credentials; they are not API routes and no tenant key can reach them.`,
	}
	cmd.AddCommand(newNodeLsCmd(), newNodeDrainCmd(), newNodeUndrainCmd())
	return cmd
}

// nodeJSON is a node as `node ls --json` prints it.
type nodeJSON struct {
	ID            string     `json:"id"`
	State         string     `json:"state"`
	Epoch         int64      `json:"epoch"`
	Address       string     `json:"address"`
	HostClass     string     `json:"host_class"`
	LeaseExpires  time.Time  `json:"lease_expires"`
	LeaseLeftS    float64    `json:"lease_left_seconds"`
	HeartbeatAgeS float64    `json:"heartbeat_age_seconds"`
	Capacity      capJSON    `json:"capacity"`
	Used          capJSON    `json:"used"`
	CPUUsage      float64    `json:"cpu_usage"`
	Running       int        `json:"running_sandboxes"`
	Paused        int        `json:"paused_sandboxes"`
	Version       string     `json:"version"`
	LostAt        *time.Time `json:"lost_at,omitempty"`
}

type capJSON struct {
	Slots  int   `json:"slots"`
	MemMiB int64 `json:"memory_mib"`
	VCPUs  int   `json:"vcpus"`
}

func toNodeJSON(n pgstore.NodeStatus) nodeJSON {
	return nodeJSON{ID: n.ID, State: string(n.State), Epoch: n.Epoch, Address: n.Addr, HostClass: n.HostClass,
		LeaseExpires: n.LeaseExpires.UTC(), LeaseLeftS: secs(n.LeaseExpires.Sub(n.Now)), HeartbeatAgeS: secs(n.Now.Sub(n.HeartbeatAt)),
		Capacity: capJSON{n.Capacity.Slots, n.Capacity.MemMiB, n.Capacity.VCPUs},
		Used:     capJSON{n.Used.Slots, n.Used.MemMiB, n.Used.VCPUs}, CPUUsage: n.CPUUsage,
		Running: n.Live, Paused: n.Paused, Version: n.Version, LostAt: n.LostAt}
}

func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

func newNodeLsCmd() *cobra.Command {
	var dsn string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--json] [--dsn DSN]",
		Short: "List the cluster's nodes: state, lease, heartbeat, capacity and sandboxes",
		Long: `List every node the cluster's database knows, by id: its state (ready,
draining, lost, left), lease epoch, address, host class, when its lease ends
and how long ago it last heartbeat (both by the database's clock), its
capacity and what its last heartbeat said it uses, and the catalog's live
sandboxes on it (paused ones counted among them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			nodes, err := st.NodeStatuses(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				list := make([]nodeJSON, 0, len(nodes))
				for _, n := range nodes {
					list = append(list, toNodeJSON(n))
				}
				return printJSON(out, map[string]any{"nodes": list})
			}
			printNodes(out, nodes)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printNodes(w io.Writer, nodes []pgstore.NodeStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tEPOCH\tADDRESS\tHOST CLASS\tLEASE LEFT\tHEARTBEAT AGE\tSLOTS\tMEMORY MiB\tVCPUS\tSANDBOXES")
	for _, n := range nodes {
		sbs := fmt.Sprint(n.Live)
		if n.Paused > 0 {
			sbs += fmt.Sprintf(" (%d paused)", n.Paused)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%s\n", n.ID, n.State, n.Epoch, n.Addr, short(n.HostClass),
			age(n.LeaseExpires.Sub(n.Now)), age(n.Now.Sub(n.HeartbeatAt)), n.Used.Slots, n.Capacity.Slots,
			n.Used.MemMiB, n.Capacity.MemMiB, n.Used.VCPUs, n.Capacity.VCPUs, sbs)
	}
	tw.Flush()
}

// short cuts a long host class (a hash) for the table; --json has it whole.
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "-"
	}
	return s
}

func age(d time.Duration) string {
	if d < 0 {
		return "-" + d.Abs().Round(100*time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func newNodeDrainCmd() *cobra.Command {
	var (
		dsn     string
		wait    bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "drain ID [--wait [--timeout D]] [--dsn DSN]",
		Short: "Stop placing sandboxes on a node; its sandboxes run on",
		Long: `Mark node ID draining: placement skips it and the catalog refuses any create
or fork on it, while its sandboxes run on to their deadline or a kill. A node
that is lost or has left is refused (failed_precondition).

With --wait, print the node's live sandboxes as they end and return once it
has none; past --timeout (default 30m, 0 waits for ever) exit 1 with a
deadline_exceeded error, the node still draining.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.DrainNode(ctx, args[0]); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "node %s draining\n", args[0])
			if !wait {
				return nil
			}
			return waitDrained(ctx, st, args[0], timeout, out)
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	cmd.Flags().BoolVar(&wait, "wait", false, "return only when the node has no live sandboxes")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "with --wait: give up after this long (0: never)")
	return cmd
}

// drainPoll is how often `node drain --wait` reads the catalog.
const drainPoll = 250 * time.Millisecond

// waitDrained prints node id's live sandboxes whenever their number
// changes and returns when it is zero; past timeout it is
// DeadlineExceeded. An undrain meanwhile ends the wait with
// FailedPrecondition.
func waitDrained(ctx context.Context, st *pgstore.Store, id string, timeout time.Duration, out io.Writer) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	last := -1
	for {
		n, err := st.NodeStatusOf(ctx, id)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			return err
		}
		if n.Live != last {
			fmt.Fprintf(out, "node %s: %s\n", id, liveSandboxes(n.Live))
			last = n.Live
		}
		if n.Live == 0 {
			fmt.Fprintf(out, "node %s drained\n", id)
			return nil
		}
		if n.State != "draining" {
			return errdefs.FailedPrecondition("node %s is %s now, no longer draining (%s)", id, n.State, liveSandboxes(n.Live))
		}
		select {
		case <-ctx.Done():
		case <-time.After(drainPoll):
		}
	}
	if timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errdefs.DeadlineExceeded("node %s still has %s after %s; it stays draining", id, liveSandboxes(last), timeout)
	}
	return ctx.Err()
}

func newNodeUndrainCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "undrain ID [--dsn DSN]",
		Short: "Let placement use a draining node again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.UndrainNode(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "node %s ready\n", args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	return cmd
}

func liveSandboxes(n int) string {
	if n == 1 {
		return "1 live sandbox"
	}
	return fmt.Sprintf("%d live sandboxes", n)
}
