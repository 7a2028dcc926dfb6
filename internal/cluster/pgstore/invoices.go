package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock/internal/store"
)

// InvoiceSeen reports whether the invoice (tenant, vendor, normalised
// number) was recorded before, by its digest (store.InvoiceKey).
func (s *Store) InvoiceSeen(ctx context.Context, tenant, vendor, number string) (bool, error) {
	var seen bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM invoice_history WHERE key_sha256 = $1)`,
		store.InvoiceKey(tenant, vendor, number)).Scan(&seen)
	if err != nil {
		return false, fmt.Errorf("pgstore: invoice seen: %w", mapErr(err))
	}
	return seen, nil
}

// RecordInvoice remembers the invoice's digest; recording it again is a
// no-op.
func (s *Store) RecordInvoice(ctx context.Context, tenant, vendor, number string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO invoice_history (key_sha256, seen_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		store.InvoiceKey(tenant, vendor, number), toMS(time.Now()))
	if err != nil {
		return fmt.Errorf("pgstore: record invoice: %w", mapErr(err))
	}
	return nil
}
