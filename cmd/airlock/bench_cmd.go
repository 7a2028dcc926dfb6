package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/bench"
)

func newBenchCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var o bench.Options
	var name string
	var asJSON bool
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
	return cmd
}
