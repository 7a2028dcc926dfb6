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
