package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
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
		via  string
		dURL string
	)
	cmd := &cobra.Command{
		Use:   "oneshot [--template T] [-n N] [--via local,daemon] [--vs runsc,bwrap]",
		Short: "Time `airlock run --template T -- true` as a whole process, against gVisor or bubblewrap in the same run",
		Long: `Run "airlock run --template T -- true" N times as a new process each time
(what a user or a daemonless batch waits for: host setup, restore, exec,
teardown), interleaved with the same throwaway "true" in gVisor (runsc, ptrace
platform, no network) and bubblewrap (all namespaces unshared), and print
wall time, CPU time and peak RSS of each, with airlock's median wall time as
a ratio to each rival's. Without --vs, every rival installed here is used.

airlock runs both ways "airlock run" can (--via): in this process
("airlock", run --via local) and through the daemon at --url
("airlock-daemon", run --via daemon, which needs AIRLOCK_API_KEY). By
default the daemon way is timed when a daemon answers there, and said so
when not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			ways, err := oneShotWays(cmd.Context(), via, cmd.Flags().Changed("via"), dURL, name)
			if err != nil {
				return err
			}
			var cs []bench.Contender
			for _, way := range ways {
				argv := []string{self}
				if way == viaLocal {
					argv = append(argv, "--jail", g.jail, "--accel", g.accel)
					if g.cacheDir != "" {
						argv = append(argv, "--cache-dir", g.cacheDir)
					}
					if g.runDir != "" {
						argv = append(argv, "--run-dir", g.runDir)
					}
					argv = append(argv, "run", "--via", viaLocal, "--state-dir", hf.stateDir)
					cs = append(cs, bench.Contender{Name: "airlock", Argv: append(argv, "--template", name, "--", "true")})
				} else {
					argv = append(argv, "run", "--via", viaDaemon, "--url", dURL)
					cs = append(cs, bench.Contender{Name: "airlock-daemon", Argv: append(argv, "--template", name, "--", "true")})
				}
			}
			ours := len(cs)
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
			bench.PrintOneShot(cmd.OutOrStdout(), rs, ours)
			return nil
		},
	}
	hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&name, "template", "t", "base", "baked template airlock restores")
	f.IntVarP(&n, "n", "n", 20, "runs of each contender")
	f.StringSliceVar(&vs, "vs", nil, "rivals to run beside airlock: runsc, bwrap (default: those installed)")
	f.StringVar(&via, "via", "local,daemon", "the ways airlock runs: local (in this process), daemon (through the daemon at --url); default both, the daemon's when one answers")
	f.StringVar(&dURL, "url", daemonURL(), "the daemon run --via daemon goes through (env AIRLOCK_URL or AIRLOCK_SOCKET)")
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

// oneShotWays returns the ways of `airlock run` to time: local, daemon or
// both. Unless --via named it, the daemon way is left out (and said so)
// when no daemon answers at url with AIRLOCK_API_KEY.
func oneShotWays(ctx context.Context, via string, named bool, url, tmpl string) ([]string, error) {
	var ways []string
	for _, w := range strings.Split(via, ",") {
		switch w = strings.TrimSpace(w); w {
		case viaLocal, viaDaemon:
			if !slices.Contains(ways, w) {
				ways = append(ways, w)
			}
		default:
			return nil, usageErr("--via %q: want local, daemon or both", w)
		}
	}
	if !slices.Contains(ways, viaDaemon) {
		return ways, nil
	}
	o := &runOptions{hf: &hostFlags{g: &globalFlags{}}, via: viaDaemon, tmplName: tmpl, url: url}
	_, err := o.daemonClient(ctx)
	switch {
	case err == nil:
		return ways, nil
	case named:
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: oneshot: not timing run through a daemon: %v\n", err)
	return slices.DeleteFunc(ways, func(w string) bool { return w == viaDaemon }), nil
}
