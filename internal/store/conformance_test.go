package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/storetest"
	"github.com/airlock-dev/airlock/internal/store"
)

// TestConformance runs the behaviour the single-host store shares with
// the cluster's store (internal/cluster/storetest).
func TestConformance(t *testing.T) {
	n := storetest.Run(t, func(t *testing.T) storetest.Subject {
		s, err := store.Open(filepath.Join(t.TempDir(), "airlock.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return storetest.Subject{Store: s, Append: func(ctx context.Context, r store.AuditRecord) error {
			_, err := s.AppendAudit(ctx, r)
			return err
		}}
	})
	t.Logf("%d shared cases on SQLite", n)
}
