//go:build linux

package agent

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// simPort models a virtio-serial port as the guest driver presents it to
// the agent, so the agent's real listener and a real gRPC server can be
// driven through the host situations that matter:
//   - host->guest bytes wait in a buffer until the guest reads them, and
//     are dropped when the guest closes the port (discard_port_data);
//   - a read with nothing buffered returns EOF while no host is connected
//     and blocks otherwise;
//   - guest writes reach the connected host, or are dropped.
//
// swapHost replaces the host without the guest ever seeing it gone: what
// happens when a restarted daemon connects before the guest has run since
// the old one died.
type simPort struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte   // guarded by mu; host bytes not yet read by the guest
	host net.Conn // guarded by mu; the port's end of the current host's pipe, nil when none
	open *simFile // guarded by mu; the guest's open file, nil when closed
}

func newSimPort() *simPort {
	p := &simPort{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// connect attaches a new host and returns its end (like dialing QEMU's
// chardev socket). The previous host, if any, is dropped silently.
func (p *simPort) connect() net.Conn {
	hostEnd, portEnd := net.Pipe()
	p.mu.Lock()
	old := p.host
	p.host = portEnd
	p.mu.Unlock()
	if old != nil {
		old.Close()
	}
	go p.pump(portEnd)
	return hostEnd
}

// pump moves one host's bytes into the guest buffer until that host goes.
func (p *simPort) pump(portEnd net.Conn) {
	b := make([]byte, 32<<10)
	for {
		n, err := portEnd.Read(b)
		p.mu.Lock()
		current := p.host == portEnd
		if current && p.open != nil && n > 0 {
			p.buf = append(p.buf, b[:n]...)
		}
		if err != nil && current {
			p.host = nil // a real disconnect: the guest will read EOF
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *simPort) openFile() (io.ReadWriteCloser, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := &simFile{p: p}
	p.open = f
	return f, nil
}

type simFile struct {
	p      *simPort
	closed bool // guarded by p.mu
}

func (f *simFile) Read(b []byte) (int, error) {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 {
		switch {
		case f.closed:
			return 0, net.ErrClosed
		case p.host == nil:
			return 0, io.EOF
		}
		p.cond.Wait()
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

func (f *simFile) Write(b []byte) (int, error) {
	p := f.p
	p.mu.Lock()
	h, closed := p.host, f.closed
	p.mu.Unlock()
	if closed {
		return 0, net.ErrClosed
	}
	if h != nil {
		h.Write(b) // an error means the host went: the bytes are lost, as on a real port
	}
	return len(b), nil
}

func (f *simFile) Close() error {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !f.closed {
		f.closed = true
		if p.open == f {
			p.open = nil
			p.buf = nil // unread host data dies with the open file
		}
		p.cond.Broadcast()
	}
	return nil
}

// healthOnly is the smallest agent service: enough to prove a session.
type healthOnly struct {
	agentpb.UnimplementedAgentServer
}

func (healthOnly) Health(context.Context, *agentpb.HealthRequest) (*agentpb.HealthResponse, error) {
	return &agentpb.HealthResponse{AgentVersion: "sim"}, nil
}

func serveSim(t *testing.T, p *simPort) { serveSimWith(t, p, nil) }

// serveSimWith serves the model port through a listener that setup (if
// not nil) may configure first.
func serveSimWith(t *testing.T, p *simPort, setup func(*portListener)) {
	t.Helper()
	gs := grpc.NewServer(grpc.ConnectionTimeout(time.Hour))
	agentpb.RegisterAgentServer(gs, healthOnly{})
	l := newPortListenerFunc("sim", p.openFile)
	if setup != nil {
		setup(l)
	}
	go gs.Serve(l)
	t.Cleanup(func() { l.Close(); gs.Stop() })
}

func dialReady(ctx context.Context, first net.Conn, adopting bool) (*guest.Client, error) {
	c, err := guest.Dial(ctx, "sim", guest.DialOptions{First: first, Adopting: adopting})
	if err != nil {
		return nil, err
	}
	if err := c.Ready(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// staleSession leaves the agent inside an HTTP/2 session from a host that
// then vanishes without the guest noticing. midFrame leaves the server
// part-way through a DATA frame's payload (a daemon killed mid-upload),
// the worst case: it swallows the next 16 KB the port carries.
func staleSession(t *testing.T, p *simPort, midFrame bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	old := p.connect()
	if _, err := dialReady(ctx, old, false); err != nil {
		t.Fatalf("first host: %v", err)
	}
	if midFrame {
		// A second, raw session whose last frame is cut short.
		raw := p.connect()
		if err := guest.HostSync(raw, time.Now().Add(10*time.Second), guest.SyncOptions{}); err != nil {
			t.Fatalf("raw host sync: %v", err)
		}
		go io.Copy(io.Discard, raw) // the server's SETTINGS and acks
		frame := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
		frame = append(frame, 0, 0, 0, 0x4, 0, 0, 0, 0, 0) // empty SETTINGS
		hdr := make([]byte, 9)
		binary.BigEndian.PutUint32(hdr, 16000<<8) // length 16000, type DATA
		hdr[4] = 0
		binary.BigEndian.PutUint32(hdr[5:], 1) // stream 1
		frame = append(append(frame, hdr...), make([]byte, 100)...)
		if _, err := raw.Write(frame); err != nil {
			t.Fatalf("raw frame: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // let the server take the partial frame
	}
}

// TestAdoptAfterSilentHostSwap is the daemon restart that beat the old
// handshake: the new host connects while the guest still serves the old
// session. The sync must end that session and connect within a bounded
// time, not wait out a dial timeout.
func TestAdoptAfterSilentHostSwap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		midFrame bool
	}{{"idle session", false}, {"mid-frame session", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSimPort()
			serveSim(t, p)
			staleSession(t, p, tc.midFrame)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			began := time.Now()
			c, err := dialReady(ctx, p.connect(), true)
			if err != nil {
				t.Fatalf("adopting host: %v", err)
			}
			defer c.Close()
			t.Logf("adopted in %s", time.Since(began).Round(time.Millisecond))
			if _, err := c.Health(ctx); err != nil {
				t.Fatalf("health after adoption: %v", err)
			}
		})
	}
}

// TestStaleSessionSwallowsPlainSync shows why adoption flushes: without
// it, a session cut mid-frame eats every resent token.
func TestStaleSessionSwallowsPlainSync(t *testing.T) {
	p := newSimPort()
	serveSim(t, p)
	staleSession(t, p, true)
	conn := p.connect()
	defer conn.Close()
	err := guest.HostSync(conn, time.Now().Add(3*time.Second), guest.SyncOptions{})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("plain sync against a stale mid-frame session: %v, want a timeout", err)
	}
}

// TestTokenEndsIdleStaleSession backs Quiesce's quick resends: against a
// stale session at a frame boundary (a host that dropped its own idle
// session), the token alone ends it, with no flush ever sent, and a
// quick resend reaches the reopened port. A session cut mid-frame still
// needs the flush, which quick resends reach once they slow down.
func TestTokenEndsIdleStaleSession(t *testing.T) {
	for _, tc := range []struct {
		name     string
		midFrame bool
		opts     guest.SyncOptions
	}{
		{"idle, token only", false, guest.SyncOptions{FirstResend: 10 * time.Millisecond}},
		{"mid-frame, flush later", true, guest.SyncOptions{ResetStale: true, FirstResend: 10 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSimPort()
			serveSim(t, p)
			staleSession(t, p, tc.midFrame)
			conn := p.connect()
			defer conn.Close()
			began := time.Now()
			if err := guest.HostSync(conn, time.Now().Add(10*time.Second), tc.opts); err != nil {
				t.Fatalf("sync against a stale session: %v", err)
			}
			t.Logf("synced in %s", time.Since(began).Round(time.Millisecond))
		})
	}
}
