package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/template"
)

func newTemplateCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "template", Short: "Build, list, inspect and remove templates"}
	cmd.AddCommand(newTemplateBuildCmd(g), newTemplateLsCmd(g), newTemplateInspectCmd(g), newTemplateRmCmd(g), newTemplatePublishCmd(g))
	return cmd
}

func newTemplateBuildCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var tp templatePathFlags
	cmd := &cobra.Command{
		Use:   "build NAME|FILE.yaml|DIR...",
		Short: "Bake templates from their specs (cached: an unchanged spec is not rebuilt)",
		Long: `Bake templates: build the root filesystem from the spec (mmdebstrap, or the
layers of a container image for a spec with image:), cold boot it, run the
build steps and warm-up, and snapshot it.

A NAME is looked up along the template search path, as DIR/NAME.yaml or
DIR/NAME/template.yaml in each directory of --template-path, then
$AIRLOCK_TEMPLATE_PATH (both colon-separated), then ./templates if there is
one, and last among the templates built into airlock (base, docs-base, ...),
which are found from any directory. An argument with a '/' or ending in
.yaml is a path instead: a spec file, or a directory holding template.yaml.
Templates named by "from:" are looked up along the same path, with a spec
given by path finding its parent in its own directory first.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			// Every spec is found and checked before the host is set up:
			// a misspelt name fails at once.
			path := tp.path()
			var specs []*template.Spec
			for _, arg := range args {
				spec, err := path.Load(arg)
				if err != nil {
					return err
				}
				specs = append(specs, spec)
			}
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
			for _, spec := range specs {
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
	tp.register(cmd)
	return cmd
}

// templatePathFlags are --template-path (and the older --dir, searched
// first).
type templatePathFlags struct {
	dirs []string
	dir  string
}

func (f *templatePathFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.dirs, "template-path", nil,
		"directories to look template specs up in, colon-separated, before $"+template.PathEnv+", ./templates and the built-in templates (repeatable)")
	cmd.Flags().StringVar(&f.dir, "dir", "", "directory holding NAME.yaml specs, searched first")
	_ = cmd.Flags().MarkDeprecated("dir", "use --template-path")
}

func (f *templatePathFlags) path() *template.SearchPath {
	return template.DefaultSearchPath(append([]string{f.dir}, f.dirs...))
}

func newTemplateLsCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var asJSON, specs bool
	var tp templatePathFlags
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List baked templates (--specs: the specs on the search path, and where each is)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if specs {
				return listSpecs(cmd, tp.path(), asJSON)
			}
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
			fmt.Fprintln(w, "NAME\tMEMORY\tVCPUS\tTTL\tBUILT\tKEY\tSOURCE")
			for _, t := range ts {
				fmt.Fprintf(w, "%s\t%d MiB\t%d\t%ds\t%s\t%s\t%s\n", t.Name, t.MemoryMiB, t.VCPUs, t.DefaultTTLSeconds,
					t.BuiltAt.Format("2006-01-02 15:04"), t.Key, orDash(t.Source))
			}
			return w.Flush()
		},
	}
	hf.register(cmd)
	tp.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&specs, "specs", false, "list the template specs on the search path (not baked templates), with where each comes from")
	return cmd
}

// listSpecs prints the specs on the search path: the first of each name
// is the one build uses; later ones are shadowed.
func listSpecs(cmd *cobra.Command, path *template.SearchPath, asJSON bool) error {
	avail, err := path.List()
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(avail)
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSOURCE")
	for _, a := range avail {
		src := a.Source
		if a.Shadowed {
			src += " (shadowed)"
		}
		fmt.Fprintf(w, "%s\t%s\n", a.Name, src)
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
