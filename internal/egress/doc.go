// Package egress is the host-side egress proxy that enforces a sandbox's
// domain rules and injects its credentials.
//
// What it owns. One Proxy listens at netpool's Config.ProxyAddr on a DNS
// port (UDP and TCP), a TLS port and an HTTP port. netpool turns a domain
// rule into "tcp 53/80/443 and udp 53 to the proxy" in the sandbox's
// namespace and rewrites the guest's DNS (sent to its gateway) to the
// proxy; everything
// else about domain rules is decided here, per connection, against the
// Sandbox that Config.Lookup returns for the connection's source address
// (the slot's NsIP: the namespace masquerades guest traffic to it, so the
// source identifies the sandbox).
//
//   - DNS answers only names the sandbox may reach, always with the proxy's
//     own address; other names get NXDOMAIN, unknown sources REFUSED.
//   - TLS (Sandbox.TLS): the ClientHello's SNI is read (by crypto/tls, over
//     a recording connection) and checked. TLSPassthrough replays the
//     recorded bytes to the upstream and splices both ways. TLSInspect
//     terminates TLS with a leaf issued for the SNI by the sandbox's own CA
//     (Sandbox.CA, trusted by the guest; key only in memory), requires the
//     request's Host to equal the SNI (else 421 host_mismatch), and
//     forwards it like the HTTP port does, over a new TLS connection
//     verified against Config.UpstreamTLS.
//   - HTTP: one request per connection. A credential route's host is
//     forwarded over HTTPS to the route's upstream with the secret header
//     set; a domain rule's host is forwarded as plain HTTP to port 80;
//     anything else gets 403. CONNECT gets 405.
//
// Threat model. The guest is hostile: it runs untrusted documents through
// untrusted tools and may try to exfiltrate them or reach the host.
//
//   - Secrets never enter the guest. A route's Value lives in the Sandbox
//     the host hands to Lookup; the guest talks plain HTTP to an internal
//     name and the proxy adds the header on the way out, replacing any copy
//     the guest sent. Values never appear in events, logs or errors.
//
//   - No IP-literal bypass. The namespace's nftables let domain-rule
//     traffic reach only the proxy; a guest that connects to an address it
//     learned elsewhere is dropped there, and the proxy checks names, never
//     destination addresses.
//
//   - No DNS tunnelling. The proxy never forwards a query, so a query name
//     carries nothing further than the proxy.
//
//   - DNS rebinding. The proxy resolves names itself (Config.Resolve),
//     refuses the connection if any resolved address is loopback, private
//     (RFC 1918, CGNAT, ULA), link-local, multicast, unspecified, reserved,
//     the proxy's own, or inside netpool's slot range (Config.Internal), and
//     connects to the address it checked: it never re-resolves. A name that
//     legitimately points at a private address (an on-premises DMS) needs an
//     exact domain rule or a credential route; a wildcard never reaches a
//     private address, and nothing reaches loopback, link-local (cloud
//     metadata) or the slot range. (Config.AllowUpstream can widen this;
//     only tests, whose upstreams live on loopback, should.)
//
//   - Exhaustion. Header reads have a deadline, every connection an idle
//     timeout and a maximum lifetime, and each sandbox a cap on concurrent
//     connections; the DNS server only ever answers from memory.
//
//   - Audit without content. Events name the sandbox, the rule and the
//     allowed name, and count bytes; they never carry payloads, and never a
//     refused name, because a refused name is guest-chosen (it could be a
//     document encoded into a hostname). For wildcard matches the pattern
//     is recorded instead of the name for the same reason.
//
//   - Policy changes. Every session records what it was granted (name,
//     route, TLS mode, pinned address), decided under the session's lock;
//     Proxy.Recheck, which the owner of Lookup calls after each change and
//     when a sandbox ends, re-takes that decision against the new policy
//     under the same lock and closes, guest and upstream side, every
//     session it no longer allows.
//
// Known limits. In TLSPassthrough a domain rule allows a server, not a
// tenant of it: a guest may send an allowed SNI to a shared CDN address and
// ask for another site inside TLS (domain fronting); TLSInspect closes
// that at the cost of the guest trusting a per-sandbox CA. ClientHellos
// with Encrypted Client Hello are refused because they make fronting
// trivial (this also refuses browsers that send GREASE ECH). HTTP upgrades
// (WebSocket) and HTTP/2 are not proxied.
//
// What it must never do: forward a DNS query; dial a name (only addresses
// it has checked); log or record a payload, a secret or a refused name; let
// one sandbox's policy apply to another's source address.
package egress
