package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// KeyPrefix starts every airlock API key, so a leaked key is recognisable by
// secret scanners and in logs.
const KeyPrefix = "alk_"

// keyRandomBytes is the entropy in a key: 256 bits, beyond guessing.
const keyRandomBytes = 32

// keyDisplayLen is how much of a key is kept in clear for display: the
// "alk_" marker plus 4 characters (20 bits), too little to help a guesser.
const keyDisplayLen = 8

// keyEncoding is lowercase base32 without padding: case-insensitive-safe and
// free of characters that need quoting in a shell or header.
var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Key is an API key's stored record. The key itself is not part of it: it is
// returned once by CreateKey and only its SHA-256 is kept.
type Key struct {
	// ID is the key's UUID; immutable, never secret (it is what RevokeKey
	// takes and what audit records name).
	ID string
	// Tenant is the tenant every request made with the key acts as; a valid
	// tenant name, immutable.
	Tenant string
	// Name is the operator's label for the key (1-128 printable characters);
	// immutable.
	Name string
	// Prefix is the first 8 characters of the key ("alk_" + 4), kept for
	// display so an operator can tell keys apart; not secret, immutable.
	Prefix string
	// CreatedAt is when the key was created (UTC, ms precision); immutable.
	CreatedAt time.Time
	// RevokedAt is when the key was revoked, nil while it is valid. Once set
	// it never changes and the key never authenticates again.
	RevokedAt *time.Time
}

// Revoked reports whether the key has been revoked.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// CreateKey makes a new API key for tenant and returns the key in clear,
// which the caller shows once and the store never sees again, together with
// its stored record.
func (s *Store) CreateKey(ctx context.Context, tenant, name string) (plaintext string, k Key, err error) {
	plaintext, k, err = NewKey(tenant, name, s.now())
	if err != nil {
		return "", Key{}, fmt.Errorf("store: create key: %w", err)
	}
	_, err = s.db.ExecContext(ctx,
		`INSERT INTO api_keys (id, tenant, name, prefix, hash, created_ms) VALUES (?, ?, ?, ?, ?, ?)`,
		k.ID, k.Tenant, k.Name, k.Prefix, HashKey(plaintext), toMS(k.CreatedAt))
	if err != nil {
		return "", Key{}, fmt.Errorf("store: create key for tenant %s: %w", tenant, mapErr(err))
	}
	return plaintext, k, nil
}

// HashKey is the stored form of a key. A plain SHA-256 suffices (no salt, no
// slow hash): the key carries 256 random bits, so there is no dictionary to
// precompute and nothing to brute-force.
func HashKey(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

// AuthenticateKey returns the record of the valid key whose plaintext is
// given. Unknown, malformed and revoked keys are all PermissionDenied. The
// lookup is by hash, so timing reveals nothing about stored keys.
func (s *Store) AuthenticateKey(ctx context.Context, plaintext string) (Key, error) {
	if err := CheckKeyShape(plaintext); err != nil {
		return Key{}, fmt.Errorf("store: authenticate: %w", err)
	}
	row := s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, HashKey(plaintext))
	k, err := scanKey(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, fmt.Errorf("store: authenticate: %w", errdefs.PermissionDenied("invalid API key"))
	}
	if err != nil {
		return Key{}, fmt.Errorf("store: authenticate: %w", mapErr(err))
	}
	if k.Revoked() {
		return Key{}, fmt.Errorf("store: authenticate: %w", errdefs.PermissionDenied("API key %s was revoked", k.Prefix))
	}
	return k, nil
}

// ListKeys returns the keys of tenant, or of every tenant when tenant is "",
// oldest first. Revoked keys are included.
func (s *Store) ListKeys(ctx context.Context, tenant string) ([]Key, error) {
	q := `SELECT ` + keyColumns + ` FROM api_keys`
	var args []any
	if tenant != "" {
		if err := ValidateTenant(tenant); err != nil {
			return nil, fmt.Errorf("store: list keys: %w", err)
		}
		q += ` WHERE tenant = ?`
		args = append(args, tenant)
	}
	q += ` ORDER BY created_ms, rowid`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list keys: %w", mapErr(err))
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list keys: %w", mapErr(err))
	}
	return keys, nil
}

// RevokeKey revokes the key with the given id. Revoking a revoked key is a
// no-op that keeps the first revocation time; an unknown id is NotFound.
// Tenant scoping is the caller's job (key management is an operator action).
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	if err := ValidateID("key id", id); err != nil {
		return fmt.Errorf("store: revoke key: %w", err)
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE api_keys SET revoked_ms = coalesce(revoked_ms, ?) WHERE id = ?`, toMS(s.now()), id)
	if err != nil {
		return fmt.Errorf("store: revoke key %s: %w", id, mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: revoke key %s: %w", id, err)
	}
	if n == 0 {
		return errdefs.NotFound("key %s not found", id)
	}
	return nil
}

const keyColumns = `id, tenant, name, prefix, created_ms, revoked_ms`

func scanKey(r rowScanner) (Key, error) {
	var (
		k       Key
		created int64
		revoked sql.NullInt64
	)
	if err := r.Scan(&k.ID, &k.Tenant, &k.Name, &k.Prefix, &created, &revoked); err != nil {
		return Key{}, err
	}
	k.CreatedAt = fromMS(created)
	k.RevokedAt = fromNullMS(revoked)
	return k, nil
}

// NewKey makes a new API key for tenant: the plaintext, shown once and
// never stored, and the record to store beside HashKey(plaintext). Every
// store that keeps keys makes them here, so a key from any of them has one
// shape and authenticates by one hash. created is rounded to the
// millisecond, as stores keep it.
func NewKey(tenant, name string, created time.Time) (plaintext string, k Key, err error) {
	if err := ValidateTenant(tenant); err != nil {
		return "", Key{}, err
	}
	if name == "" || len(name) > maxKeyName || !printable(name) {
		return "", Key{}, errdefs.InvalidArgument("invalid key name %q: want 1-%d printable characters", name, maxKeyName)
	}
	var raw [keyRandomBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Key{}, fmt.Errorf("read random: %w", err)
	}
	plaintext = KeyPrefix + keyEncoding.EncodeToString(raw[:])
	return plaintext, Key{
		ID:        uuid.NewString(),
		Tenant:    tenant,
		Name:      name,
		Prefix:    plaintext[:keyDisplayLen],
		CreatedAt: fromMS(toMS(created)),
	}, nil
}

// CheckKeyShape refuses, as PermissionDenied, a presented key that cannot
// be one this package made, before any lookup. The message never echoes
// the key: errors end up in logs.
func CheckKeyShape(plaintext string) error {
	if !strings.HasPrefix(plaintext, KeyPrefix) || len(plaintext) > 128 {
		return errdefs.PermissionDenied("invalid API key")
	}
	return nil
}

// StoredKey is a key's record with the hash it authenticates by: what
// moving keys to another store (a cluster's, on import) carries. The
// plaintext is never kept anywhere.
type StoredKey struct {
	Key
	// Hash is HashKey of the key's plaintext.
	Hash string
}

// StoredKeys returns every key with its hash, revoked ones included,
// oldest first.
func (s *Store) StoredKeys(ctx context.Context) ([]StoredKey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+`, hash FROM api_keys ORDER BY created_ms, rowid`)
	if err != nil {
		return nil, fmt.Errorf("store: stored keys: %w", mapErr(err))
	}
	defer rows.Close()
	var out []StoredKey
	for rows.Next() {
		var sk StoredKey
		var hash string
		k, err := scanKey(extraScanner{rows, &hash})
		if err != nil {
			return nil, fmt.Errorf("store: stored keys: %w", err)
		}
		sk.Key, sk.Hash = k, hash
		out = append(out, sk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stored keys: %w", mapErr(err))
	}
	return out, nil
}

// extraScanner scans a row into what its caller asks, then extra.
type extraScanner struct {
	rowScanner
	extra any
}

func (e extraScanner) Scan(dest ...any) error { return e.rowScanner.Scan(append(dest, e.extra)...) }
