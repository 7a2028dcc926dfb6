package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// InvoiceKey is what a store keeps of an invoice: a digest, so duplicate
// detection works without the store holding tenant business data.
func InvoiceKey(tenant, vendor, number string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + vendor + "\x00" + number))
	return hex.EncodeToString(sum[:])
}

// InvoiceSeen reports whether the invoice (tenant, vendor, normalised
// number) was recorded before.
func (s *Store) InvoiceSeen(ctx context.Context, tenant, vendor, number string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM invoice_history WHERE key_sha256 = ?`,
		InvoiceKey(tenant, vendor, number)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: invoice seen: %w", mapErr(err))
	}
	return n > 0, nil
}

// RecordInvoice remembers the invoice; recording it again is a no-op.
func (s *Store) RecordInvoice(ctx context.Context, tenant, vendor, number string) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO invoice_history (key_sha256, seen_ms) VALUES (?, ?)`,
		InvoiceKey(tenant, vendor, number), toMS(time.Now()))
	if err != nil {
		return fmt.Errorf("store: record invoice: %w", mapErr(err))
	}
	return nil
}
