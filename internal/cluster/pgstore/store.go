package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Options configures a Store. The zero value takes the defaults.
type Options struct {
	// Lease is the lease timing; zero means lease.Defaults().
	Lease lease.Config
	// MaxConns bounds the connection pool; 0 means 16.
	MaxConns int32
}

// Store is the shared state database. Create it with Open; it is safe for
// concurrent use.
type Store struct {
	// pool is the connection pool; immutable after Open, closed by Close.
	pool *pgxpool.Pool
	// lease is the lease timing every node decision uses; validated,
	// immutable after Open.
	lease lease.Config
}

// maxTxAttempts is how often a transaction that failed with a
// serialization failure or a deadlock is tried in all.
const maxTxAttempts = 4

// Open connects to the database at dsn, applies the migrations it lacks
// (under an advisory lock, so replicas starting at once do not race) and
// refuses a schema newer than this binary knows (FailedPrecondition).
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	if o.Lease == (lease.Config{}) {
		o.Lease = lease.Defaults()
	}
	if err := o.Lease.Validate(); err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", errdefs.InvalidArgument("dsn: %v", err))
	}
	cfg.MaxConns = o.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	// Broken connections (after an outage) are found and dropped within
	// a second, so the pool recovers without every caller failing once.
	cfg.HealthCheckPeriod = time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", mapErr(err))
	}
	s := &Store{pool: pool, lease: o.Lease}
	if err := s.migrate(ctx, migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	return s, nil
}

// Close closes the pool. The Store must not be used afterwards.
func (s *Store) Close() { s.pool.Close() }

// Lease returns the lease timing the store decides with.
func (s *Store) Lease() lease.Config { return s.lease }

// inTx runs fn in a READ COMMITTED transaction, committing when fn
// returns nil. A serialization failure or deadlock anywhere in it
// (another transaction won a race) runs fn again, up to maxTxAttempts in
// all; fn must therefore be safe to repeat, and report its results only
// through what it returns last.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = s.tryTx(ctx, fn)
		if !retryable(err) {
			return mapErr(err)
		}
	}
	return fmt.Errorf("%w: %w", errdefs.Unavailable("gave up after %d attempts at a contended transaction", maxTxAttempts), err)
}

func (s *Store) tryTx(ctx context.Context, fn func(pgx.Tx) error) (err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if err != nil {
			if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) && !isConnLoss(rbErr) {
				err = errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
			}
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// dbNow reads the database's clock. Called after a transaction's row
// locks are held, it is the time of the decision: now() would be the
// transaction's start, seconds earlier for one that waited on a lock.
func dbNow(ctx context.Context, q querier) (time.Time, error) {
	var now time.Time
	if err := q.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, err
	}
	return now.UTC(), nil
}

// querier is what a pool, a connection and a transaction have in common.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Times kept as Unix milliseconds, as internal/store keeps them.

func toMS(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMS(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := fromMS(*ms)
	return &t
}
