package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/vm"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	var (
		mem, vcpus int
		timeout    time.Duration
		shell      bool
		env        []string
		cwd        string
		verbose    bool
	)
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Boot a throwaway VM, run one command in it, destroy it",
		Long: `Boot a throwaway VM, run one command in it with its output streamed, and
destroy the VM. airlock exits with the command's exit code.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			progress := func(format string, a ...any) {
				if verbose {
					fmt.Fprintf(os.Stderr, "airlock: "+format+"\n", a...)
				}
			}
			t0 := time.Now()
			host, err := vm.NewHost(ctx, vm.Config{CacheDir: g.cacheDir, RunDir: g.runDir, Accel: g.accel, Progress: progress})
			if err != nil {
				return err
			}
			t1 := time.Now()
			vm, err := host.Boot(ctx, vm.BootOptions{MemoryMiB: mem, VCPUs: vcpus})
			if err != nil {
				return err
			}
			// Destroy even when interrupted: use a fresh context.
			defer func() {
				dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := vm.Destroy(dctx); err != nil {
					fmt.Fprintf(os.Stderr, "airlock: destroy %s: %v\n", vm.ID, err)
				}
			}()
			t2 := time.Now()
			progress("vm %s booted with %s in %s (setup %s)", vm.ID, host.Accel.Accel, t2.Sub(t1).Round(time.Millisecond), t1.Sub(t0).Round(time.Millisecond))
			opts := guest.ExecOptions{Env: env, Cwd: cwd, Timeout: timeout}
			if shell {
				if len(args) != 1 {
					return fmt.Errorf("--shell takes exactly one command string")
				}
				opts.Shell = args[0]
			} else {
				opts.Argv = args
			}
			if !term.IsTerminal(int(os.Stdin.Fd())) {
				opts.Stdin = os.Stdin
			}
			res, err := vm.Agent.Exec(ctx, opts, os.Stdout, os.Stderr)
			if err != nil {
				return err
			}
			progress("exit %d in %s", res.ExitCode, res.Duration)
			if res.TimedOut {
				fmt.Fprintf(os.Stderr, "airlock: command timed out after %s and was killed\n", timeout)
			}
			if res.StdoutTruncated || res.StderrTruncated {
				fmt.Fprintf(os.Stderr, "airlock: output truncated (stdout %d bytes, stderr %d bytes produced)\n", res.StdoutBytes, res.StderrBytes)
			}
			if res.ExitCode != 0 {
				return exitError{res.ExitCode}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&mem, "mem", 256, "guest memory in MiB")
	f.IntVar(&vcpus, "vcpus", 1, "guest vCPUs")
	f.DurationVar(&timeout, "timeout", 0, "kill the command (and all it started) after this long; 0 = no limit")
	f.BoolVar(&shell, "shell", false, "run the single argument with /bin/sh -c")
	f.StringArrayVarP(&env, "env", "e", nil, "KEY=VALUE to add to the command's environment (repeatable)")
	f.StringVar(&cwd, "cwd", "", "working directory in the guest (absolute)")
	f.BoolVarP(&verbose, "verbose", "v", false, "report progress and timings on stderr")
	return cmd
}
