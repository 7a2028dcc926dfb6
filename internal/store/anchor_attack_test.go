package store

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// forgeChain rewrites the records from seq from on (those already in the
// table at from..) as a valid chain continuing from the record before
// from, adds extra new records after them, and points the head at the
// last: what someone with write access to the database, who knows the
// algorithm, can do. It returns the new head.
func forgeChain(t *testing.T, db *sql.DB, from int64, extra int) int64 {
	t.Helper()
	var prev string
	if from > 1 {
		if err := db.QueryRow(`SELECT hash FROM audit WHERE seq = ?`, from-1).Scan(&prev); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	if err := db.QueryRow(`SELECT coalesce(max(seq), 0) FROM audit`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `DELETE FROM audit_metadata WHERE seq >= ?`, from)
	var timeMS int64
	_ = db.QueryRow(`SELECT coalesce(max(time_ms), 0) FROM audit`).Scan(&timeMS)
	mustExec(t, db, `DELETE FROM audit WHERE seq >= ?`, from)
	end := last + int64(extra)
	for seq := from; seq <= end; seq++ {
		r := AuditRecord{Seq: seq, Time: fromMS(timeMS), Tenant: "firm-a", SandboxID: "sb-forged", Template: "t",
			Event: "exec", Metadata: map[string]string{}, Detail: map[string]string{}, Outcome: "ok", PrevHash: prev}
		r.Hash = must(AuditHash(r))
		mustExec(t, db, `INSERT INTO audit (seq, time_ms, tenant, sandbox_id, parent_id, template, event, metadata,
			exit_code, bytes, duration_ms, outcome, detail, prev_hash, hash) VALUES (?, ?, ?, ?, '', ?, ?, '{}', NULL, 0, 0, ?, '{}', ?, ?)`,
			seq, timeMS, r.Tenant, r.SandboxID, r.Template, r.Event, r.Outcome, r.PrevHash, r.Hash)
		prev = r.Hash
	}
	mustExec(t, db, `UPDATE audit_head SET seq = ?, hash = ?`, end, prev)
	return end
}

// The attacks that passed `audit verify` once a few more events were
// logged: a cut tail with the head moved back, and a record erased with
// the chain recomputed. Verify now checks every anchor line, and a store
// reopened on such a log refuses to extend it.
func TestAnchorCatchesRewritesFollowedByAppends(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		tamper   func(t *testing.T, db *sql.DB, recs []AuditRecord)
		firstBad int64
	}{
		{"delete the last 5 and move the head back", 20, func(t *testing.T, db *sql.DB, recs []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq > 15`)
			mustExec(t, db, `DELETE FROM audit WHERE seq > 15`)
			mustExec(t, db, `UPDATE audit_head SET seq = 15, hash = ?`, recs[14].Hash)
		}, 16},
		{"erase record 100 and recompute the chain", 120, func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq = 100`)
			mustExec(t, db, `DELETE FROM audit WHERE seq = 100`)
			forgeChain(t, db, 100, -1) // records 100..119, one fewer
		}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "airlock.db")
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			recs := appendN(t, s, tc.n)
			s.Close()
			raw := rawDB(t, path)
			dropAuditTriggers(t, raw)
			tc.tamper(t, raw, recs)

			s, err = Open(path) // the daemon restarts
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.AuditIntegrity(); !errdefs.IsFailedPrecondition(err) {
				t.Fatalf("AuditIntegrity after tampering: %v, want failed_precondition", err)
			}
			for i := 0; i < 7; i++ {
				if _, err := s.AppendAudit(ctx, AuditRecord{Tenant: "firm-a", Event: "exec", Outcome: "ok"}); !errdefs.IsFailedPrecondition(err) {
					t.Fatalf("append %d to a tampered log: %v, want failed_precondition", i, err)
				}
			}
			if rep := mustVerify(t, s); rep.OK || rep.FirstBadSeq != tc.firstBad {
				t.Fatalf("verify: %+v, want broken at %d", rep, tc.firstBad)
			}
			// The attacker appends ordinary-looking records themselves.
			forgeChain(t, raw, int64(tc.firstBad), 7)
			if rep := mustVerify(t, s); rep.OK || rep.FirstBadSeq != tc.firstBad {
				t.Fatalf("verify after forged appends: %+v, want broken at %d", rep, tc.firstBad)
			}
		})
	}
}

// A live store refuses to extend a chain someone cut back under it.
func TestAppendRefusedWhenCutUnderARunningStore(t *testing.T) {
	s, path := newTestStore(t)
	recs := appendN(t, s, 10)
	raw := rawDB(t, path)
	dropAuditTriggers(t, raw)
	mustExec(t, raw, `DELETE FROM audit_metadata WHERE seq > 8`)
	mustExec(t, raw, `DELETE FROM audit WHERE seq > 8`)
	mustExec(t, raw, `UPDATE audit_head SET seq = 8, hash = ?`, recs[7].Hash)
	if _, err := s.AppendAudit(ctx, AuditRecord{Tenant: "firm-a", Event: "exec", Outcome: "ok"}); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("append after the tail was cut: %v, want failed_precondition", err)
	}
}

// Concurrent appenders in two processes' worth of stores keep the anchor
// in seq order, so a seq that repeats is always a rewrite.
func TestAnchorLinesInOrderAcrossStores(t *testing.T) {
	s1, path := newTestStore(t)
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	done := make(chan struct{})
	go func() { appendN(t, s2, 200); close(done) }()
	appendN(t, s1, 200)
	<-done
	if rep := mustVerify(t, s1); !rep.OK || rep.AnchorSeq != 400 {
		t.Fatalf("verify: %+v", rep)
	}
}
