package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/bench"
)

// oneShotRivals are the other sandboxes `bench oneshot --vs` knows: the
// same throwaway `true`, each with its network cut and its own namespaces.
var oneShotRivals = map[string][]string{
	"runsc": {"runsc", "--network=none", "--platform=ptrace", "do", "true"},
	"bwrap": {"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--die-with-parent", "true"},
}

func newBenchOneShotCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var (
		name string
		n    int
		vs   []string
	)
	cmd := &cobra.Command{
		Use:   "oneshot [--template T] [-n N] [--vs runsc,bwrap]",
		Short: "Time `airlock run --template T -- true` as a whole process, against gVisor or bubblewrap in the same run",
		Long: `Run "airlock run --template T -- true" N times as a new process each time
(what a user or a daemonless batch waits for: host setup, restore, exec,
teardown), interleaved with the same throwaway "true" in gVisor (runsc, ptrace
platform, no network) and bubblewrap (all namespaces unshared), and print
wall time, CPU time and peak RSS of each, with airlock's median wall time as
a ratio to each rival's. Without --vs, every rival installed here is used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			argv := []string{self, "--jail", g.jail, "--accel", g.accel}
			if g.cacheDir != "" {
				argv = append(argv, "--cache-dir", g.cacheDir)
			}
			if g.runDir != "" {
				argv = append(argv, "--run-dir", g.runDir)
			}
			argv = append(argv, "run", "--state-dir", hf.stateDir, "--template", name, "--", "true")
			cs := []bench.Contender{{Name: "airlock", Argv: argv}}
			rivals, err := pickRivals(vs, cmd.Flags().Changed("vs"))
			if err != nil {
				return err
			}
			cs = append(cs, rivals...)
			say := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
			say("oneshot: %d rounds of %d contenders, interleaved", n, len(cs))
			rs, err := bench.OneShot(cmd.Context(), cs, n, say)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "one-shot `true`, template %s, %d runs each\n", name, n)
			bench.PrintOneShot(cmd.OutOrStdout(), rs)
			return nil
		},
	}
	hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&name, "template", "t", "base", "baked template airlock restores")
	f.IntVarP(&n, "n", "n", 20, "runs of each contender")
	f.StringSliceVar(&vs, "vs", nil, "rivals to run beside airlock: runsc, bwrap (default: those installed)")
	return cmd
}

// pickRivals returns the rivals named (each must be installed), or, when
// none were named, every one that is.
func pickRivals(names []string, named bool) ([]bench.Contender, error) {
	if !named {
		names = []string{"runsc", "bwrap"}
	}
	var out []bench.Contender
	for _, name := range names {
		argv, ok := oneShotRivals[name]
		if !ok {
			return nil, usageErr("--vs %q: want runsc or bwrap", name)
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			if named {
				return nil, usageErr("--vs %s: %s is not installed here (%v)", name, argv[0], err)
			}
			continue
		}
		out = append(out, bench.Contender{Name: name, Argv: argv})
	}
	if named && len(out) == 0 {
		return nil, usageErr("--vs: name at least one of %s", strings.Join([]string{"runsc", "bwrap"}, ", "))
	}
	return out, nil
}
