package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// maxHeaderBytes caps an HTTP request's or response's header block.
const maxHeaderBytes = 64 << 10

// hopByHop are the headers that describe one connection, not the message
// (RFC 9110 section 7.6.1), plus Proxy-Authorization, which no upstream
// should see. They are removed in both directions.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// serveHTTP handles one connection to the HTTP port: one request, then the
// connection closes (the response says "Connection: close"). Keep-alive
// would save a round trip per request and is not worth the per-request
// bookkeeping it costs; guests' clients reconnect transparently.
func (p *Proxy) serveHTTP(s *session) {
	p.serveRequest(s, s.guest, "", s.event(KindHTTP))
}

// serveRequest reads one request from c and forwards it. tlsName is empty
// for the HTTP port; for a TLS connection the proxy terminated
// (TLSInspect) it is the SNI the connection was allowed for, c is the
// decrypted stream, and the request must name the same host: a different
// Host is domain fronting and gets 421. ev is the event to complete.
func (p *Proxy) serveRequest(s *session, c net.Conn, tlsName string, ev Event) {
	defer s.linger(c)
	reply := func(code int, outcome, reason, msg string) {
		writeStatus(c, code, msg)
		ev.Status, ev.Outcome, ev.Reason = code, outcome, reason
		s.emit(ev)
	}
	req, head, ok := p.readRequest(s, c, &ev, reply)
	if !ok {
		return
	}
	host, ok := checkRequest(req, head, tlsName, reply)
	if !ok {
		return
	}
	m, rt, ok := authorizeHost(s, host, tlsName)
	if rt != nil {
		ev.Kind, ev.Host, ev.Rule = KindCredential, rt.host, rt.name
		target, ok := joinUpstream(rt.upstream, req.URL)
		if !ok {
			reply(http.StatusBadRequest, OutcomeDenied, "bad_request", "request path must not contain . or .. segments or backslashes")
			return
		}
		inject := func(h http.Header) {
			h.Del(rt.header)
			h[rt.header] = []string{rt.value}
		}
		p.forward(s, c, &ev, req, target, true, inject)
		return
	}
	if !ok {
		// The host is the guest's own string; it goes back to the guest for
		// its debugging and nowhere else.
		reply(http.StatusForbidden, OutcomeDenied, "not_allowed",
			fmt.Sprintf("airlock egress: host %q is not allowed by this sandbox's policy", truncate(host, 253)))
		return
	}
	ev.Host, ev.Rule = m.label, m.rule
	target := &url.URL{Scheme: requestScheme(tlsName), Host: host, Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	if target.Path == "" {
		target.Path = "/"
	}
	p.forward(s, c, &ev, req, target, p.operatorNamed(host), nil)
}

// replyFunc answers the guest with a status and completes the event.
type replyFunc func(code int, outcome, reason, msg string)

// readRequest reads one request's header block under a byte limit and a
// deadline; after it, the body is bounded by the session's idle timeout
// and lifetime only (uploads of large documents to an allowed DMS are
// legitimate). head is the raw header as the guest sent it. When the
// header cannot be read the guest has been answered (or not, for a
// timeout or EOF) and the event emitted, and ok is false.
func (p *Proxy) readRequest(s *session, c net.Conn, ev *Event, reply replyFunc) (req *http.Request, head []byte, ok bool) {
	lr := &io.LimitedReader{R: c, N: maxHeaderBytes}
	rec := &recorder{r: lr}
	br := bufio.NewReader(rec)
	_ = c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	req, err := http.ReadRequest(br)
	head = rec.stop()
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			ev.Outcome, ev.Reason = OutcomeDenied, "header_timeout"
			s.emit(*ev)
		case lr.N <= 0:
			reply(http.StatusRequestHeaderFieldsTooLarge, OutcomeDenied, "bad_request", "request header too large")
		case errors.Is(err, io.EOF):
			ev.Outcome, ev.Reason = OutcomeDenied, "bad_request"
			s.emit(*ev)
		default:
			reply(http.StatusBadRequest, OutcomeDenied, "bad_request", "malformed request")
		}
		return nil, nil, false
	}
	// req.Body is never closed: closing drains it, and an unread body is
	// linger's business (bounded), not an unbounded read.
	_ = c.SetReadDeadline(time.Time{})
	lr.N = math.MaxInt64
	return req, head, true
}

// requestScheme is the scheme of requests on a connection: https when
// the proxy terminated its TLS (tlsName is the allowed SNI), else http.
func requestScheme(tlsName string) string {
	if tlsName != "" {
		return "https"
	}
	return "http"
}

// checkRequest refuses CONNECT, a missing or bad Host, and (under TLS
// inspection) a Host other than the SNI, which is domain fronting. It
// returns the request's host, or answers the guest and returns false.
func checkRequest(req *http.Request, head []byte, tlsName string, reply replyFunc) (string, bool) {
	if req.Method == http.MethodConnect {
		reply(http.StatusMethodNotAllowed, OutcomeDenied, "method", "CONNECT is not supported: use https:// URLs directly, the proxy sees them by name")
		return "", false
	}
	host, code, msg := requestHost(req, head, requestScheme(tlsName))
	if code != 0 {
		reply(code, OutcomeDenied, "bad_request", msg)
		return "", false
	}
	if tlsName != "" && host != tlsName {
		// The guest's string goes back to the guest only.
		reply(http.StatusMisdirectedRequest, OutcomeDenied, "host_mismatch",
			fmt.Sprintf("airlock egress: Host %q differs from the TLS server name %q (domain fronting is refused)", truncate(host, 253), tlsName))
		return "", false
	}
	return host, true
}

// authorizeHost decides a request's host under the session's policy and
// records the grant: a credential route (plain HTTP only; rt is set), or
// a domain rule (m). Under TLS inspection a policy that switched to
// passthrough allows nothing on this connection.
func authorizeHost(s *session, host, tlsName string) (m match, rt *route, ok bool) {
	_, ok = s.authorize(func(pol *policy) (grant, bool) {
		if tlsName == "" {
			if rt = pol.routes[host]; rt != nil {
				return grant{host: host, route: rt, operator: true}, true
			}
		}
		var ok bool
		m, ok = pol.matchDomain(host)
		if tlsName != "" && !pol.inspect {
			ok = false // the policy changed to passthrough under this connection
		}
		return grant{host: host, operator: s.p.operatorNamed(host), inspected: tlsName != ""}, ok
	})
	return m, rt, ok
}

// recorder keeps a copy of what is read through it until stop: the raw
// request header (plus whatever body bytes bufio read ahead), bounded by the
// header limit beneath it.
type recorder struct {
	r       io.Reader
	buf     []byte
	stopped bool
}

func (r *recorder) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if !r.stopped {
		r.buf = append(r.buf, b[:n]...)
	}
	return n, err
}

func (r *recorder) stop() []byte {
	r.stopped = true
	return r.buf
}

// rawHostHeader returns the Host header of a raw HTTP/1 request header
// ("" if absent).
func rawHostHeader(head []byte) (string, error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return "", err
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return "", err
	}
	return h.Get("Host"), nil
}

// linger half-closes the guest connection and drains what the guest is
// still sending, briefly, before the session closes it: closing a socket
// with unread data sends a reset, which can destroy the response (say, a
// 431 for an oversized header) before the guest has read it. net/http's
// server does the same. c is the stream requests were read from: the
// guest connection, or the proxy's TLS server over it.
func (s *session) linger(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		_ = tc.CloseWrite() // close_notify; the TCP half-close follows
	}
	if s.guest.CloseWrite() != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, _ = io.CopyN(io.Discard, c, 256<<10)
}

// requestHost returns the normalized host a request is for, or an HTTP
// status and message when the request is unacceptable. An absolute-form
// request URI ("GET http://h/ HTTP/1.1", proxy style) must agree with the
// Host header, so that the proxy's check and an upstream's virtual hosting
// can never see different names. http.ReadRequest drops the Host header
// in that case, so it is read again from head, the raw request header.
// scheme is "http" on the HTTP port (port 80 only) and "https" inside a
// terminated TLS connection (port 443 only).
func requestHost(req *http.Request, head []byte, scheme string) (string, int, string) {
	defPort := ":80"
	if scheme == "https" {
		defPort = ":443"
	}
	stripPort := func(h string) string { return strings.TrimSuffix(h, defPort) }
	if req.URL.Opaque != "" {
		return "", http.StatusBadRequest, "malformed request URI"
	}
	h := req.Host
	if req.URL.Scheme != "" || req.URL.Host != "" {
		hostHdr, err := rawHostHeader(head)
		if err != nil {
			return "", http.StatusBadRequest, "malformed request"
		}
		if req.URL.Scheme != scheme {
			return "", http.StatusBadRequest, "only " + scheme + ":// request URIs are accepted on this port"
		}
		if req.URL.User != nil {
			return "", http.StatusBadRequest, "user info in the request URI is not accepted"
		}
		if hostHdr != "" && !strings.EqualFold(stripPort(hostHdr), stripPort(req.URL.Host)) {
			return "", http.StatusBadRequest, "Host header and request URI name different hosts"
		}
		h = req.URL.Host
	}
	if h == "" {
		return "", http.StatusBadRequest, "missing Host header"
	}
	name, port := h, ""
	if strings.LastIndexByte(h, ':') > strings.LastIndexByte(h, ']') {
		var err error
		if name, port, err = net.SplitHostPort(h); err != nil {
			return "", http.StatusBadRequest, "malformed Host"
		}
	}
	if port != "" && ":"+port != defPort {
		if scheme == "https" {
			return "", http.StatusBadRequest, "only port 443 is proxied over TLS"
		}
		return "", http.StatusBadRequest, "only port 80 is proxied on this port (use https:// for 443)"
	}
	return normalizeHost(name), 0, ""
}

// joinUpstream appends the guest's request path to a route's upstream path.
// Dot segments are refused rather than cleaned: cleaning "/../admin" would
// step out of the route's path prefix.
func joinUpstream(up *url.URL, in *url.URL) (*url.URL, bool) {
	p := in.Path
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, '\\') {
		return nil, false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return nil, false
		}
	}
	u := *up
	u.Path = up.Path + p
	u.RawPath = ""
	if in.RawPath != "" {
		u.RawPath = up.EscapedPath() + in.EscapedPath()
	}
	u.RawQuery = in.RawQuery
	return &u, true
}

// forward sends req to target over a connection to a checked, pinned
// address, and streams the response back to the guest. inject, when set,
// adds the route's credential.
func (p *Proxy) forward(s *session, c net.Conn, ev *Event, req *http.Request, target *url.URL, operator bool, inject func(http.Header)) {
	reply := func(code int, outcome, reason, msg string) {
		writeStatus(c, code, msg)
		ev.Status, ev.Outcome, ev.Reason = code, outcome, reason
		s.emit(*ev)
	}
	upc, ok := p.connectUpstream(s, ev, target, operator, reply)
	if !ok {
		return
	}
	var dialed atomic.Bool
	tr := &http.Transport{
		Proxy: nil, // never an environment proxy
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if dialed.Swap(true) {
				return nil, errors.New("egress: one upstream connection per request")
			}
			return upc, nil
		},
		TLSClientConfig:        upstreamTLS(p.cfg.UpstreamTLS, target.Hostname()),
		TLSHandshakeTimeout:    p.cfg.HeaderTimeout,
		DisableKeepAlives:      true,
		DisableCompression:     true, // pass Accept-Encoding and bodies through untouched
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(upstreamRequest(s.ctx, c, req, target, inject))
	if err != nil {
		p.log.Info("egress http upstream error", "sandbox", s.sb.ID, "rule", ev.Rule, "err", err)
		code, reason := http.StatusBadGateway, "upstream_error"
		if r := s.killReason(); r != "" {
			code, reason = http.StatusGatewayTimeout, r
		}
		reply(code, OutcomeError, reason, "airlock egress: upstream request failed")
		return
	}
	defer resp.Body.Close()
	removeHopByHop(resp.Header)
	resp.Close = true
	ev.Status = resp.StatusCode
	ev.Outcome = OutcomeOK
	if err := resp.Write(c); err != nil {
		ev.Outcome, ev.Reason = OutcomeError, "response_copy"
		if r := s.killReason(); r != "" {
			ev.Reason = r // closed on purpose: a policy change, a timeout, the sandbox's end
		}
	}
	s.emit(*ev)
}

// connectUpstream dials target's host at an address the proxy checked
// (see upstreamAllowed; operator: the operator chose target's address),
// holds the connection in the
// session and pins its address to the session's grant. On failure the
// guest has been answered and ok is false.
func (p *Proxy) connectUpstream(s *session, ev *Event, target *url.URL, operator bool, reply replyFunc) (_ net.Conn, ok bool) {
	port := uint16(80)
	if target.Scheme == "https" {
		port = 443
	}
	if ps := target.Port(); ps != "" {
		port, _ = parsePort(ps) // validated by compile
	}
	up, ap, reason, err := p.dialUpstream(s.ctx, normalizeHost(target.Hostname()), port, operator)
	if err != nil {
		p.log.Info("egress http upstream failed", "sandbox", s.sb.ID, "rule", ev.Rule, "reason", reason, "err", err)
		if reason == "refused_address" {
			reply(http.StatusForbidden, OutcomeDenied, reason, "airlock egress: the allowed host resolves to an address the proxy does not connect to")
		} else {
			reply(http.StatusBadGateway, OutcomeError, reason, "airlock egress: cannot reach upstream")
		}
		return nil, false
	}
	ev.Upstream = ap.String()
	upc := &countedConn{Conn: up, s: s}
	s.hold(upc)
	if !s.pin(ap.Addr()) {
		up.Close()
		reply(http.StatusForbidden, OutcomeDenied, "policy_changed", "airlock egress: the sandbox's policy changed")
		return nil, false
	}
	return upc, true
}

// upstreamRequest is the guest's request as it goes upstream: hop-by-hop
// headers dropped, the credential injected (inject, for routes), the body
// streamed as is. An "Expect: 100-continue" is answered to the guest (c)
// here, since the upstream sees the body at once.
func upstreamRequest(ctx context.Context, c net.Conn, req *http.Request, target *url.URL, inject func(http.Header)) *http.Request {
	h := req.Header.Clone()
	removeHopByHop(h)
	h.Del("Host")
	if inject != nil {
		inject(h)
	}
	if strings.EqualFold(h.Get("Expect"), "100-continue") {
		// The upstream sees the body at once; tell the guest to send it.
		h.Del("Expect")
		if req.ContentLength != 0 {
			_, _ = io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		}
	}
	hostHdr := target.Host
	if inject == nil {
		hostHdr = target.Hostname() // as the guest sent it, normalized, without :80
	}
	out := (&http.Request{
		Method:        req.Method,
		URL:           target,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(req.Body), // the transport's Close must not drain it
		ContentLength: req.ContentLength,
		Host:          hostHdr,
		Close:         true,
	}).WithContext(ctx)
	if req.ContentLength == 0 {
		out.Body = nil
	}
	return out
}

func upstreamTLS(base *tls.Config, serverName string) *tls.Config {
	var c *tls.Config
	if base != nil {
		c = base.Clone()
	} else {
		c = &tls.Config{}
	}
	c.ServerName = serverName
	c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
	c.NextProtos = nil // HTTP/1.1 only: the transport is built for one request
	return c
}

// removeHopByHop deletes hop-by-hop headers, including any that the
// Connection header names.
func removeHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for k := range hopByHop {
		h.Del(k)
	}
}

// writeStatus writes a complete short plain-text response. The proxy's own
// responses never carry anything but msg.
func writeStatus(w io.Writer, code int, msg string) {
	body := msg + "\n"
	_, _ = fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func canonicalHeader(s string) string { return textproto.CanonicalMIMEHeaderKey(s) }

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue refuses control characters (CR and LF above all: a value
// must not be able to add a header of its own).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
