package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// newTestStore opens a fresh store in a temporary directory and returns it
// with its database path.
func newTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "airlock.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

// rawDB opens a second, independent handle on the database file, with none
// of the store's settings: what someone with write access to the file has.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatalf("open raw handle: %v", err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("exec %q: %v", q, err)
	}
}

// fakeClock is a settable clock for Store.now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func useClock(s *Store, start time.Time) *fakeClock {
	c := &fakeClock{t: start}
	s.now = c.Now
	return c
}

var ctx = context.Background()

// t0 is a fixed, ms-aligned instant for tests.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// is reports whether err carries the given errdefs class.
func is(err, class error) bool { return err != nil && errors.Is(err, class) }
