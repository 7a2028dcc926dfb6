package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"time"
)

// maxHelloBytes caps what the proxy buffers while reading a ClientHello.
// crypto/tls itself refuses handshake messages over 64 KiB; the slack covers
// record headers.
const maxHelloBytes = 64<<10 + 4<<10

// The encrypted_client_hello extension (RFC 9849).
const extensionECH = 0xfe0d

var errHelloCaptured = errors.New("egress: client hello captured")

// clientHello is what the proxy learns from a ClientHello without
// terminating TLS.
type clientHello struct {
	serverName string
	ech        bool   // an encrypted_client_hello extension is present
	raw        []byte // every byte read from the guest so far, to replay upstream
}

// peekClientHello reads the guest's ClientHello with crypto/tls's own
// parser (no hand-written record parsing): a server-side handshake runs over
// a connection that records what it reads and swallows what it writes, and
// GetConfigForClient captures the hello and aborts. The guest sees nothing
// of this; the recorded bytes are replayed to the real server, which
// completes the handshake end to end.
func peekClientHello(c net.Conn, timeout time.Duration) (*clientHello, error) {
	rc := &recordingConn{Conn: c}
	var hello *clientHello
	cfg := &tls.Config{
		GetConfigForClient: func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
			hello = &clientHello{
				serverName: chi.ServerName,
				ech:        slices.Contains(chi.Extensions, extensionECH),
			}
			return nil, errHelloCaptured
		},
	}
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	err := tls.Server(rc, cfg).Handshake()
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	if hello == nil {
		if err == nil {
			err = errors.New("egress: handshake ended without a client hello")
		}
		return nil, err
	}
	hello.raw = rc.buf.Bytes()
	return hello, nil
}

// recordingConn keeps every byte read and discards every write (the alert
// crypto/tls sends when GetConfigForClient fails must not reach the guest).
type recordingConn struct {
	net.Conn
	buf bytes.Buffer
}

var errHelloTooBig = errors.New("egress: client hello too large")

func (r *recordingConn) Read(b []byte) (int, error) {
	if room := maxHelloBytes - r.buf.Len(); room <= 0 {
		return 0, errHelloTooBig
	} else if len(b) > room {
		b = b[:room]
	}
	n, err := r.Conn.Read(b)
	r.buf.Write(b[:n])
	return n, err
}

func (r *recordingConn) Write(b []byte) (int, error) { return len(b), nil }

// serveTLS handles one connection to the TLS port: allow by SNI; then
// either (TLSPassthrough) connect to the pinned upstream on 443, replay the
// hello and splice, or (TLSInspect) terminate and check the request too.
func (p *Proxy) serveTLS(s *session) {
	ev := s.event(KindTLS)
	deny := func(reason string) {
		ev.Outcome, ev.Reason = OutcomeDenied, reason
		s.emit(ev)
	}

	hello, err := peekClientHello(s.guest, p.cfg.HeaderTimeout)
	switch {
	case err != nil:
		reason := "not_tls"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			reason = "header_timeout"
		}
		deny(reason)
		return
	case hello.serverName == "":
		deny("no_sni")
		return
	case hello.ech:
		// With ECH the real server name is encrypted to the upstream; the
		// SNI we see is only the provider's public name, so allowing it
		// would allow every site behind that provider.
		deny("ech")
		return
	}
	name := normalizeHost(hello.serverName)
	var m match
	pol, ok := s.authorize(func(pol *policy) (grant, bool) {
		var ok bool
		m, ok = pol.matchDomain(name)
		return grant{host: name, operator: p.operatorNamed(name), inspected: pol.inspect}, ok
	})
	if !ok {
		deny("not_allowed")
		return
	}
	ev.Host, ev.Rule = m.label, m.rule
	if pol.inspect {
		p.inspectTLS(s, ev, hello, name, pol.sb.CA)
		return
	}

	up, ap, reason, err := p.dialUpstream(s.ctx, name, 443, p.operatorNamed(name))
	if err != nil {
		ev.Outcome, ev.Reason = OutcomeError, reason
		if reason == "refused_address" {
			ev.Outcome = OutcomeDenied
		}
		p.log.Info("egress tls upstream failed", "sandbox", s.sb.ID, "rule", m.rule, "reason", reason, "err", err)
		s.emit(ev)
		return
	}
	ev.Upstream = ap.String()
	upc := &countedConn{Conn: up, s: s}
	s.hold(upc)
	if !s.pin(ap.Addr()) {
		deny("policy_changed")
		return
	}

	if _, err := upc.Write(hello.raw); err != nil {
		ev.Outcome, ev.Reason = OutcomeError, "upstream_write"
		s.emit(ev)
		return
	}
	ev.Outcome = OutcomeOK
	splice(s, s.guest, upc)
	s.emit(ev)
}

// inspectTLS terminates the guest's TLS for name (already allowed) with a
// certificate from the sandbox's CA, then serves the request inside like
// the HTTP port does, except that it must be for name and goes upstream
// over a new, normally verified TLS connection.
func (p *Proxy) inspectTLS(s *session, ev Event, hello *clientHello, name string, ca *CA) {
	leaf, err := ca.leaf(name)
	if err != nil {
		p.log.Error("egress tls inspection: issue certificate", "sandbox", s.sb.ID, "err", err)
		ev.Outcome, ev.Reason = OutcomeError, "certificate"
		s.emit(ev)
		return
	}
	rc := &replayConn{Conn: s.guest, r: io.MultiReader(bytes.NewReader(hello.raw), s.guest)}
	tc := tls.Server(rc, &tls.Config{
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   []string{"http/1.1"}, // one request per connection, like the HTTP port
		MinVersion:   tls.VersionTLS12,
	})
	_ = s.guest.SetDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	if err := tc.HandshakeContext(s.ctx); err != nil {
		// Most often: the guest does not trust the sandbox CA.
		ev.Outcome, ev.Reason = OutcomeDenied, "tls_handshake"
		s.emit(ev)
		return
	}
	_ = s.guest.SetDeadline(time.Time{})
	p.serveRequest(s, tc, name, ev)
}

// replayConn is the guest connection with the ClientHello the proxy
// already read put back in front, for the proxy's own TLS server.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(b []byte) (int, error) { return c.r.Read(b) }
