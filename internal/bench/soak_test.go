package bench_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/bench"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// TestSoakLeavesNothing: two clients cycling create, write, exec, read and
// kill for twenty seconds make no error and leave no VMM, run directory
// entry, descriptor or jail cgroup behind. (`airlock bench soak` runs the
// same for longer on demand.)
func TestSoakLeavesNothing(t *testing.T) {
	h := vmtest.Host(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := sandbox.New(vmtest.Context(t), sandbox.Config{Host: h, Templates: vmtest.Registry(t), Store: st,
		// A pool that does not adapt, so what is there after the run is
		// comparable to before it.
		Logger: slog.New(slog.DiscardHandler), WarmPool: 2, WarmPoolMax: 2, MaxSandboxes: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	r, err := bench.Soak(vmtest.Context(t), m, h, bench.SoakOptions{Template: vmtest.TemplateName, Clients: 2, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("soak: %d cycles (%.2f/s), cycle %s, leaked %+v, peak RSS %d MiB", r.Cycles, r.CyclesPerSec, r.Cycle, r.Leaked, r.PeakRSSKiB>>10)
	if r.Errors > 0 {
		t.Errorf("%d errors: %v", r.Errors, r.ErrorSamples)
	}
	if r.Cycles == 0 {
		t.Error("no cycle completed")
	}
	if !r.Leaked.Clean() {
		t.Errorf("leaked %+v (before %+v, after %+v)", r.Leaked, r.Before, r.After)
	}
}
