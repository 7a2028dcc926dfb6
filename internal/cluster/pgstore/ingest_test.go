package pgstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// nodeChain appends n records to a real single-host store, as a node's
// daemon does, and returns them as its shipper reads them.
func nodeChain(t *testing.T, n int) []store.AuditRecord {
	t.Helper()
	local, err := store.Open(filepath.Join(t.TempDir(), "node.db"))
	must(t, err)
	defer local.Close()
	for i := range n {
		_, err := local.AppendAudit(ctx, store.AuditRecord{Tenant: []string{"a", "b"}[i%2], SandboxID: fmt.Sprintf("sb-%d", i%3),
			Event: store.EventExec, Outcome: "ok", Bytes: int64(i), Metadata: map[string]string{"doc": fmt.Sprint(i % 2)}})
		must(t, err)
	}
	recs, err := local.QueryAudit(ctx, store.AuditFilter{})
	must(t, err)
	return recs
}

// TestShipAuditAcceptsExactExtensionsOnly ships a node's chain in
// batches, then every kind of mutation of a batch: each is refused with
// ErrDiverged and leaves the head where it was; the chain still verifies
// and the next exact batch is accepted.
func TestShipAuditAcceptsExactExtensionsOnly(t *testing.T) {
	s, _ := open(t, Options{})
	ids, epochs := registerNodes(t, s, "node", 1)
	node, epoch := ids[0], epochs[0]
	chain := uuid.NewString()
	recs := nodeChain(t, 12)
	head, err := s.ShipAudit(ctx, node, epoch, chain, recs[:4])
	must(t, err)
	if head.Seq != 4 || head.Hash != recs[3].Hash {
		t.Fatalf("head after the first batch: %+v", head)
	}
	edited := func(i int) []store.AuditRecord {
		b := append([]store.AuditRecord(nil), recs[4:8]...)
		b[i].Bytes++ // content changed after hashing
		return b
	}
	forked := rewriteFrom(t, recs, 2) // another history from record 3 on, consistent in itself
	type mutation struct {
		batch []store.AuditRecord
		why   string // what the refusal must say
	}
	mutations := map[string]mutation{
		"gap (record 5 missing)":           {recs[5:8], "gap"},
		"fork at the head (3-6 rewritten)": {forked[2:6], "fork"},
		"fork past the head (5-8 of it)":   {forked[4:8], "fork"},
		"replay (records 3-4 again)":       {recs[2:4], "replay"},
		"replay of the whole first batch":  {recs[:4], "replay"},
		"overlap (records 4-6)":            {recs[3:6], "replay"},
		"reorder (6 before 5)":             {[]store.AuditRecord{recs[4], recs[6], recs[5], recs[7]}, "out of order"},
		"edited record 5":                  {edited(0), "does not match its hash"},
		"edited record 7":                  {edited(2), "does not match its hash"},
		"hash recomputed, link broken":     {rehashed(t, recs[4:8], 1), "does not link"},
		"time before the head":             {rehashedTime(t, recs[4:5], recs[3].Time.Add(-time.Hour)), "older"},
	}
	for name, m := range mutations {
		_, err := s.ShipAudit(ctx, node, epoch, chain, m.batch)
		if !errors.Is(err, ErrDiverged) || !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), m.why) {
			t.Errorf("%s: %v, want refused as diverged (%s)", name, err, m.why)
		}
	}
	if h, _ := s.GetChainHead(ctx, chain); h.Seq != 4 || h.Hash != recs[3].Hash {
		t.Fatalf("a refused batch moved the head to %+v", h)
	}
	_, err = s.ShipAudit(ctx, node, epoch+1, chain, recs[4:8])
	if !errors.Is(err, ErrFenced) {
		t.Errorf("a batch under another epoch: %v, want fenced", err)
	}
	other, oepochs := registerNodes(t, s, "other", 1)
	if _, err := s.ShipAudit(ctx, other[0], oepochs[0], chain, recs[4:8]); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("another node shipping this node's chain: %v, want permission_denied", err)
	}
	for _, b := range [][2]int{{4, 8}, {8, 12}} {
		if _, err := s.ShipAudit(ctx, node, epoch, chain, recs[b[0]:b[1]]); err != nil {
			t.Fatalf("exact batch %v after the refusals: %v", b, err)
		}
	}
	rep, err := s.VerifyChain(ctx, chain)
	must(t, err)
	if !rep.OK || rep.Records != 12 || rep.LastHash != recs[11].Hash {
		t.Fatalf("verify: %+v", rep)
	}
	t.Logf("%d mutations refused, head unchanged; the chain of 12 verifies", len(mutations))
}

// rewriteFrom returns recs with record i changed and every record from
// it rehashed and relinked: a chain that is valid on its own but forks
// from recs at record i+1.
func rewriteFrom(t *testing.T, recs []store.AuditRecord, i int) []store.AuditRecord {
	b := append([]store.AuditRecord(nil), recs...)
	b[i].Outcome = "internal"
	for j := i; j < len(b); j++ {
		if j > 0 {
			b[j].PrevHash = b[j-1].Hash
		}
		var err error
		b[j].Hash, err = store.AuditHash(b[j])
		must(t, err)
	}
	return b
}

// rehashed returns batch with record i's content changed and its hash
// recomputed: self-consistent, but no longer linked from record i+1.
func rehashed(t *testing.T, batch []store.AuditRecord, i int) []store.AuditRecord {
	b := append([]store.AuditRecord(nil), batch...)
	b[i].Outcome = "internal"
	var err error
	b[i].Hash, err = store.AuditHash(b[i])
	must(t, err)
	return b
}

func rehashedTime(t *testing.T, batch []store.AuditRecord, at time.Time) []store.AuditRecord {
	b := append([]store.AuditRecord(nil), batch...)
	b[0].Time = at.UTC().Truncate(time.Millisecond)
	var err error
	b[0].Hash, err = store.AuditHash(b[0])
	must(t, err)
	return b
}

// TestAuditTableIsAppendOnlyAndLinked checks the schema's own defence:
// UPDATE, DELETE and an unlinked INSERT are refused by triggers.
func TestAuditTableIsAppendOnlyAndLinked(t *testing.T) {
	s, _ := open(t, Options{})
	_, err := s.AppendControl(ctx, store.AuditRecord{Event: store.EventKeyCreate, Outcome: "ok"})
	must(t, err)
	for _, q := range []string{
		`UPDATE audit SET bytes = 1`,
		`DELETE FROM audit`,
		`INSERT INTO audit SELECT chain_id, 2, time_ms, tenant, sandbox_id, parent_id, template, event, metadata,
			exit_code, bytes, duration_ms, outcome, detail, 'not-the-hash', 'x' FROM audit`,
		`UPDATE audit_chains SET head_seq = 0`,
	} {
		_, err := s.pool.Exec(ctx, q)
		if !errdefs.IsFailedPrecondition(mapErr(err)) {
			t.Errorf("%s: %v, want refused by a trigger", q, err)
		}
	}
}

// TestControlChainConcurrentAppenders runs 16 appenders at once, on
// separate connections: the control chain they leave is one linear chain
// that verifies, with every record present.
func TestControlChainConcurrentAppenders(t *testing.T) {
	const appenders, each = 16, 25
	s, _ := open(t, Options{MaxConns: appenders + 2})
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	for a := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				_, err := s.AppendControl(ctx, store.AuditRecord{Tenant: fmt.Sprintf("t%d", a%3), Event: store.EventFail, Outcome: "unavailable",
					SandboxID: fmt.Sprintf("sb-%d-%d", a, i), Detail: map[string]string{"reason": "node_lost"}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rep, err := s.VerifyChain(ctx, ControlChain)
	must(t, err)
	if !rep.OK || rep.Records != appenders*each {
		t.Fatalf("control chain after %d concurrent appenders: %+v", appenders, rep)
	}
	n, err := s.SequenceAudit(ctx)
	must(t, err)
	recs, err := s.QueryAudit(ctx, store.AuditFilter{Tenant: "t1"})
	must(t, err)
	for i, r := range recs {
		if r.TenantSeq != int64(i+1) {
			t.Fatalf("tenant t1's record %d numbered %d", i, r.TenantSeq)
		}
	}
	t.Logf("%d appenders x %d records: one chain of %d that verifies; %d sequenced", appenders, each, rep.Records, n)
}

// TestSequencerOrdersShippedChains ships two node chains concurrently
// with control appends and sequencing: every record gets exactly one
// global number and one number among its tenant's, with no gaps, and a
// reader paging by either never misses one.
func TestSequencerOrdersShippedChains(t *testing.T) {
	s, _ := open(t, Options{})
	ids, epochs := registerNodes(t, s, "node", 2)
	chains := []string{uuid.NewString(), uuid.NewString()}
	recs := [][]store.AuditRecord{nodeChain(t, 40), nodeChain(t, 40)}
	var wg sync.WaitGroup
	for n := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i += 5 {
				if _, err := s.ShipAudit(ctx, ids[n], epochs[n], chains[n], recs[n][i:i+5]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var seen []store.AuditRecord
	var after int64
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < 80 && time.Now().Before(deadline) {
		_, err := s.SequenceAudit(ctx)
		must(t, err)
		page, err := s.QueryAudit(ctx, store.AuditFilter{AfterSeq: after, Limit: 7})
		must(t, err)
		for _, r := range page {
			if r.Seq != after+1 {
				t.Fatalf("paging: record %d after %d", r.Seq, after)
			}
			after = r.Seq
		}
		seen = append(seen, page...)
	}
	wg.Wait()
	if len(seen) != 80 {
		t.Fatalf("paged %d of 80 records", len(seen))
	}
	for _, tenant := range []string{"a", "b"} {
		recs, err := s.QueryAudit(ctx, store.AuditFilter{Tenant: tenant})
		must(t, err)
		for i, r := range recs {
			if r.TenantSeq != int64(i+1) {
				t.Fatalf("tenant %s: record %d numbered %d", tenant, i, r.TenantSeq)
			}
		}
		if len(recs) != 40 {
			t.Fatalf("tenant %s: %d records", tenant, len(recs))
		}
	}
}
