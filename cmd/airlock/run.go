package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/tarfs"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// runOptions are the flags of `airlock run`.
type runOptions struct {
	hf         *hostFlags
	mem, vcpus int
	timeout    time.Duration
	shell      bool
	env        []string
	cwd        string
	tmplName   string
	puts, gets []string
	via, url   string // through a daemon (run_daemon.go)
	// The command's streams through a daemon (the in-process path writes
	// this process's own).
	stdin          io.Reader
	stdout, stderr io.Writer
	// localFlags are the in-process-only flags given (--state-dir,
	// --run-dir, ...): with any, auto runs in-process, as they ask.
	localFlags []string
}

func newRunCmd(g *globalFlags) *cobra.Command {
	o := &runOptions{hf: &hostFlags{g: g}}
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Start a throwaway VM, run one command in it, destroy it",
		Long: `Start a throwaway VM, run one command in it with its output streamed, and
destroy the VM. airlock exits with the command's exit code.

Without --template the VM cold-boots a minimal busybox root. With
--template NAME it is restored from that baked template's snapshot.
--put copies host files in before the command, --get copies guest files
out after it (both streamed).

With --template and an API key in AIRLOCK_API_KEY, run goes through the
daemon at --url when one answers (as docker run talks to dockerd): the
sandbox is the daemon's (its warm pool, jail, network policy and audit
log), and run only waits for it. Otherwise it starts the VM in this
process. --via daemon insists on the daemon, --via local never asks it.`,
		Example: `  airlock run -- uname -r
  airlock run --template legal-doc-review --put contract.pdf:/job/in.pdf -- pdftotext -layout /job/in.pdf -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.stdin, o.stdout, o.stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			for _, name := range []string{"state-dir", "run-dir", "cache-dir", "accel", "jail", "mem", "vcpus"} {
				if cmd.Flags().Changed(name) {
					o.localFlags = append(o.localFlags, "--"+name)
				}
			}
			return o.run(cmd.Context(), args)
		},
	}
	o.hf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.tmplName, "template", "t", "", "restore from this baked template instead of cold-booting the minimal root")
	f.IntVar(&o.mem, "mem", 256, "guest memory in MiB (cold boot only; templates fix their own)")
	f.IntVar(&o.vcpus, "vcpus", 1, "guest vCPUs (cold boot only)")
	f.DurationVar(&o.timeout, "timeout", 0, "kill the command (and all it started) after this long; 0 = no limit")
	f.BoolVar(&o.shell, "shell", false, "run the single argument with /bin/sh -c")
	f.StringArrayVarP(&o.env, "env", "e", nil, "KEY=VALUE to add to the command's environment (repeatable)")
	f.StringVar(&o.cwd, "cwd", "", "working directory in the guest (absolute)")
	f.StringArrayVar(&o.puts, "put", nil, "LOCAL:GUEST_PATH file to copy in before the command (repeatable)")
	f.StringArrayVar(&o.gets, "get", nil, "GUEST_PATH:LOCAL file to copy out after the command (repeatable)")
	f.StringVar(&o.via, "via", viaAuto, "auto (the daemon when one answers and AIRLOCK_API_KEY is set, else in-process), daemon or local")
	f.StringVar(&o.url, "url", daemonURL(), "the daemon to go through (env AIRLOCK_URL or AIRLOCK_SOCKET)")
	return cmd
}

// run starts the VM, copies --put files in, runs the command, copies
// --get files out and destroys the VM (even when interrupted).
func (o *runOptions) run(ctx context.Context, args []string) error {
	c, err := o.daemonClient(ctx)
	if err != nil {
		return err
	}
	if c != nil {
		return o.runViaDaemon(ctx, c, args)
	}
	t0 := time.Now()
	host, err := o.hf.host(ctx)
	if err != nil {
		return err
	}
	defer host.Close()
	t1 := time.Now()
	var v *vm.VM
	var env0 []string
	if o.tmplName == "" {
		v, err = host.Boot(ctx, vm.BootOptions{MemoryMiB: o.mem, VCPUs: o.vcpus})
	} else {
		var t *template.Template
		v, t, err = restoreFromTemplate(ctx, o.hf, host, o.tmplName)
		if err == nil {
			env0 = t.EnvList()
			if o.cwd == "" {
				o.cwd = t.Workdir // the template's default, as in a sandbox
			}
		}
	}
	if err != nil {
		return err
	}
	// Destroy even when interrupted: use a fresh context.
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		began := time.Now()
		if err := v.Destroy(dctx); err != nil {
			fmt.Fprintf(os.Stderr, "airlock: destroy %s: %v\n", v.ID, err)
			return
		}
		o.hf.progress()("vm %s destroyed in %s", v.ID, time.Since(began).Round(time.Millisecond))
	}()
	t2 := time.Now()
	how := "cold boot"
	if o.tmplName != "" {
		how = "restore of " + o.tmplName
	}
	o.hf.progress()("vm %s ready by %s with %s in %s (host setup %s)", v.ID, how, host.Accel.Accel, t2.Sub(t1).Round(time.Millisecond), t1.Sub(t0).Round(time.Millisecond))
	if err := o.putFiles(ctx, v); err != nil {
		return err
	}
	res, err := o.exec(ctx, v, env0, args)
	if err != nil {
		return err
	}
	for _, gspec := range o.gets {
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
}

// putFiles copies each --put LOCAL:GUEST_PATH into the guest.
func (o *runOptions) putFiles(ctx context.Context, v *vm.VM) error {
	for _, p := range o.puts {
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
		o.hf.progress()("put %d bytes to %s", n, remote)
	}
	return nil
}

// exec runs the command with its output streamed (and stdin, unless it
// is a terminal), and says on stderr when it timed out or was truncated.
func (o *runOptions) exec(ctx context.Context, v *vm.VM, env0, args []string) (guest.ExecResult, error) {
	opts := guest.ExecOptions{Env: append(env0, o.env...), Cwd: o.cwd, Timeout: o.timeout}
	if o.shell {
		if len(args) != 1 {
			return guest.ExecResult{}, errdefs.InvalidArgument("--shell takes exactly one command string")
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
		return res, err
	}
	o.hf.progress()("exit %d in %s", res.ExitCode, res.Duration)
	if res.TimedOut {
		fmt.Fprintf(os.Stderr, "airlock: command timed out after %s and was killed\n", o.timeout)
	}
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(os.Stderr, "airlock: output truncated (stdout %d bytes, stderr %d bytes produced)\n", res.StdoutBytes, res.StderrBytes)
	}
	return res, nil
}

func restoreFromTemplate(ctx context.Context, hf *hostFlags, host *vm.Host, name string) (*vm.VM, *template.Template, error) {
	began := time.Now()
	reg, err := hf.registry()
	if err != nil {
		return nil, nil, err
	}
	t, err := reg.Open(host, name)
	if err != nil {
		return nil, nil, err
	}
	opened := time.Now()
	opts := t.BootOptions()
	opts.ID = vm.NewID("run-")
	p, err := host.StartPending(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	started := time.Now()
	v, err := p.Restore(ctx, t.StatePath(), true)
	if err != nil {
		return nil, nil, err
	}
	loaded := time.Now()
	if err := v.Prepare(ctx, opts.ID); err != nil {
		v.Destroy(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	ms := func(a, b time.Time) time.Duration { return b.Sub(a).Round(time.Millisecond) }
	hf.progress()("template %s opened in %s, VMM started in %s, state loaded in %s, agent session and clock/entropy/identity push in %s",
		name, ms(began, opened), ms(opened, started), ms(started, loaded), ms(loaded, time.Now()))
	return v, t, nil
}

// getFile streams a guest file into local through replaceFile, made as
// any new file is (0666 less the umask).
func getFile(ctx context.Context, v *vm.VM, remote, local string) error {
	return replaceFile(local, func(w io.Writer) error {
		if _, err := v.Agent.ReadFile(ctx, remote, w, 0); err != nil {
			return fmt.Errorf("--get %s: %w", remote, err)
		}
		return nil
	}, 0o666&^tarfs.ProcessUmask(), func(err error) error { return err })
}
