package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
)

func TestMain(m *testing.M) { clustertest.Main(m) }

var ctx = context.Background()

// open returns a store on a new database of the package's server.
func open(t testing.TB, o Options) (*Store, string) {
	t.Helper()
	dsn := clustertest.Database(t)
	s, err := Open(ctx, dsn, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(s.Close)
	return s, dsn
}

// testLease is the lease timing of tests that watch leases end: TTL 3 s,
// grace 1 s, heartbeat and sweep every 0.5 s.
func testLease() lease.Config {
	return lease.Config{Heartbeat: 500 * time.Millisecond, TTL: 3 * time.Second, Grace: time.Second,
		SweepInterval: 500 * time.Millisecond, FenceAfter: 0}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// exec runs SQL on the store's pool, for tests that set rows up directly.
func (s *Store) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}
