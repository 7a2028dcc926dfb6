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

// DefaultMaxSandboxes is a new tenant's quota of live sandboxes.
const DefaultMaxSandboxes = 256

// Tenant is a tenant's row.
type Tenant struct {
	// Name is the tenant ([a-z0-9][a-z0-9_-]{0,62}); the primary key,
	// immutable.
	Name string
	// MaxSandboxes bounds its live (creating or running) sandboxes
	// across the cluster; >= 0.
	MaxSandboxes int
	// CreatedAt is when the row was made (UTC, ms); immutable.
	CreatedAt time.Time
	// DisabledAt is when the tenant was disabled, nil while enabled. A
	// disabled tenant gets no new sandboxes.
	DisabledAt *time.Time
}

// PutTenant creates tenant name with quota max, or sets the quota of an
// existing one.
func (s *Store) PutTenant(ctx context.Context, name string, max int) error {
	if err := store.ValidateTenant(name); err != nil {
		return fmt.Errorf("pgstore: put tenant: %w", err)
	}
	if max < 0 {
		return fmt.Errorf("pgstore: put tenant %s: %w", name, errdefs.InvalidArgument("negative quota"))
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tenants (name, max_sandboxes, created_ms) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET max_sandboxes = excluded.max_sandboxes`, name, max, toMS(time.Now()))
	if err != nil {
		return fmt.Errorf("pgstore: put tenant %s: %w", name, mapErr(err))
	}
	return nil
}

// ensureTenant makes tenant's row with the default quota if it has none:
// keys and audit records name tenants the way the single-host store lets
// them, without an explicit create.
func ensureTenant(ctx context.Context, tx pgx.Tx, tenant string) error {
	_, err := tx.Exec(ctx, `INSERT INTO tenants (name, max_sandboxes, created_ms) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, tenant, DefaultMaxSandboxes, toMS(time.Now()))
	return err
}

// GetTenant returns tenant's row; NotFound when there is none.
func (s *Store) GetTenant(ctx context.Context, name string) (Tenant, error) {
	var (
		t        Tenant
		created  int64
		disabled *int64
	)
	err := s.pool.QueryRow(ctx, `SELECT name, max_sandboxes, created_ms, disabled_ms FROM tenants WHERE name = $1`, name).
		Scan(&t.Name, &t.MaxSandboxes, &created, &disabled)
	if errors.Is(err, pgx.ErrNoRows) {
		return Tenant{}, errdefs.NotFound("tenant %s not found", name)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("pgstore: get tenant %s: %w", name, mapErr(err))
	}
	t.CreatedAt, t.DisabledAt = fromMS(created), fromNullMS(disabled)
	return t, nil
}

// SetTenantDisabled disables (or enables again) tenant; its running
// sandboxes go on, new ones are refused.
func (s *Store) SetTenantDisabled(ctx context.Context, name string, disabled bool) error {
	var at *int64
	if disabled {
		ms := toMS(time.Now())
		at = &ms
	}
	tag, err := s.pool.Exec(ctx, `UPDATE tenants SET disabled_ms = CASE WHEN $2::bigint IS NULL THEN NULL
		ELSE coalesce(disabled_ms, $2) END WHERE name = $1`, name, at)
	if err != nil {
		return fmt.Errorf("pgstore: disable tenant %s: %w", name, mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return errdefs.NotFound("tenant %s not found", name)
	}
	return nil
}
