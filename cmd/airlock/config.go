package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// hostFlags are for commands that run VMs on this host directly (run,
// template, bench, serve). Flags beat environment beat defaults.
type hostFlags struct {
	g        *globalFlags
	stateDir string
	verbose  bool
}

func (f *hostFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stateDir, "state-dir", envOr("AIRLOCK_STATE_DIR", defaultStateDir), "state directory: store and baked templates (env AIRLOCK_STATE_DIR)")
	cmd.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "report progress and timings on stderr")
}

func (f *hostFlags) progress() image.Progress {
	return func(format string, a ...any) {
		if f.verbose {
			fmt.Fprintf(os.Stderr, "airlock: "+format+"\n", a...)
		}
	}
}

func (f *hostFlags) host(ctx context.Context) (*vm.Host, error) {
	return vm.NewHost(ctx, f.hostConfig())
}

// hostConfig is the VM host the global flags describe.
func (f *hostFlags) hostConfig() vm.Config {
	return vm.Config{CacheDir: f.g.cacheDir, RunDir: f.g.runDir, Accel: f.g.accel, Jail: f.g.jail, Progress: f.progress()}
}

func (f *hostFlags) registry() (*template.Registry, error) {
	return template.NewRegistry(filepath.Join(f.stateDir, "templates"))
}
