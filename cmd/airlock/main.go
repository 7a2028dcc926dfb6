// Command airlock is the CLI and daemon: it runs untrusted document jobs in
// throwaway microVMs. See README.md for the command reference.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a specific process exit code (a guest command's).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	default:
		fmt.Fprintf(os.Stderr, "airlock: %v [%s]\n", err, errdefs.Code(err))
		os.Exit(1)
	}
}

// globalFlags are shared by every command; flags beat environment.
type globalFlags struct {
	cacheDir string
	runDir   string
	accel    string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "Run untrusted document jobs in throwaway microVMs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.cacheDir, "cache-dir", "", "cache for kernels and images (env AIRLOCK_CACHE_DIR)")
	root.PersistentFlags().StringVar(&g.runDir, "run-dir", "", "live VM state (env AIRLOCK_RUN_DIR)")
	root.PersistentFlags().StringVar(&g.accel, "accel", envOr("AIRLOCK_ACCEL", "auto"), "acceleration: auto, kvm or tcg (env AIRLOCK_ACCEL)")
	root.AddCommand(newVersionCmd(), newDoctorCmd(g), newRunCmd(g), newSandboxCmd(g), newKeyCmd(g), newAuditCmd(g), newTemplateCmd(g), newServeCmd(g), newBenchCmd(g), newReviewCmd(g), newInvoiceCmd(g), newRedactCmd(g), newCorpusCmd(), newEvalCmd(g))
	return root
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print airlock's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "airlock %s\n", version)
		},
	}
}
