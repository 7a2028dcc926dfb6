package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// At its bound the governor closes the longest-idle connection to admit
// a new one, and answers 503 (and closes) when every connection is busy.
func TestConnGovernor(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	gov := newConnGovernor(2)
	srv := &http.Server{ConnState: gov.connState, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-block
		}
	})}
	go srv.Serve(govern(l, gov))
	defer srv.Close()
	addr := l.Addr().String()
	// open sends one request on a new connection and returns the
	// connection and the status line.
	open := func(path string) (net.Conn, string) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		return c, strings.TrimSpace(line)
	}
	idle, st := open("/") // answered, then idle on keep-alive
	if st != "HTTP/1.1 200 OK" {
		t.Fatalf("first: %q", st)
	}
	defer idle.Close()
	waitFor(t, func() bool { gov.mu.Lock(); defer gov.mu.Unlock(); return !gov.conns[firstConn(gov)].IsZero() })
	busy1, st := open("/block")
	if st != "HTTP/1.1 200 OK" {
		t.Fatalf("second: %q", st)
	}
	defer busy1.Close()
	// Full: the idle one is evicted for this one.
	busy2, st := open("/block")
	if st != "HTTP/1.1 200 OK" {
		t.Fatalf("third, evicting the idle one: %q", st)
	}
	defer busy2.Close()
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("the idle connection was not closed")
	}
	// Full of busy ones: refused with 503 at once.
	refused, st := open("/")
	defer refused.Close()
	if st != "HTTP/1.1 503 Service Unavailable" {
		t.Fatalf("fourth, all busy: %q", st)
	}
	if n := gov.open(); n != 2 {
		t.Errorf("%d connections counted, want 2", n)
	}
}

// firstConn is the one connection gov holds (for a test holding one).
func firstConn(gov *connGovernor) net.Conn {
	for c := range gov.conns {
		return c
	}
	return nil
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition never held")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestBusyResponseIsWellFormed(t *testing.T) {
	res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(busyResponse)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || int64(len(body)) != res.ContentLength ||
		!strings.Contains(string(body), `"unavailable"`) {
		t.Fatalf("%d %v %q", res.StatusCode, res.Header, body)
	}
}
