package egress

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// session is one admitted guest TCP connection and whatever the proxy opened
// for it upstream. It enforces the idle timeout and the maximum lifetime by
// closing every connection it holds, which unblocks any goroutine reading or
// writing them.
type session struct {
	p     *Proxy
	sb    Sandbox         // immutable; the sandbox the connection was admitted for
	src   netip.Addr      // immutable; the guest's source address (Lookup's key)
	kind  string          // immutable; the listener's kind
	start time.Time       // immutable
	guest *countedConn    // immutable
	ctx   context.Context // done when the session is killed or the proxy closes
	stop  context.CancelFunc

	last atomic.Int64 // unix nanoseconds of the last byte moved in either direction

	mu       sync.Mutex
	pol      *policy     // guarded by mu; the sandbox's policy now (Recheck replaces it)
	grant    *grant      // guarded by mu; what pol allowed this session to reach, once decided
	closers  []io.Closer // guarded by mu; upstream connections
	reason   string      // guarded by mu; why kill was first called ("" = not killed)
	done     bool        // guarded by mu; finish has run
	idle     *time.Timer // guarded by mu
	lifetime *time.Timer // guarded by mu
}

func newSession(ctx context.Context, p *Proxy, c net.Conn, src netip.Addr, pol *policy, kind string, start time.Time) *session {
	s := &session{p: p, pol: pol, sb: pol.sb, src: src, kind: kind, start: start}
	s.ctx, s.stop = context.WithCancel(ctx)
	s.guest = &countedConn{Conn: c, s: s}
	s.touch()
	s.mu.Lock()
	s.idle = time.AfterFunc(p.cfg.IdleTimeout, s.checkIdle)
	s.lifetime = time.AfterFunc(p.cfg.MaxLifetime, func() { s.kill("lifetime") })
	s.mu.Unlock()
	return s
}

func (s *session) touch() { s.last.Store(time.Now().UnixNano()) }

func (s *session) checkIdle() {
	idleFor := time.Since(time.Unix(0, s.last.Load()))
	if idleFor >= s.p.cfg.IdleTimeout {
		s.kill("idle_timeout")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.idle.Reset(s.p.cfg.IdleTimeout - idleFor)
	}
}

// grant is what a session was allowed to reach: the decision Recheck
// re-takes against a new policy.
type grant struct {
	host      string     // normalized name: SNI, Host header or route host
	route     *route     // the credential route used, or nil for a domain rule
	operator  bool       // the operator chose the address (credential route, static host): see upstreamAllowed
	inspected bool       // TLS terminated by the proxy (TLSInspect)
	addr      netip.Addr // the upstream address dialled, once pinned
}

// authorize decides, against the current policy and atomically with
// Recheck, what the session may reach. decide returns the grant and
// whether it is allowed; an allowed grant is recorded for Recheck.
func (s *session) authorize(decide func(*policy) (grant, bool)) (*policy, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := decide(s.pol)
	if ok {
		s.grant = &g
	}
	return s.pol, ok
}

// pin records the upstream address the session connected to, and reports
// whether the grant (which a concurrent Recheck may have withdrawn) still
// allows it.
func (s *session) pin(a netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grant == nil || s.reason != "" {
		return false
	}
	s.grant.addr = a
	return s.p.upstreamAllowed(a, s.grant.operator)
}

// revalidate replaces the session's policy and reports whether what it
// was granted is still allowed under it. A session that has not been
// granted anything yet (still reading its request) simply goes on under
// the new policy.
func (s *session) revalidate(pol *policy) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pol = pol
	g := s.grant
	if g == nil {
		return true
	}
	if g.route != nil {
		rt := pol.routes[g.host]
		return rt != nil && rt.name == g.route.name && rt.upstream.String() == g.route.upstream.String() &&
			rt.header == g.route.header && rt.value == g.route.value
	}
	if _, ok := pol.matchDomain(g.host); !ok {
		return false
	}
	// A TLS session lives in the mode it was admitted under: a spliced one
	// never had its Host checked, so switching to inspection ends it; an
	// inspected one is simply ended too (the guest reconnects).
	if s.kind == KindTLS && g.inspected != pol.inspect {
		return false
	}
	return !g.addr.IsValid() || s.p.upstreamAllowed(g.addr, g.operator)
}

// hold registers an upstream connection to be closed with the session. If
// the session is already killed, c is closed at once.
func (s *session) hold(c io.Closer) {
	s.mu.Lock()
	if s.reason != "" || s.done {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.closers = append(s.closers, c)
	s.mu.Unlock()
}

// kill closes everything the session holds; the first reason sticks.
func (s *session) kill(reason string) (first bool) {
	s.mu.Lock()
	if s.reason == "" && !s.done {
		s.reason, first = reason, true
	}
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	s.stop()
	s.guest.Close()
	for _, c := range closers {
		c.Close()
	}
	return first
}

// killReason reports why the session was killed, or "".
func (s *session) killReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// finish releases everything: connections, timers, the connection slot.
// Called exactly once, by the goroutine that served the session.
func (s *session) finish() {
	s.mu.Lock()
	s.done = true
	s.idle.Stop()
	s.lifetime.Stop()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	s.stop()
	s.guest.Close()
	for _, c := range closers {
		c.Close()
	}
	s.p.release(s.sb.ID)
	s.p.mu.Lock()
	delete(s.p.sessions, s)
	s.p.mu.Unlock()
}

// event starts the session's audit event.
func (s *session) event(kind string) Event {
	return Event{Time: s.start, SandboxID: s.sb.ID, Tenant: s.sb.Tenant, Kind: kind}
}

// emit completes ev with the guest-side byte counts and how the session
// ended, and hands it to Audit.
func (s *session) emit(ev Event) {
	ev.BytesUp = s.guest.read.Load()
	ev.BytesDown = s.guest.written.Load()
	if r := s.killReason(); r != "" && ev.Reason == "" {
		ev.Reason = r
		if r == "lifetime" && ev.Outcome == OutcomeOK {
			ev.Outcome = OutcomeError
		}
	}
	s.p.emit(ev)
}

// countedConn counts bytes and records activity for the idle timeout.
type countedConn struct {
	net.Conn
	s             *session
	read, written atomic.Int64
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.read.Add(int64(n))
		c.s.touch()
	}
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.written.Add(int64(n))
		c.s.touch()
	}
	return n, err
}

// CloseWrite half-closes when the underlying connection can (TCP), so a
// splice can pass an EOF through while the other direction keeps flowing.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// splice copies both ways until both directions have ended, then returns
// whether it ended cleanly (both sides sent EOF). An error in one direction
// (a reset, a kill) closes both connections so the other copy ends too.
func splice(s *session, a, b *countedConn) bool {
	errc := make(chan error, 2)
	cp := func(dst, src *countedConn) {
		_, err := io.Copy(dst, src)
		if err == nil {
			err = dst.CloseWrite()
		}
		if err != nil {
			s.kill("reset")
		}
		errc <- err
	}
	go cp(a, b)
	cp(b, a)
	err1, err2 := <-errc, <-errc
	return err1 == nil && err2 == nil
}
