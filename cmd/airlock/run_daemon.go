package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/tarfs"
)

// How `airlock run` reaches a VM (--via): through a running daemon, as
// `docker run` talks to dockerd, or by starting one in this process.
const (
	viaAuto   = "auto"   // the daemon when one answers, else in-process
	viaDaemon = "daemon" // the daemon, or fail
	viaLocal  = "local"  // in-process, never the daemon
)

// daemonProbe bounds how long `run --via auto` waits for a daemon to
// answer before it runs in-process: far less than a restore.
const daemonProbe = 300 * time.Millisecond

// maxDaemonStdin bounds the standard input `run` forwards through the
// daemon: the API takes an exec's stdin in its JSON request.
const maxDaemonStdin = 8 << 20

// daemonClient returns a client of the daemon `run` should go through, or
// nil to run in-process. A daemon restores templates only, and takes
// only callers with an API key (AIRLOCK_API_KEY): without either, auto
// runs in-process.
func (o *runOptions) daemonClient(ctx context.Context) (*client.Client, error) {
	switch o.via {
	case viaLocal:
		return nil, nil
	case viaAuto, viaDaemon:
	default:
		return nil, usageErr("--via %q: want auto, daemon or local", o.via)
	}
	why := ""
	key := os.Getenv("AIRLOCK_API_KEY")
	switch {
	case o.tmplName == "":
		why = "a daemon restores templates only: give --template"
	case key == "":
		why = "no API key in AIRLOCK_API_KEY"
	case len(o.localFlags) > 0 && o.via == viaAuto:
		why = strings.Join(o.localFlags, ", ") + " given: those set up a VM in this process"
	}
	var c *client.Client
	if why == "" {
		var err error
		if c, err = client.New(o.url, key, client.WithUserAgent("airlock-cli/"+version), client.WithRetries(0)); err != nil {
			why = err.Error()
		} else {
			pctx, cancel := context.WithTimeout(ctx, daemonProbe)
			err = c.Health(pctx)
			cancel()
			if err != nil {
				why = fmt.Sprintf("no daemon answers at %s", o.url)
				c = nil
			}
		}
	}
	if why == "" {
		return c, nil
	}
	if o.via == viaDaemon {
		return nil, errdefs.Unavailable("run --via daemon: %s", why)
	}
	o.hf.progress()("running in-process: %s", why)
	return nil, nil
}

// runViaDaemon is run through the daemon: a sandbox from the template
// (its TTL the command's timeout plus a margin), --put files in, the
// command with its output streamed, --get files out, and the kill.
func (o *runOptions) runViaDaemon(ctx context.Context, c *client.Client, args []string) error {
	began := time.Now()
	opts := client.CreateOptions{Template: o.tmplName}
	if o.timeout > 0 {
		opts.TTLSeconds = int((o.timeout + time.Minute) / time.Second)
	}
	sb, err := c.CreateSandbox(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		kctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := sb.Kill(kctx); err != nil {
			fmt.Fprintf(o.stderr, "airlock: kill %s: %v\n", sb.ID, err)
		}
	}()
	o.hf.progress()("sandbox %s of %s created by the daemon at %s in %s", sb.ID, o.tmplName, o.url, time.Since(began).Round(time.Millisecond))
	if err := o.putViaDaemon(ctx, sb); err != nil {
		return err
	}
	req, err := o.daemonExecRequest(args)
	if err != nil {
		return err
	}
	res, err := sb.ExecStream(ctx, req, o.stdout, o.stderr)
	if err != nil {
		return err
	}
	o.hf.progress()("exit %d in %s", res.ExitCode, res.Duration())
	if res.TimedOut {
		fmt.Fprintf(o.stderr, "airlock: command timed out after %s and was killed\n", o.timeout)
	}
	if err := o.getViaDaemon(ctx, sb); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

// daemonExecRequest is the command as the API takes it, with this
// process's stdin when it is not a terminal.
func (o *runOptions) daemonExecRequest(args []string) (client.ExecRequest, error) {
	req := client.ExecRequest{Cwd: o.cwd, Timeout: o.timeout, Env: map[string]string{}}
	if o.shell {
		if len(args) != 1 {
			return req, errdefs.InvalidArgument("--shell takes exactly one command string")
		}
		req.Cmd = args[0]
	} else {
		req.Argv = args
	}
	for _, kv := range o.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return req, errdefs.InvalidArgument("--env %q: want KEY=VALUE", kv)
		}
		req.Env[k] = v
	}
	if f, ok := o.stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		b, err := io.ReadAll(io.LimitReader(o.stdin, maxDaemonStdin+1))
		if err != nil {
			return req, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > maxDaemonStdin {
			return req, errdefs.InvalidArgument("stdin is over %d MiB: through a daemon it goes in one request (use --put, or --via local)", maxDaemonStdin>>20)
		}
		req.Stdin = b
	}
	return req, nil
}

func (o *runOptions) putViaDaemon(ctx context.Context, sb *client.Sandbox) error {
	for _, p := range o.puts {
		local, remote, ok := strings.Cut(p, ":")
		if !ok || local == "" || remote == "" {
			return errdefs.InvalidArgument("--put %q: want LOCAL:GUEST_PATH", p)
		}
		f, err := os.Open(local)
		if err != nil {
			return errdefs.InvalidArgument("--put: %v", err)
		}
		n, err := sb.Files().Write(ctx, remote, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("--put %s: %w", remote, err)
		}
		o.hf.progress()("put %d bytes to %s", n, remote)
	}
	return nil
}

func (o *runOptions) getViaDaemon(ctx context.Context, sb *client.Sandbox) error {
	for _, g := range o.gets {
		remote, local, ok := strings.Cut(g, ":")
		if !ok || local == "" || remote == "" {
			return errdefs.InvalidArgument("--get %q: want GUEST_PATH:LOCAL", g)
		}
		err := replaceFile(local, func(w io.Writer) error {
			r, err := sb.Files().Read(ctx, remote)
			if err != nil {
				return fmt.Errorf("--get %s: %w", remote, err)
			}
			defer r.Close()
			_, err = io.Copy(w, r)
			return err
		}, 0o666&^tarfs.ProcessUmask(), func(err error) error { return err })
		if err != nil {
			return err
		}
	}
	return nil
}
