package main

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
