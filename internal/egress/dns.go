package egress

import (
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// startDNS serves DNS on pc (UDP) and ln (TCP) and returns once both
// servers run. Caller holds p.mu.
//
// The proxy's DNS is an authority for exactly the names the querying
// sandbox may reach, and answers them all with its own address:
//
//   - A for an allowed name: ListenAddr (AAAA when ListenAddr is IPv6).
//   - Any other type for an allowed name (AAAA, HTTPS, TXT, ...): NOERROR
//     with no answer, so resolvers fall back to A instead of failing.
//   - A name the sandbox may not reach: NXDOMAIN.
//   - A source that is no sandbox's: REFUSED.
//
// Nothing is ever forwarded upstream, so DNS cannot carry data out of the
// sandbox (no tunnelling through an upstream resolver) and upstream answers
// never reach the guest (the proxy resolves, checks and pins for itself).
func (p *Proxy) startDNS(pc net.PacketConn, ln net.Listener) error {
	h := dns.HandlerFunc(p.serveDNS)
	udp := &dns.Server{PacketConn: pc, Handler: h}
	tcp := &dns.Server{
		Listener: ln, Handler: h,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		IdleTimeout:   func() time.Duration { return 8 * time.Second },
		MaxTCPQueries: 128,
	}
	var running []*dns.Server
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		failed := make(chan error, 1)
		srv.NotifyStartedFunc = func() { close(started) }
		go func() {
			err := srv.ActivateAndServe()
			if err != nil {
				p.log.Error("egress dns server stopped", "err", err)
			}
			failed <- err
		}()
		select {
		case <-started:
			running = append(running, srv)
		case err := <-failed:
			for _, r := range running {
				_ = r.Shutdown()
			}
			return errdefs.Unavailable("egress: dns: %v", err)
		}
	}
	p.dnsServers = running
	return nil
}

func (p *Proxy) serveDNS(w dns.ResponseWriter, r *dns.Msg) {
	start := time.Now()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.RecursionAvailable = false
	defer func() { _ = w.WriteMsg(m) }()

	sb, ok := p.cfg.Lookup(addrOf(w.RemoteAddr()))
	if !ok {
		m.Rcode = dns.RcodeRefused
		p.log.Warn("egress dns query from unknown source refused", "src", addrOf(w.RemoteAddr()).String())
		return
	}
	ev := Event{Time: start, SandboxID: sb.ID, Tenant: sb.Tenant, Kind: KindDNS}
	pol, err := compile(sb)
	if err != nil {
		m.Rcode = dns.RcodeRefused
		p.log.Error("egress sandbox policy invalid; refusing", "sandbox", sb.ID, "kind", KindDNS, "err", err)
		ev.Outcome, ev.Reason = OutcomeDenied, "invalid_policy"
		p.emit(ev)
		return
	}
	// The default MsgAcceptFunc already answered anything but one question
	// with opcode QUERY.
	q := r.Question[0]
	if q.Qclass != dns.ClassINET {
		m.Rcode = dns.RcodeRefused
		ev.Outcome, ev.Reason = OutcomeDenied, "not_allowed"
		p.emit(ev)
		return
	}
	match, ok := pol.matchName(normalizeHost(q.Name))
	if !ok {
		m.Rcode = dns.RcodeNameError
		ev.Outcome, ev.Reason = OutcomeDenied, "not_allowed"
		p.emit(ev)
		return
	}
	ev.Host, ev.Rule, ev.Outcome = match.label, match.rule, OutcomeOK
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: p.cfg.DNSTTL}
	switch la := p.cfg.ListenAddr; {
	case q.Qtype == dns.TypeA && la.Is4():
		hdr.Rrtype = dns.TypeA
		m.Answer = []dns.RR{&dns.A{Hdr: hdr, A: la.AsSlice()}}
	case q.Qtype == dns.TypeAAAA && la.Is6():
		hdr.Rrtype = dns.TypeAAAA
		m.Answer = []dns.RR{&dns.AAAA{Hdr: hdr, AAAA: la.AsSlice()}}
	default:
		ev.Reason = "no_data"
	}
	p.emit(ev)
}

// dnsListener admits DNS-over-TCP connections like the other ports: known
// sources only, within the sandbox's connection limit. Refused connections
// are closed here and never reach the DNS server.
type dnsListener struct {
	net.Listener
	p *Proxy
}

func (l *dnsListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		sb, ok := l.p.cfg.Lookup(remoteAddr(c))
		if !ok || sb.ID == "" || !l.p.acquire(sb.ID) {
			c.Close()
			continue
		}
		return &dnsConn{Conn: c, release: sync.OnceFunc(func() { l.p.release(sb.ID) })}, nil
	}
}

type dnsConn struct {
	net.Conn
	release func()
}

func (c *dnsConn) Close() error {
	c.release()
	return c.Conn.Close()
}
