package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// migration is one step of the schema. Migrations are applied in order, each
// in its own transaction together with the bump of PRAGMA user_version, so a
// crash mid-migration leaves the database at the previous version.
//
// Never edit or reorder a migration that has shipped: append a new one.
type migration struct {
	// name says what the step does, for error messages.
	name string
	// sql is one or more statements, executed as a single Exec.
	sql string
}

// migrations is the schema history; the database's user_version is the
// number of entries already applied.
var migrations = []migration{
	{name: "keys, templates, sandboxes", sql: `
CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	tenant     TEXT NOT NULL,
	name       TEXT NOT NULL,
	prefix     TEXT NOT NULL,             -- first 8 characters of the key; not secret
	hash       TEXT NOT NULL UNIQUE,      -- hex SHA-256 of the whole key; the key itself is never stored
	created_ms INTEGER NOT NULL,
	revoked_ms INTEGER                    -- NULL while the key is valid
);
CREATE INDEX api_keys_tenant ON api_keys (tenant, created_ms);

CREATE TABLE templates (
	name       TEXT PRIMARY KEY,
	hash       TEXT NOT NULL,
	spec       TEXT NOT NULL CHECK (json_valid(spec)),
	dir        TEXT NOT NULL,
	built_ms   INTEGER NOT NULL,
	size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0)
);

CREATE TABLE sandboxes (
	id          TEXT PRIMARY KEY,
	tenant      TEXT NOT NULL,
	template    TEXT NOT NULL,
	metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
	state       TEXT NOT NULL CHECK (state IN ('running', 'killed', 'expired', 'failed')),
	created_ms  INTEGER NOT NULL,
	deadline_ms INTEGER NOT NULL,
	ended_ms    INTEGER,
	pid         INTEGER NOT NULL DEFAULT 0 CHECK (pid >= 0),
	state_dir   TEXT NOT NULL DEFAULT '',
	parent_id   TEXT REFERENCES sandboxes (id),
	egress      TEXT CHECK (egress IS NULL OR json_valid(egress)),
	net_slot    INTEGER NOT NULL DEFAULT -1 CHECK (net_slot >= -1),
	-- a sandbox has ended exactly when it is no longer running
	CHECK ((state = 'running') = (ended_ms IS NULL))
);
CREATE INDEX sandboxes_tenant ON sandboxes (tenant, created_ms);
CREATE INDEX sandboxes_state_deadline ON sandboxes (state, deadline_ms);
CREATE INDEX sandboxes_parent ON sandboxes (parent_id);
-- Two live sandboxes must never share a network slot (tap + /30 subnet).
CREATE UNIQUE INDEX sandboxes_running_net_slot ON sandboxes (net_slot)
	WHERE state = 'running' AND net_slot >= 0;

-- sandbox_metadata mirrors sandboxes.metadata, one row per pair, so that
-- metadata filters are index lookups rather than JSON scans.
CREATE TABLE sandbox_metadata (
	sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	PRIMARY KEY (sandbox_id, key)
) WITHOUT ROWID;
CREATE INDEX sandbox_metadata_kv ON sandbox_metadata (key, value, sandbox_id);
`},
	{name: "audit log", sql: `
CREATE TABLE audit (
	seq         INTEGER PRIMARY KEY CHECK (seq > 0),
	time_ms     INTEGER NOT NULL,
	tenant      TEXT NOT NULL,
	sandbox_id  TEXT NOT NULL,
	parent_id   TEXT NOT NULL,
	template    TEXT NOT NULL,
	event       TEXT NOT NULL,
	metadata    TEXT NOT NULL,            -- canonical JSON object
	exit_code   INTEGER,                  -- NULL when the event has none
	bytes       INTEGER NOT NULL,
	duration_ms INTEGER NOT NULL,
	outcome     TEXT NOT NULL,
	detail      TEXT NOT NULL,            -- canonical JSON object
	prev_hash   TEXT NOT NULL,
	hash        TEXT NOT NULL
);
CREATE INDEX audit_tenant_seq ON audit (tenant, seq);
CREATE INDEX audit_sandbox_seq ON audit (sandbox_id, seq);
CREATE INDEX audit_time ON audit (time_ms);

-- audit_metadata mirrors audit.metadata for indexed filtering. It is not
-- covered by the hash itself; VerifyAudit checks it against the record.
CREATE TABLE audit_metadata (
	seq   INTEGER NOT NULL REFERENCES audit (seq),
	key   TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (seq, key)
) WITHOUT ROWID;
CREATE INDEX audit_metadata_kv ON audit_metadata (key, value, seq);

-- audit_head is the chain's newest (seq, hash), written in the same
-- transaction as each append, so deleting the newest records is detected.
CREATE TABLE audit_head (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	seq  INTEGER NOT NULL,
	hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');

-- Defence in depth: the schema itself refuses edits. Someone with write
-- access to the file can drop these triggers, which is why VerifyAudit
-- recomputes the chain rather than trusting them.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_insert_at_head BEFORE INSERT ON audit
WHEN NEW.seq != (SELECT seq FROM audit_head WHERE id = 1) + 1
BEGIN SELECT RAISE(ABORT, 'audit records must be appended at the head'); END;
CREATE TRIGGER audit_metadata_no_update BEFORE UPDATE ON audit_metadata
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_metadata_no_delete BEFORE DELETE ON audit_metadata
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
BEGIN SELECT RAISE(ABORT, 'audit head cannot be deleted'); END;
CREATE TRIGGER audit_head_forward_only BEFORE UPDATE ON audit_head
WHEN NEW.id != OLD.id OR NEW.seq != OLD.seq + 1
BEGIN SELECT RAISE(ABORT, 'audit head only moves forward by one'); END;
`},
	{name: "invoice history", sql: `
-- Invoices a tenant has seen, for duplicate detection across batches. Only
-- a SHA-256 of (tenant, vendor, normalised invoice number) is kept: the
-- store learns nothing about the invoices themselves.
CREATE TABLE invoice_history (
	key_sha256 TEXT PRIMARY KEY,
	seen_ms    INTEGER NOT NULL
) WITHOUT ROWID;
`},
	{name: "sandbox jail", sql: `
-- Whether the sandbox's VMM runs jailed (vmm/jail). Sandboxes from before
-- the jail existed ran unjailed.
ALTER TABLE sandboxes ADD COLUMN jailed INTEGER NOT NULL DEFAULT 0 CHECK (jailed IN (0, 1));
`},
	{name: "per-tenant audit numbers", sql: `
-- A tenant pages through its own records by their number among its
-- tenant's records (1, 2, ...): the global seq would tell one tenant how
-- much every other tenant did. Not hashed (like audit_metadata);
-- VerifyAudit checks it against the chain. The backfill needs the update
-- trigger out of the way for its one statement.
ALTER TABLE audit ADD COLUMN tenant_seq INTEGER;
DROP TRIGGER audit_no_update;
UPDATE audit SET tenant_seq = t.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY tenant ORDER BY seq) AS n FROM audit) AS t
 WHERE audit.seq = t.seq;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE UNIQUE INDEX audit_tenant_number ON audit (tenant, tenant_seq);
`},
	{name: "sandbox pause", sql: `
-- A paused sandbox is still running as far as its lifecycle goes (not
-- ended; its deadline counts), but no VMM runs it: its memory and device
-- state are saved in paused_dir on the host's disk, and it holds no pid,
-- state directory or network slot. '' for every sandbox not paused.
ALTER TABLE sandboxes ADD COLUMN paused_dir TEXT NOT NULL DEFAULT '';
`},
}

// migrate applies the migrations the database has not seen yet. The version
// is read inside the same IMMEDIATE transaction that applies the step, so two
// processes opening one file at once cannot both apply it.
func (s *Store) migrate(ctx context.Context, migs []migration) error {
	for {
		done, err := s.migrateOne(ctx, migs)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration, or reports done when there
// is none.
func (s *Store) migrateOne(ctx context.Context, migs []migration) (done bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		switch {
		case version > len(migs):
			return errdefs.FailedPrecondition("schema version %d is newer than this binary knows (%d)", version, len(migs))
		case version == len(migs):
			done = true
			return nil
		}
		m := migs[version]
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %d (%s): %w", version+1, m.name, err)
		}
		// PRAGMA takes no bound parameters; version is an int we control.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
			return fmt.Errorf("migration %d (%s): set schema version: %w", version+1, m.name, err)
		}
		return nil
	})
	return done, err
}

// SchemaVersion returns the number of migrations applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", mapErr(err))
	}
	return v, nil
}
