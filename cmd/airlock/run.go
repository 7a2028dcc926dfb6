package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/vm"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var (
		mem, vcpus int
		timeout    time.Duration
		shell      bool
		env        []string
		cwd        string
		tmplName   string
		puts, gets []string
	)
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Start a throwaway VM, run one command in it, destroy it",
		Long: `Start a throwaway VM, run one command in it with its output streamed, and
destroy the VM. airlock exits with the command's exit code.

Without --template the VM cold-boots a minimal busybox root. With
--template NAME it is restored from that baked template's snapshot.
--put copies host files in before the command, --get copies guest files
out after it (both streamed).`,
		Example: `  airlock run -- uname -r
  airlock run --template legal-doc-review --put contract.pdf:/job/in.pdf -- pdftotext -layout /job/in.pdf -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t0 := time.Now()
			host, err := hf.host(ctx)
			if err != nil {
				return err
			}
			defer host.Close()
			t1 := time.Now()
			var v *vm.VM
			var env0 []string
			if tmplName == "" {
				v, err = host.Boot(ctx, vm.BootOptions{MemoryMiB: mem, VCPUs: vcpus})
			} else {
				v, env0, err = restoreFromTemplate(ctx, hf, host, tmplName)
			}
			if err != nil {
				return err
			}
			// Destroy even when interrupted: use a fresh context.
			defer func() {
				dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := v.Destroy(dctx); err != nil {
					fmt.Fprintf(os.Stderr, "airlock: destroy %s: %v\n", v.ID, err)
				}
			}()
			t2 := time.Now()
			how := "cold boot"
			if tmplName != "" {
				how = "restore of " + tmplName
			}
			hf.progress()("vm %s ready by %s with %s in %s (host setup %s)", v.ID, how, host.Accel.Accel, t2.Sub(t1).Round(time.Millisecond), t1.Sub(t0).Round(time.Millisecond))
			for _, p := range puts {
				local, remote, ok := strings.Cut(p, ":")
				if !ok || local == "" || remote == "" {
					return errdefs.InvalidArgument("--put %q: want LOCAL:GUEST_PATH", p)
				}
				f, err := os.Open(local)
				if err != nil {
					return errdefs.InvalidArgument("--put: %v", err)
				}
				n, err := v.Agent.WriteFile(ctx, remote, f, 0o644, true)
				f.Close()
				if err != nil {
					return fmt.Errorf("--put %s: %w", remote, err)
				}
				hf.progress()("put %d bytes to %s", n, remote)
			}
			opts := guest.ExecOptions{Env: append(env0, env...), Cwd: cwd, Timeout: timeout}
			if shell {
				if len(args) != 1 {
					return errdefs.InvalidArgument("--shell takes exactly one command string")
				}
				opts.Shell = args[0]
			} else {
				opts.Argv = args
			}
			if !term.IsTerminal(int(os.Stdin.Fd())) {
				opts.Stdin = os.Stdin
			}
			res, err := v.Agent.Exec(ctx, opts, os.Stdout, os.Stderr)
			if err != nil {
				return err
			}
			hf.progress()("exit %d in %s", res.ExitCode, res.Duration)
			if res.TimedOut {
				fmt.Fprintf(os.Stderr, "airlock: command timed out after %s and was killed\n", timeout)
			}
			if res.StdoutTruncated || res.StderrTruncated {
				fmt.Fprintf(os.Stderr, "airlock: output truncated (stdout %d bytes, stderr %d bytes produced)\n", res.StdoutBytes, res.StderrBytes)
			}
			for _, gspec := range gets {
				remote, local, ok := strings.Cut(gspec, ":")
				if !ok || local == "" || remote == "" {
					return errdefs.InvalidArgument("--get %q: want GUEST_PATH:LOCAL", gspec)
				}
				if err := getFile(ctx, v, remote, local); err != nil {
					return err
				}
			}
			if res.ExitCode != 0 {
				return exitError{res.ExitCode}
			}
			return nil
		},
	}
	hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&tmplName, "template", "t", "", "restore from this baked template instead of cold-booting the minimal root")
	f.IntVar(&mem, "mem", 256, "guest memory in MiB (cold boot only; templates fix their own)")
	f.IntVar(&vcpus, "vcpus", 1, "guest vCPUs (cold boot only)")
	f.DurationVar(&timeout, "timeout", 0, "kill the command (and all it started) after this long; 0 = no limit")
	f.BoolVar(&shell, "shell", false, "run the single argument with /bin/sh -c")
	f.StringArrayVarP(&env, "env", "e", nil, "KEY=VALUE to add to the command's environment (repeatable)")
	f.StringVar(&cwd, "cwd", "", "working directory in the guest (absolute)")
	f.StringArrayVar(&puts, "put", nil, "LOCAL:GUEST_PATH file to copy in before the command (repeatable)")
	f.StringArrayVar(&gets, "get", nil, "GUEST_PATH:LOCAL file to copy out after the command (repeatable)")
	return cmd
}

func restoreFromTemplate(ctx context.Context, hf *hostFlags, host *vm.Host, name string) (*vm.VM, []string, error) {
	reg, err := hf.registry()
	if err != nil {
		return nil, nil, err
	}
	t, err := reg.Open(host, name)
	if err != nil {
		return nil, nil, err
	}
	opts := t.BootOptions()
	opts.ID = vm.NewID("run-")
	p, err := host.StartPending(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	v, err := p.RestorePrepared(ctx, t.StatePath(), true, opts.ID)
	if err != nil {
		return nil, nil, err
	}
	return v, t.EnvList(), nil
}

// getFile streams a guest file into local via a temporary file, so an
// interrupted copy never leaves a truncated file under the final name.
func getFile(ctx context.Context, v *vm.VM, remote, local string) error {
	tmp, err := os.CreateTemp(dirOf(local), ".airlock-get-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := v.Agent.ReadFile(ctx, remote, tmp, 0); err != nil {
		tmp.Close()
		return fmt.Errorf("--get %s: %w", remote, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), local)
}
