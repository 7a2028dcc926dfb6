package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// busyTimeout is how long a statement waits for another connection's write
// lock before failing with SQLITE_BUSY. Audit appends are short, so even a
// burst of hundreds of concurrent appenders drains well inside it.
const busyTimeout = 30 * time.Second

// maxOpenConns bounds the connection pool. SQLite serialises writers anyway;
// the extra connections only let readers run beside a writer in WAL mode.
const maxOpenConns = 8

// Store is airlock's state database. Create it with Open; it is safe for
// concurrent use by many goroutines.
type Store struct {
	// db is the connection pool; every connection in it has WAL, busy_timeout,
	// foreign_keys and BEGIN IMMEDIATE configured by the DSN. Immutable after
	// Open; closed by Close.
	db *sql.DB
	// path is the database file, for error messages. Immutable after Open.
	path string
	// now returns the current time; time.Now outside tests. Immutable after
	// Open (tests replace it before any concurrent use).
	now func() time.Time
	// anchor records the audit head outside the database; immutable after
	// Open.
	anchor *anchor
	// auditRefused is why the audit log must not be extended (it was found
	// behind, or different from, its anchor at Open), nil when it may be;
	// immutable after Open.
	auditRefused error
}

// Open opens (creating if needed) the SQLite database at path and brings its
// schema up to date. Opening an up-to-date database changes nothing. A
// database written by a newer airlock (more migrations than this binary
// knows) is refused with FailedPrecondition rather than used half-understood.
func Open(path string) (*Store, error) {
	return openWith(context.Background(), path, migrations)
}

// ensurePrivate creates path 0600 if it does not exist and makes the
// database and any WAL and shared-memory files beside it owner-only.
func ensurePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("store: make %s owner-only: %w", p, err)
		}
	}
	return nil
}

// openWith is Open with an explicit migration list, so tests can create a
// database at an older schema version.
func openWith(ctx context.Context, path string, migs []migration) (_ *Store, err error) {
	if path == "" || path == ":memory:" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		// :memory: would give every pooled connection its own database.
		return nil, errdefs.InvalidArgument("store: database path %q: want a file path without '?'", path)
	}
	// Owner-only: the store holds key hashes, metadata and the audit log.
	// SQLite gives the -wal and -shm files the database file's mode, so
	// creating it 0600 first (and tightening one made before) covers all
	// three.
	if err := ensurePrivate(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, db.Close())
		}
	}()
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	// Connections are configured by the DSN when they are made, so keeping
	// them forever is safe and saves re-running the pragmas.
	db.SetConnMaxLifetime(0)

	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, fmt.Errorf("store: open %s: read journal mode: %w", path, err)
	}
	if mode != "wal" {
		// WAL is what lets the reaper and the API read while an append
		// writes; running without it would be slow and surprising.
		return nil, errdefs.FailedPrecondition("store: open %s: journal_mode is %q, want wal", path, mode)
	}
	s := &Store{db: db, path: path, now: time.Now}
	if err := s.migrate(ctx, migs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if s.anchor, err = openAnchor(path); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := s.checkAnchor(ctx); err != nil {
		s.anchor.close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// checkAnchor compares the audit head with the anchor at Open: a log
// behind or unlike its anchor is not extended (auditRefused). A log from
// before the anchor existed gets its head anchored now.
func (s *Store) checkAnchor(ctx context.Context) error {
	unlock, err := s.anchor.lock()
	if err != nil {
		return err
	}
	defer unlock()
	var tables int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit_head'`).Scan(&tables); err != nil {
		return mapErr(err)
	}
	if tables == 0 {
		return nil // a schema from before the audit log (tests open such)
	}
	var seq int64
	var hash string
	err = s.db.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&seq, &hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.auditRefused = errdefs.FailedPrecondition("audit head is missing; the log has been tampered with")
		return nil
	case err != nil:
		return mapErr(err)
	case s.anchor.broken != nil:
		s.auditRefused = errdefs.FailedPrecondition("audit anchor: %v; the log is not written to until an operator investigates (airlock audit verify)", s.anchor.broken)
		return nil
	case s.anchor.empty() && seq > 0:
		return s.anchor.record(seq, hash)
	}
	s.auditRefused = behindAnchor(s.anchor, seq, hash)
	return nil
}

// AuditIntegrity is nil when the audit log may be extended, else why it
// may not (found behind or unlike its anchor at Open). A daemon refuses
// to start on it: every sandbox operation is audited.
func (s *Store) AuditIntegrity() error { return s.auditRefused }

// dsn builds the driver DSN. Every pooled connection runs these on creation:
// WAL so readers never block the writer, a busy timeout so concurrent writers
// queue instead of failing, foreign keys on (SQLite's default is off, per
// connection), and BEGIN IMMEDIATE for every read-write transaction so the
// write lock is taken at BEGIN: a deferred transaction that reads and then
// writes can fail with SQLITE_BUSY that no timeout resolves.
func dsn(path string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "NORMAL") // safe with WAL: a crash loses at most the last commits, never integrity
	q.Set("_txlock", "immediate")
	// A plain filename (no "file:" URI) is passed to SQLite verbatim up to
	// the '?', which is why Open refuses paths containing one.
	return path + "?" + q.Encode()
}

// Close closes the database. The Store must not be used afterwards.
func (s *Store) Close() error {
	err := s.anchor.close()
	if dberr := s.db.Close(); dberr != nil {
		err = errors.Join(err, dberr)
	}
	if err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// SealAuditAnchor makes the audit anchor file append-only (chattr +a)
// where the filesystem and privileges allow, and reports whether it is.
// The daemon calls it; removing a state directory afterwards needs
// `chattr -a` on the anchor first.
func (s *Store) SealAuditAnchor() bool { return s.anchor.seal() }

// inTx runs fn in a read-write (BEGIN IMMEDIATE) transaction, committing if
// fn returns nil and rolling back otherwise.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", mapErr(err))
	}
	defer func() {
		if err != nil {
			if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
				err = errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
			}
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	return nil
}

// mapErr gives driver errors an errdefs class where one fits, keeping the
// original error in the chain. Errors that already carry a class, and
// context errors, pass through unchanged.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errdefs.Class(err) != errdefs.ErrInternal {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return fmt.Errorf("%w: %w", errdefs.New(errdefs.ErrAlreadyExists, "already exists"), err)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %w", errdefs.NotFound("referenced row does not exist"), err)
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL:
		return fmt.Errorf("%w: %w", errdefs.InvalidArgument("constraint violated"), err)
	case sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		return fmt.Errorf("%w: %w", errdefs.FailedPrecondition("refused by schema trigger"), err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %w", errdefs.Unavailable("database busy"), err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w: %w", errdefs.ResourceExhausted("disk full"), err)
	}
	return err
}

// Validation. These limits keep rows small and indexes cheap; the API layer
// may be stricter but never looser.
var (
	tenantRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	// templateNameRE allows dots for versioned names ("invoice-ocr.v2").
	templateNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	// idRE covers UUIDs and the other opaque ids callers generate; no
	// slashes, so an id can never be mistaken for a path.
	idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

const (
	maxMetadataPairs = 64
	maxMetadataKey   = 64
	maxMetadataValue = 512
	maxKeyName       = 128
)

// ValidateTenant reports whether tenant is a well-formed tenant name
// ([a-z0-9][a-z0-9_-]{0,62}), as InvalidArgument if not.
func ValidateTenant(tenant string) error {
	if !tenantRE.MatchString(tenant) {
		return errdefs.InvalidArgument("invalid tenant %q: want [a-z0-9][a-z0-9_-]{0,62}", tenant)
	}
	return nil
}

// ValidateID reports, as InvalidArgument naming what, an id that is not
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}.
func ValidateID(what, id string) error {
	if !idRE.MatchString(id) {
		return errdefs.InvalidArgument("invalid %s %q", what, id)
	}
	return nil
}

// ValidateTemplateName reports, as InvalidArgument, a template name that
// is not [a-z0-9][a-z0-9._-]{0,62}.
func ValidateTemplateName(name string) error {
	if !templateNameRE.MatchString(name) {
		return errdefs.InvalidArgument("invalid template name %q: want [a-z0-9][a-z0-9._-]{0,62}", name)
	}
	return nil
}

// ValidateMetadata checks caller labels (of a sandbox, a record or a
// filter) against the limits every store keeps: at most 64 pairs,
// printable keys of 1-64 bytes, UTF-8 values of at most 512 bytes.
func ValidateMetadata(what string, m map[string]string) error {
	return validateStringMap(what, m, maxMetadataValue)
}

// validateStringMap checks a metadata-like map: bounded size, non-empty
// valid-UTF-8 keys without control characters, bounded values.
func validateStringMap(what string, m map[string]string, maxValue int) error {
	if len(m) > maxMetadataPairs {
		return errdefs.InvalidArgument("%s has %d entries, at most %d allowed", what, len(m), maxMetadataPairs)
	}
	for k, v := range m {
		if k == "" || len(k) > maxMetadataKey || !printable(k) {
			return errdefs.InvalidArgument("%s key %q: want 1-%d printable characters", what, k, maxMetadataKey)
		}
		if len(v) > maxValue || !utf8.ValidString(v) {
			return errdefs.InvalidArgument("%s value for %q: want valid UTF-8, at most %d bytes", what, k, maxValue)
		}
	}
	return nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// EncodeMap returns the canonical JSON of a string map: keys sorted (as
// encoding/json always does), a nil map encoded as {} so that nil and empty
// are the same value on disk and in hashes.
func EncodeMap(m map[string]string) (string, error) {
	if m == nil {
		m = map[string]string{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// DecodeMap is the inverse of EncodeMap; {} decodes to nil so callers see
// one representation of "no metadata".
func DecodeMap(s string) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// Times are stored as Unix milliseconds.

func toMS(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMS(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := fromMS(ms.Int64)
	return &t
}

// rowScanner is the common part of *sql.Row and *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}
