package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func sortStrings(s []string) { slices.Sort(s) }

// newSandboxCmd is `airlock sandbox ...`: the API client side of the CLI.
func newSandboxCmd(_ *globalFlags) *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:     "sandbox",
		Aliases: []string{"sbx"},
		Short:   "Create, use and destroy sandboxes through the daemon's API",
	}
	f.register(cmd)
	cmd.AddCommand(sbxCreateCmd(f), sbxListCmd(f), sbxGetCmd(f), sbxExecCmd(f), sbxCopyCmd(f),
		sbxKillCmd(f), sbxForkCmd(f), sbxEgressCmd(f), sbxProbeCmd(f), sbxTTLCmd(f),
		sbxPsCmd(f), sbxLogsCmd(f), sbxWaitCmd(f), sbxKillProcessCmd(f),
		sbxPauseCmd(f), sbxResumeCmd(f), sbxSendStdinCmd(f))
	return cmd
}

func sbxCreateCmd(f *clientFlags) *cobra.Command {
	var (
		template string
		ttl      string
		meta     []string
		allow    []string
		def      string
		tlsMode  string
		probe    bool
	)
	cmd := &cobra.Command{
		Use:   "create --template T [--ttl 300] [--meta k=v]... [--allow RULE]... [--egress-tls inspect] [--probe]",
		Short: "Create a sandbox from a template and print its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			secs, err := parseTTL(ttl)
			if err != nil {
				return err
			}
			opts := client.CreateOptions{Template: template, TTLSeconds: secs, Metadata: md, Probe: probe}
			if len(allow) > 0 || def != "" || tlsMode != "" {
				p, err := parsePolicy(def, allow)
				if err != nil {
					return err
				}
				p.TLS = tlsMode
				opts.Egress = &p
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			sbx, err := c.CreateSandbox(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), sbx.SandboxInfo)
			}
			fmt.Fprintln(cmd.OutOrStdout(), sbx.ID)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&template, "template", "t", "", "template name (required)")
	fl.StringVar(&ttl, "ttl", "", "lifetime: seconds (300) or a duration (5m); default: the template's")
	fl.StringArrayVar(&meta, "meta", nil, "KEY=VALUE label, audited and filterable (repeatable)")
	fl.StringArrayVar(&allow, "allow", nil, "egress rule NAME=CIDR[:PORTS][/PROTO] or NAME=DOMAIN (repeatable); default deny all")
	fl.StringVar(&def, "egress-default", "", "egress default: deny (default) or allow")
	fl.StringVar(&tlsMode, "egress-tls", "", tlsFlagHelp)
	fl.BoolVar(&probe, "probe", false, "run the egress self-check before returning; a sandbox that fails it is killed")
	_ = cmd.MarkFlagRequired("template")
	return cmd
}

func parseTTL(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errdefs.InvalidArgument("--ttl %q: want seconds or a duration like 5m", s)
	}
	return int(d / time.Second), nil
}

// parsePolicy builds an egress policy from --allow flags:
//
//	NAME=10.0.0.0/8            any protocol to a prefix
//	NAME=10.250.0.2:8080,8443  tcp to those ports (/udp after the ports for udp)
//	NAME=10.0.0.53:53/udp
//	NAME=10.0.0.0/8:icmp       one protocol, all ports
//	NAME=api.example.com       through the egress proxy (also *.example.com)
func parsePolicy(def string, allow []string) (client.EgressPolicy, error) {
	if def == "" {
		def = "deny"
	}
	p := client.EgressPolicy{Default: def}
	for _, a := range allow {
		r, err := parseRule(a)
		if err != nil {
			return p, err
		}
		p.Allow = append(p.Allow, r)
	}
	return p, nil
}

var hasLetter = regexp.MustCompile(`[A-Za-z*]`)

func parseRule(s string) (client.EgressRule, error) {
	bad := func(why string) (client.EgressRule, error) {
		return client.EgressRule{}, errdefs.InvalidArgument("--allow %q: %s; want NAME=CIDR[:PORTS][/PROTO] or NAME=DOMAIN", s, why)
	}
	name, target, ok := strings.Cut(s, "=")
	if !ok || name == "" || target == "" {
		return bad("missing NAME=")
	}
	r := client.EgressRule{Name: name}
	host, rest, hasRest := strings.Cut(target, ":")
	if hasLetter.MatchString(host) {
		if hasRest {
			return bad("domain rules take no ports")
		}
		r.Domain = host
		return r, nil
	}
	if _, err := netip.ParsePrefix(host); err != nil {
		if _, err := netip.ParseAddr(host); err != nil {
			return bad("not an IPv4 address or prefix")
		}
	}
	r.CIDR = host
	if !hasRest {
		return r, nil
	}
	ports, proto, _ := strings.Cut(rest, "/")
	if slices.Contains([]string{"tcp", "udp", "icmp", "any"}, ports) && proto == "" {
		r.Protocol = ports
		return r, nil
	}
	r.Protocol = "tcp"
	if proto != "" {
		r.Protocol = proto
	}
	for _, ps := range strings.Split(ports, ",") {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			return bad(fmt.Sprintf("port %q", ps))
		}
		r.Ports = append(r.Ports, uint16(n))
	}
	return r, nil
}

func sbxListCmd(f *clientFlags) *cobra.Command {
	var (
		meta []string
		all  bool
	)
	cmd := &cobra.Command{
		Use:     "ls [--meta k=v]... [--all]",
		Aliases: []string{"list"},
		Short:   "List your running sandboxes (--all: ended ones too)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			md, err := parseMeta(meta)
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			var opts []client.ListOption
			if all {
				opts = append(opts, client.IncludeEnded())
			}
			list, err := c.ListSandboxes(cmd.Context(), md, opts...)
			if err != nil {
				return err
			}
			if f.json {
				infos := make([]client.SandboxInfo, len(list))
				for i, s := range list {
					infos[i] = s.SandboxInfo
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"sandboxes": infos})
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tTEMPLATE\tSTATE\tCREATED\tDEADLINE\tMETADATA")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Template, s.State,
					s.CreatedAt.Local().Format(time.DateTime), s.Deadline.Local().Format(time.DateTime), formatMeta(s.Metadata))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "only sandboxes with this KEY=VALUE label (repeatable; all must match)")
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include killed, expired and failed sandboxes")
	return cmd
}

func sbxGetCmd(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show one sandbox",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			s, err := c.GetSandbox(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), s.SandboxInfo)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "id\t%s\ntemplate\t%s\nstate\t%s\ncreated\t%s\ndeadline\t%s\n", s.ID, s.Template, s.State,
				s.CreatedAt.Local().Format(time.RFC3339), s.Deadline.Local().Format(time.RFC3339))
			if s.ParentID != "" {
				fmt.Fprintf(w, "parent\t%s\n", s.ParentID)
			}
			if s.EndedAt != nil {
				fmt.Fprintf(w, "ended\t%s\n", s.EndedAt.Local().Format(time.RFC3339))
			}
			fmt.Fprintf(w, "metadata\t%s\negress\t%s\n", formatMeta(s.Metadata), formatPolicy(s.Egress))
			if s.NetAddr != "" {
				fmt.Fprintf(w, "net address\t%s\n", s.NetAddr)
			}
			jail := "jailed (own uid, namespaces, root and cgroup; no capabilities; seccomp)"
			if !s.Jailed {
				jail = "NOT jailed: the daemon runs with --jail=off"
			}
			fmt.Fprintf(w, "vmm\t%s\n", jail)
			if u := s.Usage; u != nil {
				fmt.Fprintf(w, "cpu\t%.2fs\nmemory\tPSS %s, RSS %s, private %s\n", u.CPUSeconds,
					mib(u.MemoryPSSBytes), mib(u.MemoryRSSBytes), mib(u.MemoryPrivateBytes))
			}
			return w.Flush()
		},
	}
}

// mib formats bytes as MiB with one decimal.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// tlsFlagHelp documents --egress-tls and --tls.
const tlsFlagHelp = "TLS to domain rules: passthrough (default: server name checked, stream not opened; domain fronting possible) or inspect (terminated with a per-sandbox CA the guest trusts; the request's Host must be the server name)"

func formatPolicy(p client.EgressPolicy) string {
	parts := []string{"default " + p.Default}
	if p.TLS != "" {
		parts = append(parts, "tls "+p.TLS)
	}
	for _, r := range p.Allow {
		t := r.CIDR + r.Domain
		if r.Protocol != "" {
			t += " " + r.Protocol
		}
		if len(r.Ports) > 0 {
			t += fmt.Sprintf(" %v", r.Ports)
		}
		parts = append(parts, r.Name+"="+t)
	}
	return strings.Join(parts, "; ")
}

// maxCLIStdin bounds what -i sends: stdin travels inside the JSON request,
// which the server limits to 1 MiB. Bigger inputs: `sandbox cp` first.
const maxCLIStdin = 768 << 10

// sbxExecOptions are the flags of `airlock sandbox exec`.
type sbxExecOptions struct {
	timeout time.Duration
	shell   bool
	env     []string
	cwd     string
	stdin   bool
	// background starts the command as a background process and prints
	// its id (see process_cmd.go).
	background bool
	user       string // run as this guest user
	tty        bool   // on a pty (the terminal's size, or 24x80)
	stdinOpen  bool   // -d: keep the process's stdin open for send-stdin
}

func sbxExecCmd(f *clientFlags) *cobra.Command {
	o := &sbxExecOptions{}
	cmd := &cobra.Command{
		Use:   "exec ID [flags] -- CMD [ARGS...]",
		Short: "Run a command in a sandbox, streaming its output; exits with its exit code",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			req, err := o.request(args[1:])
			if err != nil {
				return err
			}
			if o.background {
				return startBackground(cmd, f, c.Sandbox(args[0]), req, o.stdinOpen)
			}
			var res *client.ExecResult
			if f.json {
				res, err = execPrintJSON(cmd, c.Sandbox(args[0]), req)
			} else {
				res, err = o.execStream(cmd, c.Sandbox(args[0]), req)
			}
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return exitError{res.ExitCode}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.timeout, "timeout", 0, "kill the command (and all it started) after this long; 0 = the sandbox's TTL")
	fl.BoolVar(&o.shell, "shell", false, "run the single argument with /bin/sh -c")
	fl.StringArrayVarP(&o.env, "env", "e", nil, "KEY=VALUE to add to the environment (repeatable)")
	fl.StringVar(&o.cwd, "cwd", "", "working directory in the guest (absolute)")
	fl.BoolVarP(&o.stdin, "interactive", "i", false, "send this process's stdin (up to 768 KiB) to the command")
	fl.BoolVarP(&o.background, "background", "d", false, "start the command as a background process and print its id (see sandbox ps, logs, wait, kill-process)")
	fl.StringVarP(&o.user, "user", "u", "", "run as this guest user (it cannot become root again); default root")
	fl.BoolVarP(&o.tty, "tty", "t", false, "run on a pseudo-terminal (this terminal's size, else 24x80): output merged on stdout")
	fl.BoolVar(&o.stdinOpen, "stdin-open", false, "with -d: keep the process's stdin open for sandbox send-stdin")
	return cmd
}

// request builds the exec request for command (the arguments after the
// sandbox id) from the flags, reading stdin with -i.
func (o *sbxExecOptions) request(command []string) (client.ExecRequest, error) {
	req := client.ExecRequest{Cwd: o.cwd, Timeout: o.timeout, User: o.user}
	if o.tty {
		rows, cols := uint32(24), uint32(80)
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 && h > 0 {
			rows, cols = uint32(min(h, 1000)), uint32(min(w, 1000))
		}
		req.Pty = &client.WindowSize{Rows: rows, Cols: cols}
	}
	if o.shell {
		if len(command) != 1 {
			return req, errdefs.InvalidArgument("--shell takes exactly one command string")
		}
		req.Cmd = command[0]
	} else {
		req.Argv = command
	}
	if len(o.env) > 0 {
		req.Env = map[string]string{}
		for _, e := range o.env {
			k, v, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				return req, errdefs.InvalidArgument("--env %q: want KEY=VALUE", e)
			}
			req.Env[k] = v
		}
	}
	if o.stdin {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxCLIStdin+1))
		if err != nil {
			return req, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > maxCLIStdin {
			return req, errdefs.ResourceExhausted("stdin is over %d KiB; copy it in with `airlock sandbox cp` instead", maxCLIStdin>>10)
		}
		req.Stdin = b
	}
	return req, nil
}

// execPrintJSON prints one JSON document on stdout holding the command's
// output and exit; nothing streamed, nothing on stderr.
func execPrintJSON(cmd *cobra.Command, sb *client.Sandbox, req client.ExecRequest) (*client.ExecResult, error) {
	res, err := sb.ExecRequest(cmd.Context(), req)
	if err != nil {
		return nil, err
	}
	if err := printJSON(cmd.OutOrStdout(), execJSON(res)); err != nil {
		return nil, err
	}
	return res, nil
}

// execStream streams the command's output and says on stderr when it
// timed out or was truncated.
func (o *sbxExecOptions) execStream(cmd *cobra.Command, sb *client.Sandbox, req client.ExecRequest) (*client.ExecResult, error) {
	res, err := sb.ExecStream(cmd.Context(), req, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if res.TimedOut {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: command timed out after %s and was killed\n", o.timeout)
	}
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: output truncated (stdout %d bytes, stderr %d bytes produced)\n", res.StdoutBytes, res.StderrBytes)
	}
	return res, nil
}

// execJSON is `sandbox exec --json`'s document: the result with the
// output as the API gives it (text, or base64 when it is not UTF-8).
func execJSON(res *client.ExecResult) any {
	out := struct {
		*client.ExecResult
		Stdout       *string `json:"stdout,omitempty"`
		Stderr       *string `json:"stderr,omitempty"`
		StdoutBase64 string  `json:"stdout_base64,omitempty"`
		StderrBase64 string  `json:"stderr_base64,omitempty"`
	}{ExecResult: res}
	if utf8.ValidString(res.Stdout) {
		out.Stdout = &res.Stdout
	} else {
		out.StdoutBase64 = base64.StdEncoding.EncodeToString([]byte(res.Stdout))
	}
	if utf8.ValidString(res.Stderr) {
		out.Stderr = &res.Stderr
	} else {
		out.StderrBase64 = base64.StdEncoding.EncodeToString([]byte(res.Stderr))
	}
	return out
}

func sbxKillCmd(f *clientFlags) *cobra.Command {
	var (
		meta   []string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "kill ID... | kill --meta k=v... [--dry-run]",
		Short: "Destroy sandboxes (by id, or every running one with all the given labels): their VMs, memory and files stop existing",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 && len(meta) == 0:
				return usageErr("name sandboxes to kill: IDs, or --meta KEY=VALUE to kill every running sandbox with those labels")
			case len(args) > 0 && len(meta) > 0:
				return usageErr("give sandbox IDs or --meta, not both")
			case dryRun && len(meta) == 0:
				return usageErr("--dry-run goes with --meta")
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			ids := args
			if len(meta) > 0 {
				if ids, err = sandboxesLabelled(cmd.Context(), c, meta); err != nil {
					return err
				}
			}
			return killSandboxes(cmd, f.json, c, ids, len(meta) > 0, dryRun)
		},
	}
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "kill every running sandbox with this KEY=VALUE label (repeatable; all must match)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --meta: list what would be killed, kill nothing")
	return cmd
}

// sandboxesLabelled returns the ids of the caller's running sandboxes
// carrying every KEY=VALUE pair of meta.
func sandboxesLabelled(ctx context.Context, c *client.Client, meta []string) ([]string, error) {
	md, err := parseMeta(meta)
	if err != nil {
		return nil, err
	}
	list, err := c.ListSandboxes(ctx, md)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return ids, nil
}

// killResult is what `sandbox kill --json` prints.
type killResult struct {
	Killed []string `json:"killed"`
	// AlreadyEnded: selected by label, these ended (TTL, another kill)
	// between the list and their kill.
	AlreadyEnded []string     `json:"already_ended,omitempty"`
	Failed       []killFailed `json:"failed,omitempty"`
	DryRun       bool         `json:"dry_run,omitempty"`
}

type killFailed struct {
	ID    string    `json:"id"`
	Error jsonError `json:"error"`
}

// killSandboxes kills ids one after another (a kill takes milliseconds),
// reporting each failure; any failure makes the exit code 125. Selected
// by label, ids may name sandboxes that ended since the list.
func killSandboxes(cmd *cobra.Command, asJSON bool, c *client.Client, ids []string, byLabel, dryRun bool) error {
	res := killResult{Killed: []string{}, DryRun: dryRun}
	for _, id := range ids {
		if dryRun {
			res.Killed = append(res.Killed, id)
			continue
		}
		err := c.Sandbox(id).Kill(cmd.Context())
		if byLabel && errors.Is(err, client.ErrFailedPrecondition) {
			res.AlreadyEnded = append(res.AlreadyEnded, id)
			continue
		}
		if err != nil {
			res.Failed = append(res.Failed, killFailed{ID: id, Error: jsonError{Code: errdefs.Code(err), Message: errorMessage(err)}})
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "airlock: kill %s: %s [%s]\n", id, errorMessage(err), errdefs.Code(err))
			}
			continue
		}
		res.Killed = append(res.Killed, id)
	}
	if asJSON {
		if err := printJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else if byLabel {
		// Say what was (or would be) killed: the caller did not name it.
		verb := "killed"
		if dryRun {
			verb = "would kill"
		}
		for _, id := range res.Killed {
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", verb, id)
		}
	}
	if len(res.Failed) > 0 {
		return exitError{exitAirlock}
	}
	return nil
}

func sbxTTLCmd(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "ttl ID DURATION",
		Short: "End a running sandbox DURATION from now (e.g. 30m; longer or shorter than before, within the daemon's maximum lifetime)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ttl, err := time.ParseDuration(args[1])
			if err != nil || ttl < time.Second {
				return usageErr("ttl %q: want a duration of at least 1s, e.g. 90s or 30m", args[1])
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			s := c.Sandbox(args[0])
			if err := s.SetTTL(cmd.Context(), ttl); err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), s.SandboxInfo)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\tdeadline %s\n", s.ID, s.Deadline.Local().Format(time.RFC3339))
			return nil
		},
	}
}

func sbxForkCmd(f *clientFlags) *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "fork ID [--count N]",
		Short: "Fork a running sandbox (copy-on-write) and print the children's ids",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			kids, err := c.Sandbox(args[0]).Fork(cmd.Context(), count)
			if err != nil {
				return err
			}
			if f.json {
				infos := make([]client.SandboxInfo, len(kids))
				for i, k := range kids {
					infos[i] = k.SandboxInfo
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"sandboxes": infos})
			}
			for _, k := range kids {
				fmt.Fprintln(cmd.OutOrStdout(), k.ID)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&count, "count", "n", 1, "number of children (1-16)")
	return cmd
}

func sbxEgressCmd(f *clientFlags) *cobra.Command {
	var (
		denyAll bool
		allow   []string
		def     string
		tlsMode string
	)
	cmd := &cobra.Command{
		Use:   "egress ID (--deny-all | --allow NAME=CIDR[:PORTS][/PROTO]... [--tls inspect])",
		Short: "Replace a sandbox's egress policy",
		Long: `Replaces a sandbox's egress policy. Before the command returns, connections
the new policy no longer allows are closed: in the sandbox's namespace, and
on both sides of the egress proxy (the guest's and the upstream's).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if denyAll == (len(allow) > 0 || def != "") {
				return errdefs.InvalidArgument("give either --deny-all or --allow/--default")
			}
			p := client.DenyAll()
			if !denyAll {
				var err error
				if p, err = parsePolicy(def, allow); err != nil {
					return err
				}
			}
			p.TLS = tlsMode
			c, err := f.client()
			if err != nil {
				return err
			}
			sbx := c.Sandbox(args[0])
			if err := sbx.SetEgress(cmd.Context(), p); err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), sbx.SandboxInfo)
			}
			fmt.Fprintln(cmd.OutOrStdout(), formatPolicy(sbx.Egress))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&denyAll, "deny-all", false, "allow nothing out")
	fl.StringArrayVar(&allow, "allow", nil, "rule NAME=CIDR[:PORTS][/PROTO] or NAME=DOMAIN (repeatable)")
	fl.StringVar(&def, "default", "", "default for unmatched traffic: deny (default) or allow")
	fl.StringVar(&tlsMode, "tls", "", tlsFlagHelp)
	return cmd
}

func sbxProbeCmd(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "probe ID",
		Short: "Run the egress self-check inside a sandbox (fails if anything gets out)",
		Long: `Runs probes from inside the guest: TCP to the gateway, to the host, to a public
address and to cloud metadata, and DNS for a name no policy can allow. Exits
non-zero naming the probes that got through; prints one line per probe otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			rs, err := c.Sandbox(args[0]).Probe(cmd.Context())
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), rs)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, r := range rs {
				verdict := "blocked"
				if r.Reachable {
					verdict = "REACHABLE"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", r.Name, r.Target, verdict)
			}
			return w.Flush()
		},
	}
}

func sbxPauseCmd(f *clientFlags) *cobra.Command {
	return sbxLifecycleCmd(f, "pause", "Save a running sandbox to disk and end its VM (its TTL keeps counting); resume brings it back",
		(*client.Sandbox).Pause)
}

func sbxResumeCmd(f *clientFlags) *cobra.Command {
	return sbxLifecycleCmd(f, "resume", "Restore a paused sandbox under the same id", (*client.Sandbox).Resume)
}

// sbxLifecycleCmd is `sandbox NAME ID`: op on the sandbox, then its id
// and state (or its JSON).
func sbxLifecycleCmd(f *clientFlags, name, short string, op func(*client.Sandbox, context.Context) error) *cobra.Command {
	return &cobra.Command{
		Use:   name + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			s := c.Sandbox(args[0])
			if err := op(s, cmd.Context()); err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), s.SandboxInfo)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", s.ID, s.State)
			return nil
		},
	}
}
