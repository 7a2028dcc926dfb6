package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/sandbox"
)

// A pool that creates drain grows (one clone more per create that found
// it empty, up to WarmPoolMax), refills to its new size, and shrinks back
// to WarmPool once creates stop finding it empty.
func TestLifecycleWarmPoolAdapts(t *testing.T) {
	defer sandbox.SetGrowDecay(1500 * time.Millisecond)()
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{WarmPool: 1, WarmPoolMax: 3, MaxSandboxes: 32})
	if err := m.Prewarm(context.Background(), "base"); err != nil {
		t.Fatal(err)
	}
	if ready, target := m.WarmPoolState("base"); ready != 1 || target != 1 {
		t.Fatalf("prewarmed pool: %d ready of %d, want 1 of 1", ready, target)
	}
	// A burst: more creates at once than the pool holds.
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() { defer wg.Done(); lcCreate(t, m, sandbox.CreateRequest{}) }()
	}
	wg.Wait()
	_, grown := m.WarmPoolState("base")
	if grown < 2 || grown > 3 {
		t.Fatalf("after a burst of 6 creates the pool keeps %d ready, want 2..3 (max 3)", grown)
	}
	waitPool(t, m, func(ready, _ int) bool { return ready >= 2 }, "refilled beyond its base size")
	// No more misses: it gives clones back down to WarmPool.
	waitPool(t, m, func(ready, target int) bool { return ready == 1 && target == 1 }, "shrunk back to 1")
}

func waitPool(t *testing.T, m *sandbox.Manager, ok func(ready, target int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready, target := m.WarmPoolState("base")
		if ok(ready, target) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool never %s: %d ready of %d", what, ready, target)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPrewarmForRestoresOnlyWhatIsUsed: a batch in this process that will
// make n sandboxes waits for at most n ready clones, and the pool never
// restores more than n in all, however large it is configured, so none is
// restored only to be destroyed at exit. Creates beyond n still work.
func TestPrewarmForRestoresOnlyWhatIsUsed(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pool, uses    int
		wantReady     int
		createsBeyond int
	}{
		{"one document, pool of five", 5, 1, 1, 0},
		{"more documents than the pool", 2, 6, 2, 0},
		{"creates beyond the batch", 3, 2, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLCEnv(t)
			m := e.manager(t, sandbox.Config{WarmPool: tc.pool, MaxSandboxes: 32})
			if err := m.PrewarmFor(context.Background(), "base", tc.uses); err != nil {
				t.Fatal(err)
			}
			if ready, _ := m.WarmPoolState("base"); ready != tc.wantReady {
				t.Fatalf("prewarmed for %d: %d ready, want %d", tc.uses, ready, tc.wantReady)
			}
			for range tc.uses + tc.createsBeyond {
				lcCreate(t, m, sandbox.CreateRequest{})
			}
			// Give a filler that would overspend the time to do it.
			time.Sleep(300 * time.Millisecond)
			if got, want := e.layer.Restores(), tc.uses+tc.createsBeyond; got != want {
				t.Fatalf("%d restores for %d creates (prewarmed for %d), want %d", got, tc.uses+tc.createsBeyond, tc.uses, want)
			}
			if ready, _ := m.WarmPoolState("base"); ready != 0 {
				t.Fatalf("%d clones left ready after the batch's creates, want 0", ready)
			}
		})
	}
}

// A filler whose warm-ups keep failing (a host that cannot start VMs for
// a while) waits longer after each failure, up to 30 s, instead of
// retrying several times a second.
func TestWarmPoolBacksOffAfterFailures(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		5: 16 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		if got := sandbox.FailurePause(n); got != want {
			t.Errorf("pause after %d failures: %v, want %v", n, got, want)
		}
	}
}
