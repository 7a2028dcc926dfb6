package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// migration is one step of the schema, applied in its own transaction
// together with its schema_migrations row. Never edit or reorder one that
// has shipped: append a new one.
type migration struct {
	// name says what the step does, for errors and schema_migrations.
	name string
	// sql is one or more statements, run as one simple-protocol Exec.
	sql string
}

// migrations is the schema history; its length is the version this
// binary expects.
var migrations = []migration{
	{name: "tenants, keys, nodes, catalog, templates, audit, invoices", sql: schemaV1},
	{name: "the API tier's secrets; creating rows by age", sql: schemaV2},
	{name: "paused sandboxes in the catalog", sql: schemaV3},
}

// migrateLockKey names the advisory lock every migrating process takes,
// so replicas starting together apply each step once.
const migrateLockKey = "airlock-migrate"

// Migrate brings the database at dsn up to this binary's schema, as Open
// does, and returns the version it is at. It is what `airlock cluster
// migrate` runs before a rollout.
func Migrate(ctx context.Context, dsn string) (int, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("pgstore: migrate: %w", mapErr(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	s := &Store{}
	for {
		done, err := s.migrateOne(ctx, conn, migrations)
		if err != nil {
			return 0, fmt.Errorf("pgstore: migrate: %w", err)
		}
		if done {
			return len(migrations), nil
		}
	}
}

// migrate applies the pending migrations over one pooled connection.
func (s *Store) migrate(ctx context.Context, migs []migration) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer conn.Release()
	for {
		done, err := s.migrateOne(ctx, conn.Conn(), migs)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration, or reports done. The
// version is read under the advisory lock, in the transaction that
// applies the step, so two processes cannot both apply it.
func (s *Store) migrateOne(ctx context.Context, conn *pgx.Conn, migs []migration) (done bool, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, migrateLockKey); err != nil {
		return false, mapErr(err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return false, mapErr(err)
	}
	var version int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return false, mapErr(err)
	}
	switch {
	case version > len(migs):
		return false, errdefs.FailedPrecondition("schema version %d is newer than this binary knows (%d)", version, len(migs))
	case version == len(migs):
		return true, tx.Commit(ctx)
	}
	m := migs[version]
	if _, err := tx.Exec(ctx, m.sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return false, fmt.Errorf("migration %d (%s): %w", version+1, m.name, mapErr(err))
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version+1, m.name); err != nil {
		return false, mapErr(err)
	}
	return false, mapErr(tx.Commit(ctx))
}

// SchemaVersion returns the number of migrations applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("pgstore: schema version: %w", mapErr(err))
	}
	return v, nil
}
