package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { Main(m) }

// TestDatabasesAreSeparate checks that each test gets its own empty
// database on the shared server, reachable over the socket only.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := Database(t), Database(t)
	if a == b {
		t.Fatalf("two databases share a DSN: %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (n int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("table of one test's database seen in another's: %d, %v", n, err)
	}
	var listen, fsync, version string
	if err := ca.QueryRow(ctx, "SELECT current_setting('listen_addresses'), current_setting('fsync'), current_setting('server_version')").Scan(&listen, &fsync, &version); err != nil {
		t.Fatal(err)
	}
	if listen != "" || fsync != "off" {
		t.Fatalf("listen_addresses %q fsync %q, want '' and off", listen, fsync)
	}
	t.Logf("PostgreSQL %s, started in %s", version, Shared(t).Started)
}

// TestStopStart stops a private server and starts it again: what outage
// tests do.
func TestStopStart(t *testing.T) {
	ctx := context.Background()
	s := Private(t)
	dsn := s.Database(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := pgx.Connect(ctx, dsn); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	c.Close(ctx)
}

// TestFailover kills a primary with a synchronous standby, promotes the
// standby, and rebuilds the old primary as its standby: a committed row
// survives, and a multi-host DSN finds whichever server accepts writes.
func TestFailover(t *testing.T) {
	ctx := context.Background()
	a := Private(t)
	db := a.CreateDatabase(t)
	b := a.NewStandby(t)
	if err := a.RequireSync(); err != nil {
		t.Fatal(err)
	}
	dsn := MultiHostDSN(db, a, b)
	for round, primary := range []*Server{a, b, a} {
		standby := b
		if primary == b {
			standby = a
		}
		if got, err := Primary(a, b); err != nil || got != primary {
			t.Fatalf("round %d: primary %v (%v), want %s", round, got, err, primary.dir)
		}
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS kept (n int)"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "INSERT INTO kept VALUES ($1)", round); err != nil {
			t.Fatalf("round %d: write through the multi-host DSN: %v", round, err)
		}
		c.Close(ctx)
		pidFile, err := os.ReadFile(filepath.Join(primary.dataDir(), "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if err := primary.Kill(); err != nil {
			t.Fatal(err)
		}
		shm, _ := strconv.Atoi(strings.Fields(strings.Split(string(pidFile), "\n")[6])[1])
		if _, err := unix.SysvShmCtl(shm, unix.IPC_STAT, &unix.SysvShmDesc{}); err == nil {
			t.Fatalf("round %d: the killed primary's shared memory segment %d is left", round, shm)
		}
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Close(ctx)
			t.Fatalf("round %d: a read-write connection with the primary dead and the standby not promoted", round)
		}
		if err := standby.Promote(); err != nil {
			t.Fatal(err)
		}
		c, err = pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("round %d: no connection to the promoted standby: %v", round, err)
		}
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil || n != round+1 {
			t.Fatalf("round %d: %d rows kept after the failover (%v), want %d", round, n, err, round+1)
		}
		c.Close(ctx)
		if err := primary.Rebuild(standby); err != nil {
			t.Fatal(err)
		}
		if err := standby.RequireSync(); err != nil {
			t.Fatal(err)
		}
	}
}
