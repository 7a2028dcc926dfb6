package egress

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Sandbox is what the proxy needs to know about the sandbox that owns a
// source address. Lookup returns it per connection (and per DNS query), so a
// policy change takes effect on the next connection; connections already
// open are judged again by Proxy.Recheck, which the owner of Lookup calls
// after every change (and when a sandbox ends).
type Sandbox struct {
	// ID and Tenant identify the sandbox in audit events and logs. ID is
	// required: it is also the key of the per-sandbox connection limit.
	ID, Tenant string
	// Domains lists the names the guest may reach over TLS (by SNI) and
	// plain HTTP (by Host), and resolve through the proxy's DNS.
	Domains []DomainRule
	// Routes are credential routes: plain-HTTP names inside the guest that
	// the proxy forwards over HTTPS with a secret header added.
	Routes []CredentialRoute
	// TLS is how the TLS port treats the sandbox's connections:
	// TLSPassthrough (the default, also "") or TLSInspect.
	TLS TLSMode
	// CA issues the certificates the proxy presents when it terminates the
	// guest's TLS. Required with TLSInspect, ignored otherwise. Its
	// certificate must be in the guest's trust store.
	CA *CA
}

// TLSMode says whether the proxy terminates a sandbox's TLS.
type TLSMode string

const (
	// TLSPassthrough checks the ClientHello's SNI against the domain rules
	// and splices the encrypted stream to the upstream untouched. The proxy
	// never sees the request, so a guest can ask an allowed server (a CDN
	// front) for another site inside TLS: domain fronting.
	TLSPassthrough TLSMode = "passthrough"
	// TLSInspect terminates the guest's TLS with a certificate from the
	// sandbox's own CA, refuses requests whose Host differs from the SNI
	// (421, reason "host_mismatch"), and forwards each request over a new
	// TLS connection to the upstream, verified normally (system roots plus
	// Config.UpstreamTLS). The guest must trust the sandbox CA; anything
	// that pins certificates, or brings its own trust store, fails.
	TLSInspect TLSMode = "inspect"
)

// DomainRule allows one name or one family of names.
type DomainRule struct {
	// Name identifies the rule in audit events: [A-Za-z0-9._-]{1,64}, unique
	// among a sandbox's domain rules and routes (netpool's Rule.Name).
	Name string `json:"name"`
	// Pattern is "api.example.com" (that name only) or "*.example.com"
	// (every name below example.com at any depth, never example.com itself).
	// Case-insensitive; one trailing dot is tolerated. IP literals, a bare
	// "*", "*" anywhere but a leading "*." label, and wildcards directly
	// over a top-level domain ("*.com") are refused.
	Pattern string `json:"pattern"`
}

// CredentialRoute lets the guest call an authenticated API without ever
// holding its secret: the guest sends plain HTTP to Host, the proxy forwards
// the request to Upstream over HTTPS and sets Header: Value on the way.
type CredentialRoute struct {
	// Name identifies the route in audit events (same rules as
	// DomainRule.Name).
	Name string `json:"name"`
	// Host is the name the guest uses, e.g. "llm.internal". The proxy's DNS
	// answers it and its HTTP port accepts it; it must not also match one of
	// the sandbox's domain rules (that would make the route ambiguous).
	Host string `json:"host"`
	// Upstream is the https URL requests are forwarded to; the guest's
	// request path is appended to its path ("https://api.example.com/v1" +
	// "/chat" = "https://api.example.com/v1/chat"). No user info, query or
	// fragment: a secret belongs in Header/Value, where it is never logged.
	Upstream string `json:"upstream"`
	// Header and Value are the credential, e.g. "Authorization" and
	// "Bearer sk-...". Value is held host-side only; it never reaches the
	// guest, an audit event, a log line or an error message. A client-sent
	// Header is removed before Value is set.
	Header string `json:"header"`
	Value  string `json:"-"`
}

// Validate reports every problem in s as one InvalidArgument error naming
// the offending fields ("domains[1].pattern: ..."). It never quotes a
// credential value or an upstream URL.
func (s Sandbox) Validate() error {
	_, err := compile(s)
	return err
}

// policy is a validated Sandbox in the form the proxy matches against.
// Immutable once built.
type policy struct {
	sb      Sandbox
	inspect bool              // TLSInspect: terminate TLS with sb.CA
	exact   map[string]string // normalized name -> rule name
	wild    []wildRule
	routes  map[string]*route // normalized in-guest host -> route
}

type wildRule struct {
	suffix  string // ".example.com"
	pattern string // "*.example.com", what audit events record
	name    string
}

type route struct {
	name     string
	host     string   // normalized in-guest name
	upstream *url.URL // https, no query; Path without trailing "/"
	header   string   // canonical header key
	value    string
}

// match is how a name matched a sandbox's policy.
type match struct {
	rule  string // rule or route name
	label string // what the audit event records: the exact name, or the wildcard pattern
	exact bool   // matched by an exact rule (only these may resolve to private addresses)
	route *route // non-nil for credential-route hosts
}

// compile checks a Sandbox and builds its policy. Every problem is
// reported, not just the first, in one InvalidArgument.
func compile(s Sandbox) (*policy, error) {
	c := &policyCompiler{p: &policy{sb: s, exact: map[string]string{}, routes: map[string]*route{}}, names: map[string]string{}}
	if s.ID == "" {
		c.bad("id: required")
	}
	c.tlsMode(s)
	for i, d := range s.Domains {
		c.domain(i, d)
	}
	for i, r := range s.Routes {
		c.route(i, r)
	}
	if len(c.problems) > 0 {
		return nil, errdefs.InvalidArgument("egress sandbox %q: %s", s.ID, strings.Join(c.problems, "; "))
	}
	return c.p, nil
}

// policyCompiler collects a policy and the problems found building it.
type policyCompiler struct {
	p        *policy
	problems []string
	names    map[string]string // rule and route name -> the field that declared it
}

func (c *policyCompiler) bad(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// checkName checks a rule's or route's name; names are unique across both.
func (c *policyCompiler) checkName(field, n string) {
	switch {
	case n == "":
		c.bad("%s: required", field)
	case !validName(n):
		c.bad("%s: %q must be 1-64 of [A-Za-z0-9._-]", field, n)
	case c.names[n] != "":
		c.bad("%s: %q duplicates %s", field, n, c.names[n])
	default:
		c.names[n] = field
	}
}

// tlsMode checks the TLS mode (inspection needs the sandbox's CA).
func (c *policyCompiler) tlsMode(s Sandbox) {
	switch s.TLS {
	case "", TLSPassthrough:
	case TLSInspect:
		c.p.inspect = true
		if s.CA == nil {
			c.bad("ca: required with tls %q", TLSInspect)
		}
	default:
		c.bad("tls: %q is not %q or %q", s.TLS, TLSPassthrough, TLSInspect)
	}
}

// domain adds domain rule i: an exact name, or "*." and a domain below a
// top-level one; never an IP address.
func (c *policyCompiler) domain(i int, d DomainRule) {
	f := func(field string) string { return fmt.Sprintf("domains[%d].%s", i, field) }
	c.checkName(f("name"), d.Name)
	pat := normalizeHost(d.Pattern)
	if base, ok := strings.CutPrefix(pat, "*."); ok {
		switch {
		case !validHostname(base):
			c.bad("%s: %q is not a hostname pattern (exact name or leading \"*.\")", f("pattern"), d.Pattern)
		case !strings.Contains(base, "."):
			c.bad("%s: %q would allow a whole top-level domain", f("pattern"), d.Pattern)
		default:
			c.p.wild = append(c.p.wild, wildRule{suffix: "." + base, pattern: pat, name: d.Name})
		}
		return
	}
	switch {
	case pat == "" || pat == "*":
		c.bad("%s: %q: a pattern names a host or \"*.\" plus a domain", f("pattern"), d.Pattern)
	case isIPLiteral(pat):
		c.bad("%s: %q is an IP address; use a CIDR rule in the netpool policy instead", f("pattern"), d.Pattern)
	case !validHostname(pat):
		c.bad("%s: %q is not a hostname pattern (exact name or leading \"*.\")", f("pattern"), d.Pattern)
	default:
		c.p.exact[pat] = d.Name
	}
}

// route adds credential route i: a host of its own (no domain rule may
// also allow it), an https upstream, and a header the proxy does not
// manage with a valid value.
func (c *policyCompiler) route(i int, r CredentialRoute) {
	f := func(field string) string { return fmt.Sprintf("routes[%d].%s", i, field) }
	c.checkName(f("name"), r.Name)
	rt := &route{name: r.Name, value: r.Value, host: normalizeHost(r.Host)}
	switch {
	case isIPLiteral(rt.host):
		c.bad("%s: %q is an IP address; the guest reaches routes by name", f("host"), r.Host)
	case !validHostname(rt.host):
		c.bad("%s: %q is not a hostname", f("host"), r.Host)
	case c.p.routes[rt.host] != nil:
		c.bad("%s: %q duplicates another route's host", f("host"), r.Host)
	default:
		if m, ok := c.p.matchDomain(rt.host); ok {
			c.bad("%s: %q is also allowed by domain rule %q; a route's host must be its own", f("host"), r.Host, m.rule)
		}
	}
	u, err := parseUpstream(r.Upstream)
	if err != nil {
		c.bad("%s: %v", f("upstream"), err) // err never quotes the URL
	}
	rt.upstream = u
	switch canon := canonicalHeader(r.Header); {
	case r.Header == "":
		c.bad("%s: required", f("header"))
	case !validHeaderName(r.Header):
		c.bad("%s: %q is not a header name", f("header"), r.Header)
	case hopByHop[canon] || canon == "Host" || canon == "Content-Length":
		c.bad("%s: %q is managed by the proxy and cannot carry a credential", f("header"), r.Header)
	default:
		rt.header = canon
	}
	switch {
	case r.Value == "":
		c.bad("%s: required", f("value"))
	case !validHeaderValue(r.Value):
		c.bad("%s: contains characters not allowed in a header value", f("value"))
	}
	c.p.routes[rt.host] = rt
}

// parseUpstream validates a route's upstream URL. Its errors never contain
// the URL: a careless caller may have put a secret in it.
func parseUpstream(s string) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("required")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("not a URL")
	case u.Scheme != "https":
		return nil, fmt.Errorf("scheme must be https (the credential must not cross the network in clear)")
	case u.User != nil:
		return nil, fmt.Errorf("must not contain user info (put the credential in header/value)")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("must not contain a query or fragment (put the credential in header/value)")
	case u.Opaque != "" || u.Hostname() == "":
		return nil, fmt.Errorf("must be https://host[:port][/path]")
	}
	h := normalizeHost(u.Hostname())
	if !isIPLiteral(h) && !validHostname(h) {
		return nil, fmt.Errorf("host is not a hostname or IP address")
	}
	if port := u.Port(); port != "" {
		if n, err := parsePort(port); err != nil || n == 0 {
			return nil, fmt.Errorf("port is not a port number")
		}
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// matchDomain reports whether a normalized name is allowed by a domain rule.
// An exact rule wins over a wildcard that also matches, so that the name
// gets the exact rule's (wider) upstream-address allowance.
func (p *policy) matchDomain(name string) (match, bool) {
	if r, ok := p.exact[name]; ok {
		return match{rule: r, label: name, exact: true}, true
	}
	for _, w := range p.wild {
		if len(name) > len(w.suffix) && strings.HasSuffix(name, w.suffix) {
			return match{rule: w.name, label: w.pattern}, true
		}
	}
	return match{}, false
}

// matchName reports whether the guest may resolve name: a domain rule or a
// credential route host.
func (p *policy) matchName(name string) (match, bool) {
	if r := p.routes[name]; r != nil {
		return match{rule: r.name, label: r.host, exact: true, route: r}, true
	}
	return p.matchDomain(name)
}

// normalizeHost lower-cases a name and drops one trailing dot. Non-ASCII
// bytes are left alone so that validHostname refuses them.
func normalizeHost(s string) string {
	s = strings.TrimSuffix(s, ".")
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func isIPLiteral(s string) bool {
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	return err == nil
}

// validHostname accepts LDH names (A-labels for IDNs): 1-63 character
// labels of [a-z0-9-] without leading or trailing hyphen, at most 253
// characters, and a last label that is not all digits (which resolvers may
// read as part of an IPv4 address, e.g. "0x7f.1" or "10.1").
func validHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func parsePort(s string) (uint16, error) {
	var n uint32
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("bad port")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("bad port")
		}
		n = n*10 + uint32(s[i]-'0')
	}
	if n > 65535 {
		return 0, fmt.Errorf("bad port")
	}
	return uint16(n), nil
}
