// Command airlock is the CLI and daemon: it runs untrusted document jobs in
// throwaway microVMs. See README.md for the command reference.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes. A command run in a sandbox (`run`, `sandbox exec`) exits
// with its own code, so airlock's own outcomes use the codes docker uses
// for the same purpose, which commands rarely return themselves:
const (
	// exitUsage: the command line is wrong (unknown command or flag, bad
	// argument count or value). Nothing was attempted.
	exitUsage = 2
	// exitAirlock: airlock itself failed (the daemon is unreachable or
	// refused, a VM could not start, ...): the command never ran.
	exitAirlock = 125
	// 126 and 127 (cannot execute, not found) come from the guest as a
	// shell reports them, as the command's own exit code.
)

// exitError carries a specific process exit code (a guest command's, or
// a job command's documented one) whose message, if any, is printed
// already.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// jsonError is an error as --json prints it: {"error": jsonError}.
type jsonError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// usageError is a mistake on the command line: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCmd()
	cmd, err := root.ExecuteContextC(ctx)
	stop()
	os.Exit(report(os.Stderr, cmd, err))
}

// report prints err the way the executed command asked for (JSON under
// --json, one line otherwise) and returns the process's exit code.
func report(w io.Writer, cmd *cobra.Command, err error) int {
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	code, msg := errdefs.Code(err), errorMessage(err)
	exit := exitAirlock
	var ce *client.Error
	switch {
	case errors.As(err, &ue):
		code, exit = "invalid_argument", exitUsage
	case errdefs.IsInvalidArgument(err) && !errors.As(err, &ce):
		// Refused here, before anything was sent or started: the command
		// line (or a file it names) is wrong. The server's own
		// invalid_argument answers stay airlock failures.
		exit = exitUsage
	}
	if wantsJSON(cmd) {
		b, _ := json.Marshal(map[string]jsonError{"error": {Code: code, Message: msg}})
		fmt.Fprintf(w, "%s\n", b)
		return exit
	}
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "airlock: %s\nRun '%s --help' for usage.\n", msg, cmd.CommandPath())
		return exit
	}
	fmt.Fprintf(w, "airlock: %s [%s]\n", msg, code)
	return exit
}

// errorMessage is err's text without the "airlock: " prefixes the client
// library and wrapped layers put in front of it.
func errorMessage(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "airlock: ") {
		msg = strings.TrimPrefix(msg, "airlock: ")
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		msg = ce.Message // the server's own words, without local wrapping
	}
	if errors.Is(err, client.ErrUnavailable) && ce == nil {
		msg += " (is `airlock serve` running there? point the CLI at it with --url or AIRLOCK_URL)"
	}
	return msg
}

// wantsJSON reports whether the executed command was given --json.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// markUsageErrors makes every command's argument and flag errors
// usageErrors, so they exit 2 instead of looking like a failure.
func markUsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	if cmd.HasSubCommands() && !cmd.Runnable() {
		// Runnable, so that cobra validates its arguments (a mistyped
		// subcommand) instead of printing help and exiting 0.
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	args := cmd.Args
	if args == nil {
		if cmd.HasSubCommands() {
			args = cobra.NoArgs // "unknown command" for a mistyped subcommand
		} else {
			args = cobra.ArbitraryArgs
		}
	}
	cmd.Args = func(c *cobra.Command, a []string) error {
		if err := args(c, a); err != nil {
			return usageError{err}
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// globalFlags are shared by every command; flags beat environment.
type globalFlags struct {
	cacheDir string
	runDir   string
	accel    string
	jail     string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "airlock",
		Short:         "Run untrusted document jobs in throwaway microVMs",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("airlock {{.Version}}\n")
	root.PersistentFlags().StringVar(&g.cacheDir, "cache-dir", "", "cache for kernels and images (env AIRLOCK_CACHE_DIR)")
	root.PersistentFlags().StringVar(&g.runDir, "run-dir", "", "live VM state (env AIRLOCK_RUN_DIR)")
	root.PersistentFlags().StringVar(&g.accel, "accel", envOr("AIRLOCK_ACCEL", "auto"), "acceleration: auto, kvm or tcg (env AIRLOCK_ACCEL)")
	root.PersistentFlags().StringVar(&g.jail, "jail", envOr("AIRLOCK_JAIL", "on"), "confine every VMM in a jail of its own (on), or run them unconfined (off: shown by doctor and in every sandbox) (env AIRLOCK_JAIL)")
	root.AddCommand(newVersionCmd(), newDoctorCmd(g), newRunCmd(g), newSandboxCmd(g), newKeyCmd(g), newAuditCmd(g), newTemplateCmd(g), newServeCmd(g), newBenchCmd(g), newReviewCmd(g), newInvoiceCmd(g), newRedactCmd(g), newCorpusCmd(), newEvalCmd(g), newClusterCmd(), newNodeCmd(), newMCPCmd(), newAPICmd(), newBlobsCmd())
	markUsageErrors(root)
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
