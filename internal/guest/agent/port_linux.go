//go:build linux

package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
)

// PortName is the virtio-serial port name the host gives the agent's channel.
const PortName = "org.airlock.agent"

// FindPort returns the /dev node of the virtio-serial port with the given
// name, waiting up to timeout for the driver to create it (there is no udev
// in the guest, so /dev/virtio-ports/NAME links do not exist).
func FindPort(name string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		matches, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err == nil && strings.TrimSpace(string(b)) == name {
				dev := "/dev/" + filepath.Base(filepath.Dir(m))
				if _, err := os.Stat(dev); err == nil {
					return dev, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("virtio-serial port %q did not appear within %s", name, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// portListener turns the one serial port into a net.Listener that yields
// one connection at a time: Accept waits for the previous connection to be
// closed, reopens the port, answers sync tokens, and returns a connection
// only when the first byte of a gRPC session arrives. See package guest for
// why sessions start lazily.
type portListener struct {
	open func() (io.ReadWriteCloser, error) // opens the port afresh; immutable
	addr portAddr                           // immutable
	// onSession, if set, is called as each session is handed out, and
	// beforeSync before each sync token is echoed (both immutable): the
	// prewarm's start, and the wait that keeps one out of a snapshot.
	onSession, beforeSync func()

	mu     sync.Mutex
	prev   *portConn     // guarded by mu; the connection handed out last
	closed chan struct{} // closed by Close
	once   sync.Once
}

// newPortListener serves the virtio-serial device at path.
func newPortListener(path string) *portListener {
	return newPortListenerFunc(portAddr(path), func() (io.ReadWriteCloser, error) {
		return os.OpenFile(path, os.O_RDWR, 0)
	})
}

// newPortListenerFunc serves whatever open returns: tests give it a model
// of the port.
func newPortListenerFunc(addr portAddr, open func() (io.ReadWriteCloser, error)) *portListener {
	return &portListener{open: open, addr: addr, closed: make(chan struct{})}
}

func (l *portListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	prev := l.prev
	l.mu.Unlock()
	if prev != nil {
		select {
		case <-prev.done:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	for {
		select {
		case <-l.closed:
			return nil, net.ErrClosed
		default:
		}
		c, err := l.openSession()
		if err != nil {
			// The host is absent (EOF) or the port misbehaved; back off
			// briefly and reopen. Never give up: the host comes back.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		l.prev = c
		l.mu.Unlock()
		if l.onSession != nil {
			l.onSession()
		}
		return c, nil
	}
}

// openSession opens the port and reads until a gRPC session starts,
// echoing any sync tokens on the way.
func (l *portListener) openSession() (*portConn, error) {
	f, err := l.open()
	if err != nil {
		return nil, err
	}
	first := make([]byte, 1)
	absent := 0
	for {
		n, err := f.Read(first)
		if n == 0 && (err == nil || err == io.EOF) {
			// No host is connected: the driver answers EOF at once and
			// offers nothing to wait on until one connects, so poll, with a
			// backoff. Reopening in a tight loop instead made every guest
			// orphaned by a dead daemon spin, and sixteen of them starved
			// the restarting daemon of CPU.
			absent++
			select {
			case <-l.closed:
				f.Close()
				return nil, net.ErrClosed
			case <-time.After(hostAbsentBackoff(absent)):
			}
			continue
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		absent = 0
		if !guest.IsSyncStart(first[0]) {
			return &portConn{f: f, addr: l.addr, pending: first[0], hasPending: true, done: make(chan struct{})}, nil
		}
		token := make([]byte, guest.SyncTokenLen)
		token[0] = first[0]
		if _, err := io.ReadFull(f, token[1:]); err != nil {
			f.Close()
			return nil, err
		}
		if l.beforeSync != nil {
			l.beforeSync()
		}
		if _, err := f.Write(token); err != nil {
			f.Close()
			return nil, err
		}
	}
}

// hostAbsentBackoff is the wait before the n-th re-read of a port with no
// host: 5 ms doubling to 50 ms, which bounds both the idle cost of an
// orphaned guest and the delay a returning host sees.
func hostAbsentBackoff(n int) time.Duration {
	d := 5 * time.Millisecond << min(n-1, 4)
	return min(d, 50*time.Millisecond)
}

func (l *portListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *portListener) Addr() net.Addr { return l.addr }

type portAddr string

func (a portAddr) Network() string { return "virtio-serial" }
func (a portAddr) String() string  { return string(a) }

// portConn is one gRPC session on the port. Deadlines are accepted and
// ignored: the host enforces every deadline, and a serial port has no
// peer to time out.
type portConn struct {
	f          io.ReadWriteCloser
	addr       portAddr
	mu         sync.Mutex // guards pending/hasPending against concurrent Read
	pending    byte
	hasPending bool
	done       chan struct{}
	closeOnce  sync.Once
}

func (c *portConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	if c.hasPending {
		c.hasPending = false
		b[0] = c.pending
		c.mu.Unlock()
		return 1, nil
	}
	c.mu.Unlock()
	n, err := c.f.Read(b)
	if n == 0 && err == nil {
		err = io.EOF // host disconnected
	}
	return n, err
}

func (c *portConn) Write(b []byte) (int, error) { return c.f.Write(b) }

func (c *portConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = c.f.Close()
		close(c.done)
	})
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}

func (c *portConn) LocalAddr() net.Addr              { return c.addr }
func (c *portConn) RemoteAddr() net.Addr             { return portAddr("host") }
func (c *portConn) SetDeadline(time.Time) error      { return nil }
func (c *portConn) SetReadDeadline(time.Time) error  { return nil }
func (c *portConn) SetWriteDeadline(time.Time) error { return nil }
