package netpool

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Policy values for Policy.Default.
const (
	// DefaultDeny: nothing leaves the guest (no DNS, no ICMP) except what an
	// Allow rule names. The only value ordinary callers should use.
	DefaultDeny = "deny"
	// DefaultAllow: the guest may reach anything except the protected
	// destinations (link-local/cloud metadata, the host's slot addresses and
	// other slots). For explicitly permissive, non-confidential jobs only.
	DefaultAllow = "allow"
)

// Protocols for Rule.Protocol.
const (
	ProtoAny  = "any" // also the meaning of ""
	ProtoTCP  = "tcp"
	ProtoUDP  = "udp"
	ProtoICMP = "icmp"
)

// Policy is a slot's egress policy: what the guest may open connections to.
// Replies to allowed connections are always let back in; nothing may open a
// connection towards the guest.
type Policy struct {
	// Default is DefaultDeny or DefaultAllow. Required: the zero Policy is
	// invalid so that a forgotten field can never mean "allow".
	Default string `json:"default"`
	// Allow lists the exceptions, evaluated as a set (order does not matter).
	Allow []Rule `json:"allow,omitempty"`
	// TLS says how the egress proxy treats the guest's TLS to domain rules:
	// TLSPassthrough ("" means the same) or TLSInspect. The namespace's
	// tables do not depend on it.
	TLS string `json:"tls,omitempty"`
}

// Values for Policy.TLS.
const (
	// TLSPassthrough: the proxy checks the TLS server name (SNI) and
	// splices the encrypted stream. It cannot see the request inside, so a
	// guest can reach another site served by an allowed name's server
	// (domain fronting).
	TLSPassthrough = "passthrough"
	// TLSInspect: the proxy terminates TLS with a certificate from the
	// sandbox's own CA (trusted by the guest), refuses requests for any
	// host but the server name, and re-encrypts to the upstream.
	TLSInspect = "inspect"
)

// Inspects reports whether the policy asks for TLS inspection.
func (p Policy) Inspects() bool { return p.TLS == TLSInspect }

// DenyAll is the policy every slot starts with.
func DenyAll() Policy { return Policy{Default: DefaultDeny} }

// Rule allows one kind of traffic. Exactly one of CIDR or Domain is set.
type Rule struct {
	// Name identifies the rule in audit records and in `nft list ruleset`
	// (as the rule comment). Required, unique within a policy, [A-Za-z0-9._-]{1,64}.
	Name string `json:"name"`
	// CIDR is an IPv4 prefix or address (a bare address means /32).
	// Rules inside link-local 169.254.0.0/16 are refused: cloud metadata is
	// never reachable. A pool also refuses rules inside its base range (the
	// host's slot addresses, other sandboxes) and inside special-purpose
	// ranges its operator has not opened (Pool.Compile).
	CIDR string `json:"cidr,omitempty"`
	// Ports are destination ports; empty means all. Only with tcp or udp.
	Ports []uint16 `json:"ports,omitempty"`
	// Protocol is tcp, udp, icmp or any ("" = any).
	Protocol string `json:"protocol,omitempty"`
	// Domain (e.g. "api.example.com" or "*.example.com") is enforced by the
	// host egress proxy, not here: in the namespace it becomes "allow tcp
	// 53/80/443 and udp 53 to Config.ProxyAddr". Ports/Protocol must be empty.
	Domain string `json:"domain,omitempty"`
	// Credential requires Domain to be one of the tenant's credential
	// routes (an exact name, no wildcard): the sandbox is refused
	// (FailedPrecondition) rather than given a plain domain rule when it is
	// not. A job that must reach only a pre-authorised, credentialled
	// location (airlock review --publish) asks for this, so a mistyped or
	// unconfigured host fails closed instead of opening plain egress.
	Credential bool `json:"credential,omitempty"`
}

// Validate reports every problem in p as one InvalidArgument error whose text
// names the offending fields ("allow[2].cidr: ...").
func (p Policy) Validate() error {
	_, err := p.compile()
	return err
}

// compiledRule is a validated Rule in the form the nftables builder wants.
type compiledRule struct {
	name   string
	dst    netip.Prefix // invalid for domain rules
	proto  string       // ProtoAny/TCP/UDP/ICMP
	ports  []uint16     // sorted, deduplicated; nil = all
	domain string
}

// compile checks a policy and compiles its rules. Every problem is
// reported, not just the first, in one InvalidArgument.
func (p Policy) compile() ([]compiledRule, error) {
	var pr problems
	switch p.Default {
	case DefaultDeny, DefaultAllow:
	case "":
		pr.add("default: required (%q or %q)", DefaultDeny, DefaultAllow)
	default:
		pr.add("default: %q is not %q or %q", p.Default, DefaultDeny, DefaultAllow)
	}
	switch p.TLS {
	case "", TLSPassthrough, TLSInspect:
	default:
		pr.add("tls: %q is not %q or %q", p.TLS, TLSPassthrough, TLSInspect)
	}
	seen := map[string]int{}
	var out []compiledRule
	for i, r := range p.Allow {
		n0 := len(pr)
		c := compileRule(i, r, seen, &pr)
		if len(pr) == n0 {
			out = append(out, c)
		}
	}
	if len(pr) > 0 {
		return nil, errdefs.InvalidArgument("egress policy: %s", strings.Join(pr, "; "))
	}
	return out, nil
}

// problems collects what is wrong with a policy.
type problems []string

func (pr *problems) add(format string, args ...any) { *pr = append(*pr, fmt.Sprintf(format, args...)) }

// compileRule checks allow[i] (seen: the names of the rules before it)
// and compiles it; what is wrong goes to pr.
func compileRule(i int, r Rule, seen map[string]int, pr *problems) compiledRule {
	f := func(field string) string { return fmt.Sprintf("allow[%d].%s", i, field) }
	c := compiledRule{name: r.Name, domain: r.Domain}
	switch {
	case r.Name == "":
		pr.add("%s: required", f("name"))
	case !validName(r.Name):
		pr.add("%s: %q must be 1-64 of [A-Za-z0-9._-]", f("name"), r.Name)
	default:
		if j, dup := seen[r.Name]; dup {
			pr.add("%s: %q duplicates allow[%d].name", f("name"), r.Name, j)
		} else {
			seen[r.Name] = i
		}
	}
	c.dst = ruleDestination(r, f, pr)
	c.proto, c.ports = ruleProtocol(r, f, pr)
	return c
}

// ruleDestination checks a rule's cidr or domain (exactly one; never
// link-local) and returns the cidr's prefix.
func ruleDestination(r Rule, f func(string) string, pr *problems) netip.Prefix {
	if r.Credential && (r.Domain == "" || strings.HasPrefix(r.Domain, "*")) {
		pr.add("%s: a credential rule needs an exact domain (a credential route's host)", f("credential"))
	}
	switch {
	case r.CIDR == "" && r.Domain == "":
		pr.add("%s: one of cidr or domain is required", f("cidr"))
	case r.CIDR != "" && r.Domain != "":
		pr.add("%s: cidr and domain are exclusive", f("domain"))
	case r.CIDR != "":
		dst, err := parseCIDR(r.CIDR)
		if err != nil {
			pr.add("%s: %v", f("cidr"), err)
			return netip.Prefix{}
		}
		if metadataCIDR.Contains(dst.Addr()) && dst.Bits() >= metadataCIDR.Bits() {
			pr.add("%s: %s is link-local (cloud metadata) and is never reachable", f("cidr"), dst)
		}
		return dst
	default:
		if !validDomain(r.Domain) {
			pr.add("%s: %q is not a hostname (wildcards only as a leading \"*.\")", f("domain"), r.Domain)
		}
		if r.Protocol != "" || len(r.Ports) > 0 {
			pr.add("%s: domain rules take no protocol or ports (the proxy allows 80/443)", f("protocol"))
		}
	}
	return netip.Prefix{}
}

// ruleProtocol checks a rule's protocol and ports and returns them
// normalised (ProtoAny for none; ports sorted without repeats).
func ruleProtocol(r Rule, f func(string) string, pr *problems) (string, []uint16) {
	proto := r.Protocol
	switch r.Protocol {
	case "", ProtoAny:
		proto = ProtoAny
	case ProtoTCP, ProtoUDP, ProtoICMP:
	default:
		pr.add("%s: %q is not one of tcp, udp, icmp, any", f("protocol"), r.Protocol)
	}
	if len(r.Ports) > 0 && proto != ProtoTCP && proto != ProtoUDP && r.Domain == "" {
		pr.add("%s: ports need protocol tcp or udp, not %q", f("ports"), proto)
	}
	for _, port := range r.Ports {
		if port == 0 {
			pr.add("%s: port 0 is not a port", f("ports"))
			break
		}
	}
	if len(r.Ports) == 0 {
		return proto, nil
	}
	return proto, slices.Compact(slices.Sorted(slices.Values(r.Ports)))
}

func parseCIDR(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 address or prefix", s)
		}
		s = a.String() + "/32"
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 address or prefix", s)
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("%q: only IPv4 is supported (guests have no IPv6)", s)
	}
	if p.Masked() != p {
		// Refuse rather than guess: "10.0.0.5/24" is usually a typo for /32.
		return netip.Prefix{}, fmt.Errorf("%q has host bits set (did you mean %s or %s/32?)", s, p.Masked(), p.Addr())
	}
	return p, nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validDomain(s string) bool {
	s = strings.TrimPrefix(s, "*.")
	if len(s) == 0 || len(s) > 253 || !strings.Contains(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// clone returns a deep copy (Slot.Policy hands these out).
func (p Policy) clone() Policy {
	q := Policy{Default: p.Default, Allow: make([]Rule, len(p.Allow)), TLS: p.TLS}
	for i, r := range p.Allow {
		r.Ports = slices.Clone(r.Ports)
		q.Allow[i] = r
	}
	return q
}
