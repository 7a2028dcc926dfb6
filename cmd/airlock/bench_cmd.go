package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/bench"
	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/vm"
)

func newBenchCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var o bench.Options
	var name string
	var asJSON, jailCost bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure cold boot, create, fork, exec and idle memory for a template",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			h, err := hf.host(ctx)
			if err != nil {
				return err
			}
			defer h.Close()
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			t, err := reg.Open(h, name)
			if err != nil {
				return err
			}
			o.Progress = func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
			r, err := bench.Run(ctx, h, t, o)
			if err != nil {
				return err
			}
			if jailCost && h.Driver.Jailed() {
				o.Progress("jail cost: creates with and without the jail, alternating (%d each)", o.Creates)
				uh, err := vm.NewHost(ctx, vm.Config{CacheDir: g.cacheDir, RunDir: g.runDir, Accel: g.accel, Jail: "off"})
				if err != nil {
					return err
				}
				defer uh.Close()
				if r.JailCost, err = bench.MeasureJailCost(ctx, h, uh, t, o.Creates); err != nil {
					return err
				}
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			r.Print(cmd.OutOrStdout())
			return nil
		},
	}
	hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&name, "template", "t", "base", "baked template to measure")
	f.IntVarP(&o.Creates, "n", "n", 30, "creates measured per mode")
	f.IntVar(&o.Execs, "execs", 100, "exec round trips measured")
	f.IntVar(&o.ColdBoots, "cold-boots", 3, "cold boots measured")
	f.IntVar(&o.Forks, "forks", 3, "forks measured")
	f.IntVar(&o.Idle, "idle", 10, "idle sandboxes for the memory figure")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&jailCost, "jail-cost", true, "also measure creates without the jail, alternating with jailed ones, for the jail's cost")
	cmd.AddCommand(newSoakCmd(g), newBenchOneShotCmd(g), newBenchOCRCmd(g))
	return cmd
}

func newSoakCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var o bench.SoakOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Concurrent create/write/exec/read/kill cycles for a while, then count what leaked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			// A store of its own: the soak's sandboxes are not the
			// operator's, and neither are their audit records.
			dir, err := os.MkdirTemp("", "airlock-soak-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			// A pool that does not adapt: what is left after the run must
			// be comparable to before it, or a grown pool reads as a leak.
			d, err := daemon.Open(ctx, daemon.Options{StateDir: hf.stateDir, StoreDir: dir, Host: hf.hostConfig(), KillOnClose: true,
				Manager: sandbox.Config{WarmPool: o.Clients + 1, WarmPoolMax: o.Clients + 1, MaxSandboxes: 4*o.Clients + 4}})
			if err != nil {
				return err
			}
			defer d.Close(context.WithoutCancel(ctx))
			m, h := d.Manager, d.Host
			o.Progress = func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
			r, err := bench.Soak(ctx, m, h, o)
			if err != nil {
				return err
			}
			if asJSON {
				err = json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			} else {
				r.Print(cmd.OutOrStdout())
			}
			if err == nil && (r.Errors > 0 || !r.Leaked.Clean()) {
				return exitError{code: 1}
			}
			return err
		},
	}
	hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.Template, "template", "t", "base", "baked template to cycle")
	f.IntVarP(&o.Clients, "clients", "c", 2, "concurrent clients")
	f.DurationVarP(&o.Duration, "duration", "d", 30*time.Second, "how long to start cycles")
	f.IntVar(&o.Payload, "payload", 64<<10, "bytes written and read back per cycle")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
