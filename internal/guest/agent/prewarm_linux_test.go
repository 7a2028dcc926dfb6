//go:build linux

package agent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
)

// TestPrewarmerRunsOneAtATime: a start while a run is in flight is a
// no-op, a start after it ended runs again, and wait returns only once
// nothing is in flight.
func TestPrewarmerRunsOneAtATime(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	pw := &prewarmer{run: func() { runs.Add(1); <-release }}
	pw.wait() // nothing started: must not block

	pw.start()
	pw.start()
	waited := make(chan struct{})
	go func() { pw.wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("wait returned while a run was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-waited
	if n := runs.Load(); n != 1 {
		t.Fatalf("two starts during one run ran %d times, want 1", n)
	}
	pw.start()
	pw.wait()
	if n := runs.Load(); n != 2 {
		t.Fatalf("a start after the run ended: %d runs, want 2", n)
	}
}

// TestPrewarmWiredToSessions drives the agent's real listener and a real
// gRPC server over the model port with the prewarm hooks ServePort
// installs: every session starts a prewarm, and a sync token is echoed
// only once no prewarm is in flight, so a host that syncs before a
// snapshot (Quiesce) never saves one running.
func TestPrewarmWiredToSessions(t *testing.T) {
	var runs atomic.Int32
	var released atomic.Bool
	release := make(chan struct{})
	pw := &prewarmer{run: func() {
		if runs.Add(1) == 1 {
			<-release
			released.Store(true)
		}
	}}
	p := newSimPort()
	serveSimWith(t, p, func(l *portListener) { l.onSession, l.beforeSync = pw.start, pw.wait })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := dialReady(ctx, p.connect(), false)
	if err != nil {
		t.Fatalf("first session: %v", err)
	}
	if _, err := c.Health(ctx); err != nil {
		t.Fatalf("health while the prewarm runs: %v", err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("one session started %d prewarms, want 1", n)
	}

	// Quiesce's sync: it must not be answered while the first prewarm
	// is still blocked.
	c.Close()
	conn := p.connect()
	defer conn.Close()
	synced := make(chan error, 1)
	go func() {
		synced <- guest.HostSync(conn, time.Now().Add(20*time.Second),
			guest.SyncOptions{ResetStale: true, FirstResend: 10 * time.Millisecond})
	}()
	time.Sleep(200 * time.Millisecond)
	close(release)
	if err := <-synced; err != nil {
		t.Fatalf("sync after the prewarm ended: %v", err)
	}
	if !released.Load() {
		t.Fatal("a sync token was echoed while a prewarm was in flight")
	}

	// The next session prewarms again.
	conn.Close()
	c2, err := dialReady(ctx, p.connect(), true)
	if err != nil {
		t.Fatalf("second session: %v", err)
	}
	defer c2.Close()
	pw.wait()
	if n := runs.Load(); n != 2 {
		t.Fatalf("two sessions started %d prewarms, want 2", n)
	}
}
