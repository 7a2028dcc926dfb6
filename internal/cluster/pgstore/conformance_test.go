package pgstore

import (
	"context"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/storetest"
	"github.com/airlock-dev/airlock/internal/store"
)

// TestConformance runs the behaviour the cluster's store shares with the
// single-host store (internal/cluster/storetest). Records go in through
// the control chain and are numbered by the sequencer before they are
// read, as the API tier does.
func TestConformance(t *testing.T) {
	n := storetest.Run(t, func(t *testing.T) storetest.Subject {
		s, _ := open(t, Options{})
		return storetest.Subject{Store: s, Append: func(ctx context.Context, r store.AuditRecord) error {
			if _, err := s.AppendControl(ctx, r); err != nil {
				return err
			}
			_, err := s.SequenceAudit(ctx)
			return err
		}}
	})
	t.Logf("%d shared cases on PostgreSQL", n)
}
