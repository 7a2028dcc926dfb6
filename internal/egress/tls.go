package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
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

// serveTLS handles one connection to the TLS port: allow by SNI, connect
// to the pinned upstream on 443, replay the hello, splice.
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
	m, ok := s.pol.matchDomain(normalizeHost(hello.serverName))
	if !ok {
		deny("not_allowed")
		return
	}
	ev.Host, ev.Rule = m.label, m.rule

	up, ap, reason, err := p.dialUpstream(s.ctx, normalizeHost(hello.serverName), 443, m.exact)
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

	if _, err := upc.Write(hello.raw); err != nil {
		ev.Outcome, ev.Reason = OutcomeError, "upstream_write"
		s.emit(ev)
		return
	}
	ev.Outcome = OutcomeOK
	splice(s, s.guest, upc)
	s.emit(ev)
}
