package api

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// connGovernor keeps the connections the daemon holds within a bound, so
// that client connections can never take the descriptors its sandboxes
// need (QMP and serial sockets, taps, memory files) and Accept never
// fails with EMFILE. At the bound a new connection first evicts the
// connection that has been idle (between keep-alive requests) the
// longest; if none is idle it is answered 503 with Retry-After and
// closed at once. Per-tenant admission (Admission) keeps any one tenant
// from holding many active connections, so the bound is only reached
// when the daemon really is that busy.
type connGovernor struct {
	net.Listener
	max int // immutable

	mu    sync.Mutex
	conns map[net.Conn]time.Time // guarded by mu; open connections -> when they went idle (zero: not idle)
}

// govern puts l under g.
func govern(l net.Listener, g *connGovernor) net.Listener {
	return &governedListener{Listener: l, g: g}
}

// newConnGovernor bounds connections at max (<= 0: DefaultMaxConnections).
func newConnGovernor(max int) *connGovernor {
	if max <= 0 {
		max = DefaultMaxConnections()
	}
	return &connGovernor{max: max, conns: map[net.Conn]time.Time{}}
}

// DefaultMaxConnections is half this process's descriptor limit, at least
// 64: the other half is for sandboxes and files.
func DefaultMaxConnections() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 1024
	}
	return max(64, int(min(rl.Cur/2, 1<<20)))
}

// governedListener is one listener under a shared governor.
type governedListener struct {
	net.Listener
	g *connGovernor
}

// Accept returns the next connection the governor admits.
func (l *governedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.g.admit(c) {
			return c, nil
		}
		refuseConn(c)
	}
}

// admit counts c, evicting the longest-idle connection when full; false
// when every connection is busy.
func (g *connGovernor) admit(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns) >= g.max {
		var oldest net.Conn
		var since time.Time
		for oc, idle := range g.conns {
			if !idle.IsZero() && (oldest == nil || idle.Before(since)) {
				oldest, since = oc, idle
			}
		}
		if oldest == nil {
			return false
		}
		// Closing it makes the server report StateClosed, which removes
		// it; it is dropped here already so the count is right at once.
		delete(g.conns, oldest)
		oldest.Close()
	}
	g.conns[c] = time.Time{}
	return true
}

// connState is the http.Server's ConnState hook.
func (g *connGovernor) connState(c net.Conn, st http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.conns[c]; !ok {
		return
	}
	switch st {
	case http.StateIdle:
		g.conns[c] = time.Now()
	case http.StateActive:
		g.conns[c] = time.Time{}
	case http.StateClosed, http.StateHijacked:
		delete(g.conns, c)
	}
}

// open is how many connections are counted now.
func (g *connGovernor) open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// busyResponse is what a connection refused for lack of room reads.
var busyResponse = func() string {
	body := `{"error":{"code":"unavailable","message":"the daemon holds its maximum of connections; retry"}}` + "\n"
	return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// refuseConn answers a connection that was not admitted and closes it,
// without waiting on a client that does not read.
func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write([]byte(busyResponse))
	c.Close()
}
