package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/netguard"
	"github.com/airlock-dev/airlock/internal/netpool"
)

// Config configures a Proxy. Lookup and ListenAddr are required; every other
// field has a default (noted).
type Config struct {
	// ListenAddr is the proxy's address: netpool's Config.ProxyAddr, the
	// only address a slot namespace lets domain-rule traffic reach, and the
	// guest's DNS server. Every DNS answer points here.
	ListenAddr netip.Addr
	// HTTPPort, TLSPort and DNSPort are the TCP (and, for DNS, UDP) ports
	// listened on at ListenAddr (default 80, 443, 53; tests use high ports).
	HTTPPort, TLSPort, DNSPort int
	// Lookup reports which sandbox owns a source address (netpool's
	// Slot.NsIP, unique per sandbox). Called per connection and per DNS
	// query; it must be cheap and safe for concurrent use. A source it does
	// not know is refused.
	Lookup func(src netip.Addr) (Sandbox, bool)
	// Resolve resolves upstream names (default net.DefaultResolver, "ip").
	// It is the only resolver the proxy uses, and the proxy connects to the
	// addresses it returns, never re-resolving.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Hosts are names the operator resolved (`--egress-hosts`, hosts(5)):
	// looked up here before Resolve, and, being the operator's choice,
	// allowed to reach special-purpose ranges it has not opened (never the
	// host's own addresses or a Never range).
	Hosts map[string][]netip.Addr
	// Guard decides resolved addresses (see upstreamAllowed). Its
	// HostAddrs default to this host's interface addresses, read at each
	// dial.
	Guard netguard.Guard
	// Dial opens upstream connections (default net.Dialer). It is handed a
	// literal "ip:port", never a name.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// AllowUpstream, for tests that run upstreams on loopback, replaces
	// Guard: it alone decides resolved addresses (Internal and ListenAddr
	// stay refused). nil in production.
	AllowUpstream func(netip.Addr) bool
	// Internal lists ranges that are never dialled, not even for an exact
	// rule (default netpool's DefaultBaseCIDR; set it to the pool's
	// BaseCIDR): the host's veth ends and other sandboxes live there.
	Internal []netip.Prefix
	// UpstreamTLS is the client TLS configuration for credential-route
	// upstreams (default: system roots). Its ServerName is overwritten per
	// route. Domain-rule TLS is not terminated, so it does not apply there.
	UpstreamTLS *tls.Config
	// Audit receives one Event per DNS query, TLS connection and HTTP
	// request (default: dropped). It runs on the connection's goroutine, so
	// it should be quick; a hostile guest can cause many events, so a store
	// behind it should batch or aggregate.
	Audit func(Event)
	// Logger receives operational logs (default slog.Default()). Logs and
	// events carry ids, rule names and matched names, never payloads, and
	// never a name the policy refused (that name is guest-chosen content).
	Logger *slog.Logger

	// MaxConnsPerSandbox caps a sandbox's concurrent TCP connections to the
	// proxy, all ports together (default 64). MaxConns caps them across all
	// sandboxes (default 4096).
	MaxConnsPerSandbox, MaxConns int
	// HeaderTimeout bounds reading a TLS ClientHello or HTTP request header
	// (default 10 s). DialTimeout bounds resolving plus connecting upstream
	// (default 10 s).
	HeaderTimeout, DialTimeout time.Duration
	// IdleTimeout closes a connection when no byte has moved in either
	// direction for this long (default 5 min, long enough for a slow
	// non-streaming LLM answer). MaxLifetime closes it regardless (default
	// 1 h).
	IdleTimeout, MaxLifetime time.Duration
	// DNSTTL is the TTL of DNS answers in seconds (default 5): short, so a
	// policy change is seen quickly by the guest's resolver.
	DNSTTL uint32
}

// Kinds of Event.
const (
	KindDNS        = "dns"
	KindTLS        = "tls"
	KindHTTP       = "http"
	KindCredential = "credential"
)

// Outcomes of Event.
const (
	OutcomeOK     = "ok"     // proxied (or answered); Reason may say how it ended
	OutcomeDenied = "denied" // refused by policy or limits; nothing went upstream
	OutcomeError  = "error"  // allowed, but resolving, connecting or the upstream failed
)

// Event is one audit record: what a sandbox's guest reached, or tried to.
// It names ids, rules and sizes, never payloads, secrets or refused names.
type Event struct {
	Time      time.Time // when the connection or query arrived
	SandboxID string
	Tenant    string
	Kind      string // KindDNS, KindTLS, KindHTTP, KindCredential
	// Host is the allowed name: the exact name, the route's in-guest host,
	// or for a wildcard match the pattern ("*.example.com"), because the
	// labels under a wildcard are chosen by the guest. Empty when refused.
	Host string
	Rule string // rule or route name; empty when refused
	// Upstream is the "ip:port" the proxy connected to, if it did.
	Upstream string
	// BytesUp and BytesDown count bytes read from and written to the guest
	// connection (TLS: the whole encrypted stream; HTTP: request and
	// response including headers). Zero for DNS.
	BytesUp, BytesDown int64
	Status             int    // HTTP status sent to the guest; 0 for DNS and TLS
	Outcome            string // OutcomeOK, OutcomeDenied, OutcomeError
	Reason             string // stable code when not a plain success: "not_allowed", "no_sni", "limit", ...
	Duration           time.Duration
}

// Proxy is the host-side egress proxy. Safe for concurrent use.
//
// Concurrency: mu guards the bookkeeping below. Each admitted connection is
// served by one goroutine (plus one for the second splice direction), all
// counted in wg; the DNS servers run their own goroutines.
type Proxy struct {
	cfg Config       // immutable after New; defaults filled in
	log *slog.Logger // immutable

	mu         sync.Mutex
	state      int                   // guarded by mu; stateNew, stateRunning, stateClosed
	cancel     context.CancelFunc    // guarded by mu; cancels every session's context
	listeners  []net.Listener        // guarded by mu; closed by Close
	dnsServers []*dns.Server         // guarded by mu; shut down by Close
	sessions   map[*session]struct{} // guarded by mu; open guest connections
	perSandbox map[string]int        // guarded by mu; open connections by sandbox id
	total      int                   // guarded by mu; len(sessions) + open DNS/TCP connections
	wg         sync.WaitGroup        // accept loops and connection goroutines
}

const (
	stateNew = iota
	stateRunning
	stateClosed
)

// New validates cfg and fills in defaults. Nothing listens until Start.
func New(cfg Config) (*Proxy, error) {
	if !cfg.ListenAddr.IsValid() {
		return nil, errdefs.InvalidArgument("egress: listen_addr: required")
	}
	cfg.ListenAddr = cfg.ListenAddr.Unmap()
	if cfg.Lookup == nil {
		return nil, errdefs.InvalidArgument("egress: lookup: required")
	}
	for _, pp := range []struct {
		name string
		v    *int
		def  int
	}{{"http_port", &cfg.HTTPPort, 80}, {"tls_port", &cfg.TLSPort, 443}, {"dns_port", &cfg.DNSPort, 53}} {
		switch {
		case *pp.v == 0:
			*pp.v = pp.def
		case *pp.v < 0 || *pp.v > 65535:
			return nil, errdefs.InvalidArgument("egress: %s %d: not a port", pp.name, *pp.v)
		}
	}
	if cfg.HTTPPort == cfg.TLSPort || cfg.HTTPPort == cfg.DNSPort || cfg.TLSPort == cfg.DNSPort {
		return nil, errdefs.InvalidArgument("egress: http, tls and dns ports must differ")
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	if cfg.Guard.HostAddrs == nil {
		cfg.Guard.HostAddrs = interfaceAddrs
	}
	if cfg.Internal == nil {
		cfg.Internal = []netip.Prefix{netip.MustParsePrefix(netpool.DefaultBaseCIDR)}
	}
	if cfg.Audit == nil {
		cfg.Audit = func(Event) {}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	defaults := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"header_timeout", &cfg.HeaderTimeout, 10 * time.Second},
		{"dial_timeout", &cfg.DialTimeout, 10 * time.Second},
		{"idle_timeout", &cfg.IdleTimeout, 5 * time.Minute},
		{"max_lifetime", &cfg.MaxLifetime, time.Hour},
	}
	for _, d := range defaults {
		switch {
		case *d.v == 0:
			*d.v = d.def
		case *d.v < 0:
			return nil, errdefs.InvalidArgument("egress: %s %v: must be positive", d.name, *d.v)
		}
	}
	if cfg.MaxConnsPerSandbox == 0 {
		cfg.MaxConnsPerSandbox = 64
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 4096
	}
	if cfg.MaxConnsPerSandbox < 0 || cfg.MaxConns < 0 {
		return nil, errdefs.InvalidArgument("egress: connection limits must be positive")
	}
	if cfg.DNSTTL == 0 {
		cfg.DNSTTL = 5
	}
	return &Proxy{
		cfg: cfg, log: cfg.Logger.With("component", "egress"),
		sessions: map[*session]struct{}{}, perSandbox: map[string]int{},
	}, nil
}

// Start listens on TCP HTTPPort and TLSPort and on UDP and TCP DNSPort at
// ListenAddr and serves until Close or until ctx is done. It returns once
// every socket is bound; on error nothing is left listening.
func (p *Proxy) Start(ctx context.Context) (err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != stateNew {
		return errdefs.FailedPrecondition("egress: Start called twice or after Close")
	}
	var lns []net.Listener
	var pcs []net.PacketConn
	defer func() {
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			for _, c := range pcs {
				c.Close()
			}
		}
	}()
	addr := func(port int) string { return net.JoinHostPort(p.cfg.ListenAddr.String(), strconv.Itoa(port)) }
	for _, port := range []int{p.cfg.HTTPPort, p.cfg.TLSPort, p.cfg.DNSPort} {
		l, err := net.Listen("tcp", addr(port))
		if err != nil {
			return errdefs.Unavailable("egress: listen: %v", err)
		}
		lns = append(lns, l)
	}
	pc, err := net.ListenPacket("udp", addr(p.cfg.DNSPort))
	if err != nil {
		return errdefs.Unavailable("egress: listen: %v", err)
	}
	pcs = append(pcs, pc)

	// DNS first: it is the step that can still fail, and until state is
	// running its TCP listener admits nobody.
	if err := p.startDNS(pc, &dnsListener{Listener: lns[2], p: p}); err != nil {
		return err // the deferred cleanup closes every socket (again, harmlessly)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	p.state = stateRunning
	p.listeners = lns[:2]
	p.wg.Add(2)
	go p.acceptLoop(sctx, lns[0], KindHTTP, p.serveHTTP)
	go p.acceptLoop(sctx, lns[1], KindTLS, p.serveTLS)

	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.Close()
			case <-sctx.Done():
			}
		}()
	}
	p.log.Info("egress proxy listening", "addr", p.cfg.ListenAddr.String(),
		"http_port", p.cfg.HTTPPort, "tls_port", p.cfg.TLSPort, "dns_port", p.cfg.DNSPort)
	return nil
}

// Close stops listening, closes every open connection and waits for their
// goroutines. Idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		return
	}
	wasRunning := p.state == stateRunning
	p.state = stateClosed
	for _, l := range p.listeners {
		l.Close()
	}
	servers := p.dnsServers
	sessions := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		sessions = append(sessions, s)
	}
	if p.cancel != nil {
		p.cancel()
	}
	p.mu.Unlock()

	if !wasRunning {
		return
	}
	for _, srv := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := srv.ShutdownContext(ctx); err != nil {
			p.log.Warn("egress dns shutdown", "err", err)
		}
		cancel()
	}
	for _, s := range sessions {
		s.kill("closed")
	}
	p.wg.Wait()
}

// acceptLoop admits connections on one listener and serves each on its own
// goroutine.
func (p *Proxy) acceptLoop(ctx context.Context, ln net.Listener, kind string, serve func(*session)) {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			// Out of file descriptors and the like: back off instead of
			// spinning, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.log.Warn("egress accept", "kind", kind, "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		s := p.admit(ctx, c, kind)
		if s == nil {
			continue
		}
		go func() {
			defer p.wg.Done() // added by admit
			defer s.finish()
			serve(s)
		}()
	}
}

// admit identifies the sandbox behind c, checks its policy and connection
// limits, and registers a session; it closes c and returns nil when any of
// that fails. On success the caller owns one wg count.
func (p *Proxy) admit(ctx context.Context, c net.Conn, kind string) *session {
	start := time.Now()
	src := remoteAddr(c)
	sb, ok := p.cfg.Lookup(src)
	if !ok {
		// Only slot addresses can reach the proxy (netpool's host table), so
		// this is a sandbox released a moment ago, or a misconfiguration.
		p.log.Warn("egress connection from unknown source refused", "kind", kind, "src", src.String())
		c.Close()
		return nil
	}
	pol, err := compile(sb)
	if err != nil {
		p.log.Error("egress sandbox policy invalid; refusing", "sandbox", sb.ID, "kind", kind, "err", err)
		c.Close()
		p.emit(Event{Time: start, SandboxID: sb.ID, Tenant: sb.Tenant, Kind: kind,
			Outcome: OutcomeDenied, Reason: "invalid_policy"})
		return nil
	}
	if !p.acquire(sb.ID) {
		c.Close()
		p.emit(Event{Time: start, SandboxID: sb.ID, Tenant: sb.Tenant, Kind: kind,
			Outcome: OutcomeDenied, Reason: "limit"})
		return nil
	}
	s := newSession(ctx, p, c, src, pol, kind, start)
	p.mu.Lock()
	if p.state != stateRunning {
		p.mu.Unlock()
		s.finish()
		return nil
	}
	p.sessions[s] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	return s
}

// Recheck judges every open connection from src against the policy Lookup
// returns for src now, and closes, on both sides, each one it no longer
// allows: all of them when src is unknown or belongs to another sandbox
// (the sandbox ended), those whose name, route or TLS mode the new policy
// drops otherwise. The sockets are closed before Recheck returns (the
// upstream gets its FIN or reset at once); the sessions' goroutines finish
// on their own. Connections still reading their request go on under the
// new policy. It returns how many connections it closed.
//
// The owner of Lookup calls it after every change to what Lookup returns
// for src: a policy change, and a sandbox's end. Safe for concurrent use.
func (p *Proxy) Recheck(src netip.Addr) int {
	src = src.Unmap()
	p.mu.Lock()
	if p.state != stateRunning {
		p.mu.Unlock()
		return 0
	}
	var from []*session
	for s := range p.sessions {
		if s.src == src {
			from = append(from, s)
		}
	}
	p.mu.Unlock()
	if len(from) == 0 {
		return 0
	}
	var pol *policy
	reason := "policy_changed"
	if sb, ok := p.cfg.Lookup(src); ok {
		var err error
		if pol, err = compile(sb); err != nil {
			p.log.Error("egress sandbox policy invalid; closing its connections", "sandbox", sb.ID, "err", err)
			pol = &policy{sb: sb, exact: map[string]string{}, routes: map[string]*route{}} // allows nothing
		}
	}
	// A session killed earlier but not yet finished by its goroutine is
	// still registered; kill reports only the ones this call ended.
	closed := 0
	for _, s := range from {
		ended := false
		switch {
		case pol == nil || pol.sb.ID != s.sb.ID:
			ended = s.kill("sandbox_ended") // the address belongs to nobody, or to a new sandbox
		case !s.revalidate(pol):
			ended = s.kill(reason)
		}
		if ended {
			closed++
		}
	}
	if closed > 0 {
		p.log.Info("egress connections closed by a policy change or sandbox end", "src", src.String(), "closed", closed)
	}
	return closed
}

// acquire takes one connection slot for sandbox id.
func (p *Proxy) acquire(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != stateRunning || p.perSandbox[id] >= p.cfg.MaxConnsPerSandbox || p.total >= p.cfg.MaxConns {
		return false
	}
	p.perSandbox[id]++
	p.total++
	return true
}

func (p *Proxy) release(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perSandbox[id]--; p.perSandbox[id] <= 0 {
		delete(p.perSandbox, id)
	}
	p.total--
}

func (p *Proxy) emit(ev Event) {
	if ev.Duration == 0 && !ev.Time.IsZero() {
		ev.Duration = time.Since(ev.Time)
	}
	p.cfg.Audit(ev)
}

func remoteAddr(c net.Conn) netip.Addr {
	return addrOf(c.RemoteAddr())
}

func addrOf(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case *net.UDPAddr:
		return a.AddrPort().Addr().Unmap()
	case nil:
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// dialUpstream resolves host (unless it is an IP literal), refuses the whole
// connection if any resolved address is not allowed, and connects to the
// first address that answers. It returns a stable reason code on failure.
//
// Pinning: the returned connection goes to an address that was checked;
// nothing downstream resolves the name again, so a DNS answer that changes
// between the check and the connect (rebinding) cannot redirect it.
func (p *Proxy) dialUpstream(ctx context.Context, host string, port uint16, operator bool) (net.Conn, netip.AddrPort, string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if as, ok := p.cfg.Hosts[host]; ok {
		addrs, operator = as, true
	} else {
		addrs, err = p.cfg.Resolve(ctx, host)
		if err != nil {
			return nil, netip.AddrPort{}, "resolve_failed", err
		}
		if len(addrs) == 0 {
			return nil, netip.AddrPort{}, "resolve_failed", fmt.Errorf("no addresses")
		}
	}
	const maxTries = 8
	if len(addrs) > maxTries {
		addrs = addrs[:maxTries]
	}
	for _, a := range addrs {
		if !p.upstreamAllowed(a, operator) {
			return nil, netip.AddrPort{}, "refused_address", fmt.Errorf("resolves to a refused address")
		}
	}
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), port)
		c, err := p.cfg.Dial(ctx, "tcp", ap.String())
		if err == nil {
			return c, ap, "", nil
		}
		errs = append(errs, err)
	}
	return nil, netip.AddrPort{}, "dial_failed", errors.Join(errs...)
}
