package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/template"
)

func newTemplateCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "template", Short: "Build, list, inspect and remove templates"}
	cmd.AddCommand(newTemplateBuildCmd(g), newTemplateLsCmd(g), newTemplateInspectCmd(g), newTemplateRmCmd(g))
	return cmd
}

func newTemplateBuildCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var dir string
	cmd := &cobra.Command{
		Use:   "build NAME|FILE.yaml...",
		Short: "Bake templates from their specs (cached: an unchanged spec is not rebuilt)",
		Long: `Bake templates: build the root filesystem from the spec (mmdebstrap), cold
boot it, run the build steps and warm-up, and snapshot it. A NAME is looked
up as DIR/NAME.yaml (--dir, default ./templates); a path ending in .yaml is
loaded directly. Templates named by "from:" are resolved from the same
directory.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var console *template.Console
			progress := image.Progress(func(format string, a ...any) {
				fmt.Fprintf(os.Stderr, "airlock: "+format+"\n", a...)
			})
			if term.IsTerminal(int(os.Stderr.Fd())) {
				console = template.NewConsole(os.Stderr)
				defer console.Close()
				progress = console.Progress
			}
			hf.verbose = true
			h, err := hf.host(ctx)
			if err != nil {
				return err
			}
			defer h.Close()
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			for _, arg := range args {
				specDir, name := dir, arg
				if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
					specDir, name = filepath.Dir(arg), strings.TrimSuffix(strings.TrimSuffix(filepath.Base(arg), ".yaml"), ".yml")
				}
				spec, err := template.LoadResolved(specDir, name)
				if err != nil {
					return err
				}
				t, err := reg.Bake(ctx, h, spec, progress)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\tcold boot %d ms\tbuild %d ms\tsnapshot %d ms\n", t.Name, t.Key, t.ColdBootMS, t.BuildMS, t.SnapshotMS)
			}
			return nil
		},
	}
	hf.register(cmd)
	cmd.Flags().StringVar(&dir, "dir", "templates", "directory holding NAME.yaml specs")
	return cmd
}

func newTemplateLsCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List baked templates",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			ts, err := reg.List()
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(ts)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tMEMORY\tVCPUS\tTTL\tBUILT\tKEY")
			for _, t := range ts {
				fmt.Fprintf(w, "%s\t%d MiB\t%d\t%ds\t%s\t%s\n", t.Name, t.MemoryMiB, t.VCPUs, t.DefaultTTLSeconds, t.BuiltAt.Format("2006-01-02 15:04"), t.Key)
			}
			return w.Flush()
		},
	}
	hf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTemplateInspectCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	cmd := &cobra.Command{
		Use:   "inspect NAME",
		Short: "Print a baked template's manifest (JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			t, err := reg.Get(args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				template.Manifest
				Dir string `json:"dir"`
			}{t.Manifest, t.Dir})
		},
	}
	hf.register(cmd)
	return cmd
}

func newTemplateRmCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	cmd := &cobra.Command{
		Use:   "rm NAME...",
		Short: "Remove baked templates (running sandboxes keep their private copies)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := reg.Remove(name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	hf.register(cmd)
	return cmd
}
