package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "/tmp/a?b.db", "file:x.db"} {
		if _, err := Open(p); !errdefs.IsInvalidArgument(err) {
			t.Errorf("Open(%q) = %v, want InvalidArgument", p, err)
		}
	}
}

func TestOpenSetsPragmas(t *testing.T) {
	s, _ := newTestStore(t)
	for _, tc := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "30000"},
	} {
		// Ask several times so more than one pooled connection is checked.
		for i := 0; i < 3; i++ {
			var got string
			if err := s.db.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
			}
		}
	}
}

func tableExists(t *testing.T, s *Store, name string) bool {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func columnExists(t *testing.T, s *Store, table, column string) bool {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(ctx,
		`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestMigrationUpgradesOlderDatabase(t *testing.T) {
	if len(migrations) < 2 {
		t.Fatal("test needs at least two migrations")
	}
	path := filepath.Join(t.TempDir(), "airlock.db")
	n := len(migrations)
	// A database as a release before per-tenant audit numbers left it,
	// with data in it: the upgrade runs that migration and every later one.
	k := slices.IndexFunc(migrations, func(m migration) bool { return m.name == "per-tenant audit numbers" })
	if k < 1 {
		t.Fatal("no per-tenant audit numbers migration")
	}
	old, err := openWith(ctx, path, migrations[:k])
	if err != nil {
		t.Fatalf("open at version %d: %v", k, err)
	}
	if v, _ := old.SchemaVersion(ctx); v != k {
		t.Fatalf("schema version = %d, want %d", v, k)
	}
	// The columns the migrations since add.
	if columnExists(t, old, "audit", "tenant_seq") || columnExists(t, old, "sandboxes", "paused_dir") {
		t.Fatal("audit.tenant_seq or sandboxes.paused_dir exists before its migration ran")
	}
	if _, _, err := old.CreateKey(ctx, "firm-a", "ci"); err != nil {
		t.Fatal(err)
	}
	// Records as the previous release wrote them, two tenants interleaved.
	prev := ""
	for seq, tenant := range []string{"firm-a", "firm-b", "firm-a", "firm-b"} {
		r := AuditRecord{Seq: int64(seq + 1), Time: t0, Tenant: tenant, Event: "exec", Outcome: "ok", PrevHash: prev}
		r.Hash = must(AuditHash(r))
		if _, err := old.db.ExecContext(ctx, `INSERT INTO audit (seq, time_ms, tenant, sandbox_id, parent_id, template, event,
			metadata, exit_code, bytes, duration_ms, outcome, detail, prev_hash, hash)
			VALUES (?, ?, ?, '', '', '', 'exec', '{}', NULL, 0, 0, 'ok', '{}', ?, ?)`, r.Seq, toMS(t0), tenant, prev, r.Hash); err != nil {
			t.Fatal(err)
		}
		if _, err := old.db.ExecContext(ctx, `UPDATE audit_head SET seq = ?, hash = ?`, r.Seq, r.Hash); err != nil {
			t.Fatal(err)
		}
		prev = r.Hash
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	// The current binary upgrades it in place and keeps the data.
	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if v, _ := s.SchemaVersion(ctx); v != n {
		t.Fatalf("schema version after upgrade = %d, want %d", v, n)
	}
	if !columnExists(t, s, "audit", "tenant_seq") || !columnExists(t, s, "sandboxes", "paused_dir") {
		t.Fatal("audit.tenant_seq or sandboxes.paused_dir missing after upgrade")
	}
	if recs, err := s.QueryAudit(ctx, AuditFilter{Tenant: "firm-b"}); err != nil || len(recs) != 2 ||
		recs[0].TenantSeq != 1 || recs[1].TenantSeq != 2 || recs[1].Seq != 4 {
		t.Fatalf("firm-b's records after the upgrade: %+v, %v", recs, err)
	}
	if keys, err := s.ListKeys(ctx, ""); err != nil || len(keys) != 1 {
		t.Fatalf("keys after upgrade = %v, %v; want the one created before", keys, err)
	}
	if _, err := s.AppendAudit(ctx, AuditRecord{Event: "create", Outcome: "ok"}); err != nil {
		t.Fatalf("append after upgrade: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening an up-to-date database changes nothing.
	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen up to date: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != n {
		t.Fatalf("schema version after no-op reopen = %d, want %d", v, n)
	}
	if rep, err := s.VerifyAudit(ctx); err != nil || !rep.OK || rep.Records != 5 {
		t.Fatalf("verify after reopen = %+v, %v", rep, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s, path := newTestStore(t)
	mustExec(t, rawDB(t, path), "PRAGMA user_version = 999")
	_ = s
	if _, err := Open(path); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("Open of a newer schema = %v, want FailedPrecondition", err)
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	broken := append(append([]migration{}, migrations[:1]...),
		migration{name: "half broken", sql: "CREATE TABLE half (x); CREATE TABLE nonsense ("})
	if _, err := openWith(ctx, path, broken); err == nil {
		t.Fatal("open with a broken migration succeeded")
	}
	s, err := openWith(ctx, path, migrations[:1])
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != 1 {
		t.Errorf("schema version = %d, want 1 (the broken step must not count)", v)
	}
	if tableExists(t, s, "half") {
		t.Error("a failed migration left part of its work behind")
	}
}

func TestInvoiceHistory(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if seen, err := s.InvoiceSeen(ctx, "acme", "v1", "inv42"); err != nil || seen {
		t.Fatalf("fresh store: seen=%v err=%v", seen, err)
	}
	for range 2 { // recording twice is fine
		if err := s.RecordInvoice(ctx, "acme", "v1", "inv42"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		tenant, vendor, number string
		want                   bool
	}{{"acme", "v1", "inv42", true}, {"globex", "v1", "inv42", false}, {"acme", "v2", "inv42", false}, {"acme", "v1", "inv43", false}} {
		if seen, err := s.InvoiceSeen(ctx, tc.tenant, tc.vendor, tc.number); err != nil || seen != tc.want {
			t.Errorf("InvoiceSeen(%s, %s, %s) = %v, %v; want %v", tc.tenant, tc.vendor, tc.number, seen, err, tc.want)
		}
	}
}
