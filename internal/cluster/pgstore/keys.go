package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// CreateKey makes a new API key for tenant (creating the tenant with the
// default quota if it has no row) and returns the key in clear, shown
// once and never stored, with its record. Keys are made and hashed by
// internal/store, so they look and authenticate the same everywhere.
func (s *Store) CreateKey(ctx context.Context, tenant, name string) (string, store.Key, error) {
	plaintext, k, err := store.NewKey(tenant, name, time.Now())
	if err != nil {
		return "", store.Key{}, fmt.Errorf("pgstore: create key: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := ensureTenant(ctx, tx, tenant); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, tenant, name, prefix, hash, created_ms) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.Tenant, k.Name, k.Prefix, store.HashKey(plaintext), toMS(k.CreatedAt))
		return err
	})
	if err != nil {
		return "", store.Key{}, fmt.Errorf("pgstore: create key for tenant %s: %w", tenant, err)
	}
	return plaintext, k, nil
}

// AuthenticateKey returns the record of the valid key whose plaintext is
// given. Unknown, malformed and revoked keys are all PermissionDenied;
// the lookup is by hash.
func (s *Store) AuthenticateKey(ctx context.Context, plaintext string) (store.Key, error) {
	if err := store.CheckKeyShape(plaintext); err != nil {
		return store.Key{}, fmt.Errorf("pgstore: authenticate: %w", err)
	}
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1`, store.HashKey(plaintext)))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Key{}, fmt.Errorf("pgstore: authenticate: %w", errdefs.PermissionDenied("invalid API key"))
	}
	if err != nil {
		return store.Key{}, fmt.Errorf("pgstore: authenticate: %w", mapErr(err))
	}
	if k.Revoked() {
		return store.Key{}, fmt.Errorf("pgstore: authenticate: %w", errdefs.PermissionDenied("API key %s was revoked", k.Prefix))
	}
	return k, nil
}

// ListKeys returns the keys of tenant, or of every tenant when tenant is
// "", oldest first; revoked keys are included.
func (s *Store) ListKeys(ctx context.Context, tenant string) ([]store.Key, error) {
	q := `SELECT ` + keyColumns + ` FROM api_keys`
	var args []any
	if tenant != "" {
		if err := store.ValidateTenant(tenant); err != nil {
			return nil, fmt.Errorf("pgstore: list keys: %w", err)
		}
		q += ` WHERE tenant = $1`
		args = append(args, tenant)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY created_ms, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list keys: %w", mapErr(err))
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Key, error) { return scanKey(r) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: list keys: %w", mapErr(err))
	}
	return keys, nil
}

// RevokeKey revokes the key with the given id; revoking it again keeps
// the first revocation time. An unknown id is NotFound.
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	if err := store.ValidateID("key id", id); err != nil {
		return fmt.Errorf("pgstore: revoke key: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_ms = coalesce(revoked_ms, $1) WHERE id = $2`, toMS(time.Now()), id)
	if err != nil {
		return fmt.Errorf("pgstore: revoke key %s: %w", id, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return errdefs.NotFound("key %s not found", id)
	}
	return nil
}

const keyColumns = `id, tenant, name, prefix, created_ms, revoked_ms`

func scanKey(r pgx.Row) (store.Key, error) {
	var (
		k       store.Key
		created int64
		revoked *int64
	)
	if err := r.Scan(&k.ID, &k.Tenant, &k.Name, &k.Prefix, &created, &revoked); err != nil {
		return store.Key{}, err
	}
	k.CreatedAt, k.RevokedAt = fromMS(created), fromNullMS(revoked)
	return k, nil
}
