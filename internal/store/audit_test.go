package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func intp(i int) *int { return &i }

// appendN appends n varied records and returns them as stored.
func appendN(t *testing.T, s *Store, n int) []AuditRecord {
	t.Helper()
	var out []AuditRecord
	for i := 0; i < n; i++ {
		r, err := s.AppendAudit(ctx, AuditRecord{
			Tenant:     "firm-a",
			SandboxID:  fmt.Sprintf("sb-%d", i%3),
			Template:   "legal-doc-review",
			Event:      []string{"create", "exec", "file_write", "kill"}[i%4],
			Metadata:   map[string]string{"matter": "m1", "doc": fmt.Sprintf("d%d", i)},
			ExitCode:   intp(i % 2),
			Bytes:      int64(100 * i),
			DurationMS: int64(i),
			Outcome:    "ok",
			Detail:     map[string]string{"path_sha256": fmt.Sprintf("%064d", i)},
		})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

func mustVerify(t *testing.T, s *Store) VerifyReport {
	t.Helper()
	rep, err := s.VerifyAudit(ctx)
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	return rep
}

func TestAuditAppendAndVerify(t *testing.T) {
	s, _ := newTestStore(t)
	if rep := mustVerify(t, s); !rep.OK || rep.Records != 0 {
		t.Fatalf("empty log: %+v, want OK with 0 records", rep)
	}
	clock := useClock(s, t0)
	recs := appendN(t, s, 5)
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
		wantPrev := ""
		if i > 0 {
			wantPrev = recs[i-1].Hash
		}
		if r.PrevHash != wantPrev || len(r.Hash) != 64 {
			t.Errorf("record %d: prev %q hash %q", r.Seq, r.PrevHash, r.Hash)
		}
		if !r.Time.Equal(t0) {
			t.Errorf("record %d time %v, want %v", r.Seq, r.Time, t0)
		}
	}
	rep := mustVerify(t, s)
	if !rep.OK || rep.Records != 5 || rep.FirstBadSeq != 0 || rep.Problem != "" || rep.LastHash != recs[4].Hash {
		t.Fatalf("verify = %+v", rep)
	}

	// Records read back are exactly what AppendAudit returned.
	got, err := s.QueryAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("QueryAudit =\n%+v\nwant\n%+v", got, recs)
	}

	// The wall clock stepping back does not make the log go back in time.
	clock.Set(t0.Add(-time.Hour))
	r, err := s.AppendAudit(ctx, AuditRecord{Event: "expire", Outcome: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Time.Equal(t0) {
		t.Errorf("time after clock step back = %v, want clamped to %v", r.Time, t0)
	}
	if rep := mustVerify(t, s); !rep.OK || rep.Records != 6 {
		t.Fatalf("verify = %+v", rep)
	}
}

func TestAuditCallerCannotChooseChainFields(t *testing.T) {
	s, _ := newTestStore(t)
	appendN(t, s, 2)
	r, err := s.AppendAudit(ctx, AuditRecord{Seq: 99, PrevHash: "forged", Hash: "forged", Time: t0, Event: "exec", Outcome: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 3 || r.PrevHash == "forged" || r.Hash == "forged" {
		t.Errorf("caller-chosen chain fields were used: %+v", r)
	}
	if rep := mustVerify(t, s); !rep.OK {
		t.Fatalf("verify = %+v", rep)
	}
}

func TestAuditHashIsCanonical(t *testing.T) {
	r := AuditRecord{
		Seq: 7, Time: t0, Tenant: "firm-a", SandboxID: "sb-1", ParentID: "sb-0", Template: "invoice-ocr",
		Event: "exec", Metadata: map[string]string{"b": "2", "a": "<1&>"}, ExitCode: intp(0), Bytes: 10,
		DurationMS: 20, Outcome: "ok", Detail: map[string]string{"timed_out": "false"}, PrevHash: "abc",
	}
	// Changing these breaks every existing audit log: bump
	// auditHashVersion and keep the old form verifiable instead.
	const golden = `{"v":1,"seq":7,"time_ms":1741944413589,"tenant":"firm-a","sandbox_id":"sb-1",` +
		`"parent_id":"sb-0","template":"invoice-ocr","event":"exec","metadata":{"a":"<1&>","b":"2"},` +
		`"exit_code":0,"bytes":10,"duration_ms":20,"outcome":"ok","detail":{"timed_out":"false"},"prev_hash":"abc"}`
	body, err := canonicalJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != golden {
		t.Errorf("canonical JSON changed:\n got %s\nwant %s", body, golden)
	}
	h1, err := AuditHash(r)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("abc" + golden))
	if want := hex.EncodeToString(sum[:]); h1 != want {
		t.Errorf("hash = %s, want hex(sha256(prev_hash || canonical JSON)) = %s", h1, want)
	}
	empty := r
	empty.Metadata, empty.Detail = nil, nil
	empty2 := r
	empty2.Metadata, empty2.Detail = map[string]string{}, map[string]string{}
	if a, b := must(AuditHash(empty)), must(AuditHash(empty2)); a != b {
		t.Error("nil and empty maps hash differently")
	}
	// Every field is covered.
	for name, edit := range map[string]func(*AuditRecord){
		"Seq":        func(r *AuditRecord) { r.Seq++ },
		"Time":       func(r *AuditRecord) { r.Time = r.Time.Add(time.Millisecond) },
		"Tenant":     func(r *AuditRecord) { r.Tenant = "firm-b" },
		"SandboxID":  func(r *AuditRecord) { r.SandboxID = "sb-2" },
		"ParentID":   func(r *AuditRecord) { r.ParentID = "" },
		"Template":   func(r *AuditRecord) { r.Template = "x" },
		"Event":      func(r *AuditRecord) { r.Event = "kill" },
		"Metadata":   func(r *AuditRecord) { r.Metadata = map[string]string{"b": "2", "a": "1"} },
		"ExitCode":   func(r *AuditRecord) { r.ExitCode = nil },
		"ExitCode1":  func(r *AuditRecord) { r.ExitCode = intp(1) },
		"Bytes":      func(r *AuditRecord) { r.Bytes++ },
		"DurationMS": func(r *AuditRecord) { r.DurationMS++ },
		"Outcome":    func(r *AuditRecord) { r.Outcome = "internal" },
		"Detail":     func(r *AuditRecord) { r.Detail = nil },
		"PrevHash":   func(r *AuditRecord) { r.PrevHash = "abd" },
	} {
		c := r
		edit(&c)
		if must(AuditHash(c)) == h1 {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

func TestAuditValidation(t *testing.T) {
	s, _ := newTestStore(t)
	ok := AuditRecord{Event: "exec", Outcome: "ok"}
	for _, tc := range []struct {
		name string
		edit func(*AuditRecord)
	}{
		{"no event", func(r *AuditRecord) { r.Event = "" }},
		{"event with spaces", func(r *AuditRecord) { r.Event = "python3 /opt/x.py" }},
		{"no outcome", func(r *AuditRecord) { r.Outcome = "" }},
		{"bad tenant", func(r *AuditRecord) { r.Tenant = "Firm A" }},
		{"bad sandbox id", func(r *AuditRecord) { r.SandboxID = "/job/in.pdf" }},
		{"negative bytes", func(r *AuditRecord) { r.Bytes = -1 }},
		{"negative duration", func(r *AuditRecord) { r.DurationMS = -1 }},
		{"command in detail", func(r *AuditRecord) { r.Detail = map[string]string{"cmd": "cat secret"} }},
		{"path in detail", func(r *AuditRecord) { r.Detail = map[string]string{"Path": "/job/in.pdf"} }},
		{"stdout in detail", func(r *AuditRecord) { r.Detail = map[string]string{"stdout": "..."} }},
		{"long detail value", func(r *AuditRecord) { r.Detail = map[string]string{"note": strings.Repeat("x", 257)} }},
		{"too much metadata", func(r *AuditRecord) {
			r.Metadata = map[string]string{}
			for i := 0; i < 65; i++ {
				r.Metadata[fmt.Sprint(i)] = "x"
			}
		}},
	} {
		r := ok
		tc.edit(&r)
		if _, err := s.AppendAudit(ctx, r); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: AppendAudit = %v, want InvalidArgument", tc.name, err)
		}
	}
	if rep := mustVerify(t, s); !rep.OK || rep.Records != 0 {
		t.Errorf("refused appends left records: %+v", rep)
	}
}

func TestAuditTriggersRefuseEdits(t *testing.T) {
	s, _ := newTestStore(t)
	appendN(t, s, 3)
	for _, q := range []string{
		`UPDATE audit SET outcome = 'internal' WHERE seq = 2`,
		`DELETE FROM audit WHERE seq = 3`,
		`UPDATE audit_metadata SET value = 'x' WHERE seq = 1`,
		`DELETE FROM audit_metadata WHERE seq = 1`,
		`DELETE FROM audit_head`,
		`UPDATE audit_head SET seq = 2`,
		`UPDATE audit_head SET seq = 10`,
		`INSERT INTO audit (seq, time_ms, tenant, sandbox_id, parent_id, template, event, metadata,
			bytes, duration_ms, outcome, detail, prev_hash, hash) VALUES (9, 0, '', '', '', '', 'x', '{}', 0, 0, 'ok', '{}', '', '')`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err == nil {
			t.Errorf("%s: succeeded, want refused by a trigger", q)
		}
	}
	if rep := mustVerify(t, s); !rep.OK || rep.Records != 3 {
		t.Errorf("verify = %+v", rep)
	}
}

// dropAuditTriggers removes the schema's protection, as an attacker with
// write access to the file would.
func dropAuditTriggers(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, tr := range []string{"audit_no_update", "audit_no_delete", "audit_insert_at_head",
		"audit_metadata_no_update", "audit_metadata_no_delete", "audit_head_no_delete", "audit_head_forward_only"} {
		mustExec(t, db, "DROP TRIGGER "+tr)
	}
}

func TestAuditVerifyDetectsTampering(t *testing.T) {
	const n = 10
	swapCols := []string{"time_ms", "tenant", "sandbox_id", "parent_id", "template", "event", "metadata",
		"exit_code", "bytes", "duration_ms", "outcome", "detail", "prev_hash", "hash"}

	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, db *sql.DB, recs []AuditRecord)
		bad    int64
		// headOnly: every record verifies and only the head disagrees,
		// so all n records count as verified.
		headOnly bool
	}{
		{"modify outcome", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET outcome = 'not_found' WHERE seq = 4`)
		}, 4, false},
		{"modify exit code", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET exit_code = NULL WHERE seq = 1`)
		}, 1, false},
		{"modify time", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET time_ms = time_ms - 1 WHERE seq = 6`)
		}, 6, false},
		{"modify metadata", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET metadata = '{"doc":"d6","matter":"m2"}' WHERE seq = 7`)
			mustExec(t, db, `UPDATE audit_metadata SET value = 'm2' WHERE seq = 7 AND key = 'matter'`)
		}, 7, false},
		{"modify detail", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET detail = '{}' WHERE seq = 8`)
		}, 8, false},
		{"modify the last record", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET bytes = 1 WHERE seq = 10`)
		}, 10, false},
		{"undecodable metadata", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET metadata = 'not json' WHERE seq = 5`)
		}, 5, false},
		{"metadata index only", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			// Makes QueryAudit lie about record 3 while the record is intact.
			mustExec(t, db, `UPDATE audit_metadata SET value = 'm9' WHERE seq = 3 AND key = 'matter'`)
		}, 3, false},
		{"modify and rehash", func(t *testing.T, db *sql.DB, recs []AuditRecord) {
			// An attacker who knows the algorithm fixes the record's own
			// hash; the next record's link still exposes it.
			r := recs[3]
			r.Outcome = "not_found"
			h := must(AuditHash(r))
			mustExec(t, db, `UPDATE audit SET outcome = 'not_found', hash = ? WHERE seq = 4`, h)
		}, 5, false},
		{"delete a middle record", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq = 5`)
			mustExec(t, db, `DELETE FROM audit WHERE seq = 5`)
		}, 5, false},
		{"delete the first record", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq = 1`)
			mustExec(t, db, `DELETE FROM audit WHERE seq = 1`)
		}, 1, false},
		{"delete a middle record and renumber", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq = 5`)
			mustExec(t, db, `DELETE FROM audit WHERE seq = 5`)
			for seq := 6; seq <= n; seq++ {
				mustExec(t, db, `UPDATE audit_metadata SET seq = seq - 1 WHERE seq = ?`, seq)
				mustExec(t, db, `UPDATE audit SET seq = seq - 1 WHERE seq = ?`, seq)
			}
			mustExec(t, db, `UPDATE audit_head SET seq = seq - 1, hash = (SELECT hash FROM audit WHERE seq = ?)`, n-1)
		}, 5, false},
		{"delete the tail record", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq = 10`)
			mustExec(t, db, `DELETE FROM audit WHERE seq = 10`)
		}, 10, false},
		{"delete the last three records", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq >= 8`)
			mustExec(t, db, `DELETE FROM audit WHERE seq >= 8`)
		}, 8, false},
		{"delete every record", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_metadata`)
			mustExec(t, db, `DELETE FROM audit`)
		}, 1, false},
		{"delete the last three records and rewrite the head", func(t *testing.T, db *sql.DB, recs []AuditRecord) {
			// Consistent inside the database: only the anchor outside it
			// still knows record 10 existed.
			mustExec(t, db, `DELETE FROM audit_metadata WHERE seq >= 8`)
			mustExec(t, db, `DELETE FROM audit WHERE seq >= 8`)
			mustExec(t, db, `UPDATE audit_head SET seq = 7, hash = ?`, recs[6].Hash)
		}, 8, false},
		{"recompute the chain from a record on", func(t *testing.T, db *sql.DB, recs []AuditRecord) {
			// Rewrite record 10 (the newest) with its hash recomputed and the
			// head to match: the chain and the head agree, the anchor not.
			r := recs[9]
			r.Outcome = "not_found"
			h := must(AuditHash(r))
			mustExec(t, db, `UPDATE audit SET outcome = 'not_found', hash = ? WHERE seq = 10`, h)
			mustExec(t, db, `UPDATE audit_head SET hash = ?`, h)
		}, 10, true},
		{"roll the head back with the tail", func(t *testing.T, db *sql.DB, recs []AuditRecord) {
			// Consistent deletion of the tail plus head: only an external
			// copy of LastHash can catch this, so here only the head row is
			// rolled back and the records are left: they are uncovered.
			mustExec(t, db, `UPDATE audit_head SET seq = 9, hash = ?`, recs[8].Hash)
		}, 10, true},
		{"forge the head hash", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit_head SET hash = 'ffff'`)
		}, 10, true},
		{"delete the head row", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `DELETE FROM audit_head`)
		}, 11, false},
		{"swap two records' content", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			// Everything but seq moves, hashes included: a reordering.
			set := make([]string, len(swapCols))
			for i, c := range swapCols {
				set[i] = fmt.Sprintf("%s = (SELECT %s FROM audit_copy c WHERE c.seq = 9 - audit.seq)", c, c)
			}
			mustExec(t, db, `CREATE TEMP TABLE audit_copy AS SELECT * FROM audit WHERE seq IN (3, 6)`)
			mustExec(t, db, `UPDATE audit SET `+strings.Join(set, ", ")+` WHERE seq IN (3, 6)`)
		}, 3, false},
		{"swap two records' seq", func(t *testing.T, db *sql.DB, _ []AuditRecord) {
			mustExec(t, db, `UPDATE audit SET seq = 100 WHERE seq = 3`)
			mustExec(t, db, `UPDATE audit SET seq = 3 WHERE seq = 6`)
			mustExec(t, db, `UPDATE audit SET seq = 6 WHERE seq = 100`)
		}, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := newTestStore(t)
			recs := appendN(t, s, n)
			if rep := mustVerify(t, s); !rep.OK {
				t.Fatalf("before tampering: %+v", rep)
			}
			raw := rawDB(t, path)
			dropAuditTriggers(t, raw)
			tc.tamper(t, raw, recs)

			rep := mustVerify(t, s)
			if rep.OK {
				t.Fatalf("tampering not detected: %+v", rep)
			}
			if rep.FirstBadSeq != tc.bad {
				t.Errorf("FirstBadSeq = %d, want %d (%s)", rep.FirstBadSeq, tc.bad, rep.Problem)
			}
			if rep.Problem == "" {
				t.Error("no Problem given")
			}
			wantRecords := min(tc.bad-1, n)
			if tc.headOnly {
				wantRecords = n
			}
			if rep.Records != wantRecords {
				t.Errorf("Records = %d, want %d", rep.Records, wantRecords)
			}
			t.Logf("report: %+v", rep)
		})
	}
}

func TestAuditConcurrentAppends(t *testing.T) {
	s, _ := newTestStore(t)
	const workers, each = 50, 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs []int64
		errs []error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r, err := s.AppendAudit(ctx, AuditRecord{
					Tenant: fmt.Sprintf("tenant-%d", w%5), SandboxID: fmt.Sprintf("sb-%d-%d", w, i),
					Event: "exec", Outcome: "ok", Metadata: map[string]string{"worker": fmt.Sprint(w)},
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seqs = append(seqs, r.Seq)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d appends failed, first: %v", len(errs), errs[0])
	}
	slices.Sort(seqs)
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seqs are not 1..%d: position %d has %d", workers*each, i, seq)
		}
	}
	rep := mustVerify(t, s)
	if !rep.OK || rep.Records != workers*each {
		t.Fatalf("verify after concurrent appends = %+v", rep)
	}
	got, err := s.QueryAudit(ctx, AuditFilter{Metadata: map[string]string{"worker": "7"}})
	if err != nil || len(got) != each {
		t.Errorf("records of worker 7 = %d, %v; want %d", len(got), err, each)
	}
}

func TestAuditVerifyWhileAppending(t *testing.T) {
	// Verify reads a snapshot: appends racing with it never look like a
	// head mismatch.
	s, _ := newTestStore(t)
	appendN(t, s, 50)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			if _, err := s.AppendAudit(ctx, AuditRecord{Event: "exec", Outcome: "ok"}); err != nil {
				t.Errorf("append: %v", err)
				return
			}
		}
	}()
	for i := 0; i < 10; i++ {
		if rep := mustVerify(t, s); !rep.OK {
			t.Fatalf("verify during appends: %+v", rep)
		}
	}
	<-done
}

func TestQueryAudit(t *testing.T) {
	s, _ := newTestStore(t)
	clock := useClock(s, t0)
	add := func(at time.Duration, tenant, sandboxID, event string, md map[string]string) {
		t.Helper()
		clock.Set(t0.Add(at))
		if _, err := s.AppendAudit(ctx, AuditRecord{Tenant: tenant, SandboxID: sandboxID, Event: event, Outcome: "ok", Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	add(0, "firm-a", "sb-1", "create", map[string]string{"matter": "m1", "doc": "d1"})             // 1
	add(1*time.Minute, "firm-a", "sb-1", "exec", map[string]string{"matter": "m1", "doc": "d1"})   // 2
	add(2*time.Minute, "firm-a", "sb-2", "create", map[string]string{"matter": "m1", "doc": "d2"}) // 3
	add(3*time.Minute, "firm-b", "sb-3", "create", map[string]string{"matter": "m1", "doc": "d1"}) // 4
	add(4*time.Minute, "firm-a", "sb-1", "kill", map[string]string{"matter": "m1", "doc": "d1"})   // 5
	add(5*time.Minute, "firm-a", "sb-4", "create", map[string]string{"matter": "m2", "doc": "d1"}) // 6
	add(6*time.Minute, "", "", "key_create", nil)                                                  // 7

	for _, tc := range []struct {
		name string
		f    AuditFilter
		want []int64
	}{
		{"all", AuditFilter{}, []int64{1, 2, 3, 4, 5, 6, 7}},
		{"tenant", AuditFilter{Tenant: "firm-b"}, []int64{4}},
		{"sandbox", AuditFilter{SandboxID: "sb-1"}, []int64{1, 2, 5}},
		{"sandbox of other tenant", AuditFilter{Tenant: "firm-b", SandboxID: "sb-1"}, nil},
		{"metadata one key", AuditFilter{Metadata: map[string]string{"doc": "d1"}}, []int64{1, 2, 4, 5, 6}},
		{"metadata two keys", AuditFilter{Metadata: map[string]string{"doc": "d1", "matter": "m1"}}, []int64{1, 2, 4, 5}},
		{"metadata and tenant", AuditFilter{Tenant: "firm-a", Metadata: map[string]string{"doc": "d1", "matter": "m1"}}, []int64{1, 2, 5}},
		{"metadata split across records", AuditFilter{Metadata: map[string]string{"doc": "d2", "matter": "m2"}}, nil},
		{"metadata no match", AuditFilter{Metadata: map[string]string{"doc": "d9"}}, nil},
		{"since inclusive", AuditFilter{Since: t0.Add(4 * time.Minute)}, []int64{5, 6, 7}},
		{"until exclusive", AuditFilter{Until: t0.Add(2 * time.Minute)}, []int64{1, 2}},
		{"window", AuditFilter{Since: t0.Add(time.Minute), Until: t0.Add(3*time.Minute + time.Millisecond)}, []int64{2, 3, 4}},
		{"events", AuditFilter{Events: []string{"kill", "exec"}}, []int64{2, 5}},
		{"limit", AuditFilter{Tenant: "firm-a", Limit: 2}, []int64{1, 2}},
		{"page after", AuditFilter{Tenant: "firm-a", AfterSeq: 2, Limit: 2}, []int64{3, 5}},
		{"everything at once", AuditFilter{Tenant: "firm-a", SandboxID: "sb-1", Metadata: map[string]string{"doc": "d1"},
			Since: t0.Add(time.Minute), Events: []string{"kill"}}, []int64{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.QueryAudit(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, r := range got {
				seqs = append(seqs, r.Seq)
			}
			if !slices.Equal(seqs, tc.want) {
				t.Errorf("QueryAudit = %v, want %v", seqs, tc.want)
			}
		})
	}
	for _, f := range []AuditFilter{{Tenant: "Bad"}, {Limit: -1}} {
		if _, err := s.QueryAudit(ctx, f); !errdefs.IsInvalidArgument(err) {
			t.Errorf("QueryAudit(%+v) = %v, want InvalidArgument", f, err)
		}
	}
}

// A reader that meets a line still being written (or cut by a crash) sees
// the anchor as of the line before; a complete malformed line is an error.
func TestReadAnchorPartialLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchor")
	h1, h2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if err := os.WriteFile(path, []byte("1 "+h1+"\n2 "+h2[:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	if seq, hash, err := readAnchor(path); err != nil || seq != 1 || hash != h1 {
		t.Errorf("half-written last line: %d %q %v, want 1 and the first hash", seq, hash, err)
	}
	if err := os.WriteFile(path, []byte("1 "+h1+"\n2 "+h2[:20]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAnchor(path); err == nil {
		t.Error("a complete malformed line was accepted")
	}
}
