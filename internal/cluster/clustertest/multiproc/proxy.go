package multiproc

import (
	"io"
	"net"
	"sync"
)

// Mode is what a FaultProxy does with traffic.
type Mode int

const (
	// Pass forwards both ways.
	Pass Mode = iota
	// Hang accepts connections and holds them, forwarding nothing either
	// way (a partition that drops packets: callers wait for timeouts).
	Hang
	// Reset closes every connection with a TCP reset, open ones included
	// (a partition that refuses: callers fail at once).
	Reset
)

// FaultProxy is a loopback TCP proxy to one target whose Mode a test sets
// at any time. Tests put one between two processes of a cluster (an API
// process and a node, either way) to partition them.
type FaultProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	mode    Mode                  // guarded by mu
	changed chan struct{}         // guarded by mu; closed and replaced when mode changes
	conns   map[net.Conn]struct{} // guarded by mu; both ends of every open pair
	closed  bool                  // guarded by mu
}

// NewFaultProxy listens on a free loopback port and forwards to target.
func NewFaultProxy(target string) (*FaultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{ln: ln, target: target, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// Set changes the mode; Reset also resets every open connection.
func (p *FaultProxy) Set(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	if m == Reset {
		for c := range p.conns {
			resetConn(c)
		}
		p.conns = map[net.Conn]struct{}{}
	}
}

// Close stops the proxy and closes every connection.
func (p *FaultProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// wait blocks while the mode is Hang and returns the mode after it.
func (p *FaultProxy) wait() Mode {
	for {
		p.mu.Lock()
		m, ch, closed := p.mode, p.changed, p.closed
		p.mu.Unlock()
		if closed {
			return Reset
		}
		if m != Hang {
			return m
		}
		<-ch
	}
}

func (p *FaultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *FaultProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *FaultProxy) serve(c net.Conn) {
	if !p.track(c) || p.wait() == Reset {
		resetConn(c)
		return
	}
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		resetConn(c)
		return
	}
	if !p.track(u) {
		resetConn(c)
		resetConn(u)
		return
	}
	go p.pipe(u, c)
	p.pipe(c, u)
}

// pipe copies src to dst in chunks, holding each chunk while the mode is
// Hang; on Reset or an error both ends are reset.
func (p *FaultProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.wait() == Reset {
				resetConn(dst)
				resetConn(src)
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				resetConn(src)
				return
			}
		}
		if err == io.EOF {
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite() // half-close: the other way goes on
			}
			return
		}
		if err != nil {
			resetConn(dst)
			return
		}
	}
}
