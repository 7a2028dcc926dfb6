package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/daemon"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netpool"
)

// netFlags configure sandbox networking for `airlock serve --net`
// (internal/daemon sets it up).
type netFlags struct {
	enabled bool
	o       daemon.NetOptions
}

func (n *netFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&n.enabled, "net", false, "give every sandbox its own network namespace with a default-deny egress policy (needs root)")
	f.StringVar(&n.o.Instance, "net-instance", os.Getenv("AIRLOCK_NET_INSTANCE"), "1-5 of [a-z0-9] carried by every namespace, link and nftables table this daemon makes, so daemons on one host never touch each other's (default: derived from --state-dir; env AIRLOCK_NET_INSTANCE)")
	f.StringVar(&n.o.BaseCIDR, "net-base-cidr", netpool.DefaultBaseCIDR, "IPv4 range carved into one /30 per sandbox; must be unused on this host")
	f.StringVar(&n.o.ProxyAddr, "proxy-addr", "10.199.255.1", "address of the egress proxy (domain rules, DNS, credential routes), put on a dummy interface airlock-p<instance> (or lo); \"\" disables the proxy")
	f.IntVar(&n.o.Prewarm, "net-prewarm", 4, "network slots kept built ahead of demand")
	f.StringSliceVar(&n.o.Uplinks, "uplink", nil, "host interfaces sandbox traffic allowed by CIDR rules is masqueraded out of (repeatable)")
	f.StringVar(&n.o.Credentials, "credentials", "", "JSON file of credential routes per tenant: {\"tenant\": [{\"name\",\"host\",\"upstream\",\"header\",\"value\"}]}; secrets stay in the proxy")
	f.StringArrayVar(&n.o.EgressCAs, "egress-ca", nil, "PEM file of CA certificates the egress proxy trusts for upstreams, besides the system roots (credential routes and TLS inspection; repeatable)")
	f.StringVar(&n.o.EgressHosts, "egress-hosts", "", "hosts(5)-style file of names the egress proxy resolves statically, before DNS (e.g. an on-premises DMS without DNS); the operator's choice, so they may resolve to private addresses")
	f.StringArrayVar(&n.o.EgressOpen, "egress-open", nil, "a private (special-purpose) IPv4 or IPv6 prefix sandboxes' rules may reach, e.g. the DMS's 10.20.0.0/16 (repeatable); without it no CIDR or domain rule reaches private networks, CGNAT, documentation or benchmarking space")
}

// options is the networking to set up: nil without --net, where the
// options that configure it are a mistake.
func (n *netFlags) options() (*daemon.NetOptions, error) {
	if !n.enabled {
		if n.o.Credentials != "" || len(n.o.EgressCAs) > 0 || n.o.EgressHosts != "" || len(n.o.EgressOpen) > 0 {
			return nil, errdefs.InvalidArgument("--credentials, --egress-ca, --egress-hosts and --egress-open configure sandbox networking: they need --net")
		}
		return nil, nil
	}
	o := n.o
	return &o, nil
}
