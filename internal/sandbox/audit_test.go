package sandbox

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/store"
)

// An egress connection's record carries its sandbox's template and
// metadata, like every other record of the sandbox, so `audit ls --meta`
// finds it; also once the sandbox has ended (the proxy reports a
// connection when it closes, which may be after the end).
func TestEgressAuditCarriesMetadata(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.PutSandbox(ctx, store.Sandbox{ID: "sbx-ended", Tenant: "acme", Template: "base",
		Metadata: map[string]string{"doc": "d1"}, State: store.StateRunning, CreatedAt: now,
		Deadline: now.Add(time.Hour), NetSlot: store.NoNetSlot}); err != nil {
		t.Fatal(err)
	}
	m := &Manager{cfg: Config{Store: st}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), sandboxes: map[string]*live{}}
	m.AuditEgress(egress.Event{SandboxID: "sbx-ended", Tenant: "acme", Kind: egress.KindHTTP,
		Rule: "dms", Outcome: egress.OutcomeOK, BytesUp: 10, BytesDown: 20})
	recs, err := st.QueryAudit(ctx, store.AuditFilter{Metadata: map[string]string{"doc": "d1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Event != store.EventEgress || recs[0].Template != "base" || recs[0].Bytes != 30 {
		t.Fatalf("records with doc=d1: %+v", recs)
	}
}
