package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/cluster/hostimport"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func newClusterImportCmd() *cobra.Command {
	var (
		dsn    string
		o      hostimport.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "import --state-dir DIR [--node-id ID] [--dsn DSN] [--json]",
		Short: "Import a single host's keys, ended sandboxes and audit chain into the cluster",
		Long: `Import the state directory of a single-host airlock into the cluster's
PostgreSQL, as node ID (default: this host's name): its tenants and API keys
(the stored hashes: every key goes on working against the API tier), its
ended sandbox records, and its audit chain, which becomes the node's chain.
The chain is verified on the host first (a broken one is refused and nothing
is written) and in PostgreSQL after; ` + "`airlock audit verify --cluster`" + ` walks it
from then on. When the host later joins the cluster as ID, it ships the
same chain on.

The directory's daemon must be stopped: its lock is taken for the whole
import (a running daemon is refused with failed_precondition). Sandboxes
still running on the host are not imported, nor are its templates (a node
reports the templates it holds when it registers, so the host's come with
it when it joins); the report counts both. Importing again adds only what is new: nothing, for an
unchanged directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.StateDir == "" {
				return usageError{errdefs.InvalidArgument("--state-dir is required")}
			}
			if o.Node == "" {
				h, err := os.Hostname()
				if err != nil {
					return fmt.Errorf("node id: %w", err)
				}
				o.Node = strings.ToLower(h)
			}
			ctx := cmd.Context()
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := hostimport.Import(ctx, st, o)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			printImport(cmd.OutOrStdout(), o.StateDir, rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.StateDir, "state-dir", "", "the host's state directory (its daemon stopped)")
	f.StringVar(&o.Node, "node-id", "", "the node id the host has in the cluster (default: the host name)")
	f.StringVar(&dsn, "dsn", "", "PostgreSQL connection string (default $"+clusterDSNEnv+")")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printImport(w io.Writer, dir string, r hostimport.Report) {
	fmt.Fprintf(w, "imported %s as node %s (audit chain %s)\n", dir, r.Node, r.Chain)
	fmt.Fprintf(w, "  tenants:          %s\n", strings.Join(r.Tenants, ", "))
	fmt.Fprintf(w, "  API keys:         %d (%d new)\n", r.Keys, r.KeysAdded)
	fmt.Fprintf(w, "  ended sandboxes:  %d (%d new)\n", r.Ended, r.EndedAdded)
	fmt.Fprintf(w, "  audit records:    %d (%d new), verified on the host and in PostgreSQL; last hash %s\n",
		r.AuditRecords, r.AuditAdded, r.LastHash)
	fmt.Fprintf(w, "  not imported:     %d running sandboxes (they run on the host), %d templates (the host reports its own when it joins as a node)\n",
		r.Running, r.Templates)
}
