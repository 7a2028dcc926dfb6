package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// fixture appends a small log of two tenants and returns every record as
// the store returns it (unfiltered, in order).
func fixture(t *testing.T, s Subject) []store.AuditRecord {
	t.Helper()
	exit := 3
	recs := []store.AuditRecord{
		{Tenant: "a", SandboxID: "sb1", Template: "base", Event: store.EventCreate, Outcome: "ok", Metadata: map[string]string{"doc": "d1", "job": "j1"}},
		{Tenant: "b", SandboxID: "sb2", Template: "base", Event: store.EventCreate, Outcome: "ok", Metadata: map[string]string{"doc": "d2"}},
		{Tenant: "a", SandboxID: "sb1", Event: store.EventExec, Outcome: "ok", ExitCode: &exit, Bytes: 10, DurationMS: 5, Metadata: map[string]string{"doc": "d1", "job": "j1"}},
		{Tenant: "a", SandboxID: "sb3", ParentID: "sb1", Event: store.EventFork, Outcome: "ok", Metadata: map[string]string{"doc": "d1"}},
		{Tenant: "b", SandboxID: "sb2", Event: store.EventFileRead, Outcome: "not_found", Detail: map[string]string{"path_hmac": "ab"}},
		{Tenant: "", Event: store.EventKeyCreate, Outcome: "ok"},
		{Tenant: "a", SandboxID: "sb1", Event: store.EventKill, Outcome: "ok", Metadata: map[string]string{"doc": "d1", "job": "j2"}},
		{Tenant: "b", SandboxID: "sb2", Event: store.EventExpire, Outcome: "ok"},
	}
	for _, r := range recs {
		must(t, s.Append(ctx, r))
	}
	all, err := s.Store.QueryAudit(ctx, store.AuditFilter{})
	must(t, err)
	if len(all) != len(recs) {
		t.Fatalf("%d records back, %d appended", len(all), len(recs))
	}
	return all
}

// pick returns the records of all that keep says to, in order.
func pick(all []store.AuditRecord, keep func(store.AuditRecord) bool) []store.AuditRecord {
	var out []store.AuditRecord
	for _, r := range all {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func sameRecords(t *testing.T, what string, got, want []store.AuditRecord) {
	t.Helper()
	key := func(rs []store.AuditRecord) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d:%s/%s/%s", r.Seq, r.Tenant, r.SandboxID, r.Event))
		}
		return out
	}
	if g, w := key(got), key(want); !slices.Equal(g, w) {
		t.Fatalf("%s:\n got  %v\n want %v", what, g, w)
	}
}

func query(t *testing.T, s Subject, f store.AuditFilter) []store.AuditRecord {
	t.Helper()
	recs, err := s.Store.QueryAudit(ctx, f)
	must(t, err)
	return recs
}

func auditCases() []Case {
	return []Case{
		{"audit/empty_log", auditEmptyLog},
		{"audit/fields_round_trip", auditFieldsRoundTrip},
		{"audit/order_and_numbering", auditOrderAndNumbering},
		{"audit/filter_tenant", auditFilterTenant},
		{"audit/filter_sandbox", auditFilterSandbox},
		{"audit/filter_events", auditFilterEvents},
		{"audit/filter_metadata_all_pairs", auditFilterMetadataAllPairs},
		{"audit/filter_time_window", auditTimeWindow},
		{"audit/filters_combine_with_limit", auditFiltersCombineWithLimit},
		{"audit/paging_after_seq", auditPagingAfterSeq},
		{"audit/paging_after_tenant_seq", auditPagingAfterTenantSeq},
		{"audit/refuses_bad_filters", auditRefusesBadFilters},
		{"audit/refuses_content_and_bad_records", auditRefusesContentAndBadRecords},
	}
}

func auditEmptyLog(t *testing.T, s Subject) {
	if recs := query(t, s, store.AuditFilter{}); len(recs) != 0 {
		t.Fatalf("%d records in a new store", len(recs))
	}
}

func auditOrderAndNumbering(t *testing.T, s Subject) {
	all := fixture(t, s)
	last := map[string]int64{}
	for i, r := range all {
		if i > 0 && r.Seq <= all[i-1].Seq {
			t.Fatalf("seq %d after %d: not increasing", r.Seq, all[i-1].Seq)
		}
		if r.TenantSeq != last[r.Tenant]+1 {
			t.Fatalf("record %d of tenant %q numbered %d, want %d", r.Seq, r.Tenant, r.TenantSeq, last[r.Tenant]+1)
		}
		last[r.Tenant] = r.TenantSeq
		if r.Hash == "" || (i > 0 && r.PrevHash == "") {
			t.Fatalf("record %d without its chain hashes", r.Seq)
		}
	}
	if last["a"] != 4 || last["b"] != 3 || last[""] != 1 {
		t.Fatalf("per-tenant counts %v", last)
	}
}

func auditFilterTenant(t *testing.T, s Subject) {
	all := fixture(t, s)
	sameRecords(t, "tenant a", query(t, s, store.AuditFilter{Tenant: "a"}), pick(all, func(r store.AuditRecord) bool { return r.Tenant == "a" }))
}

func auditFilterSandbox(t *testing.T, s Subject) {
	all := fixture(t, s)
	sameRecords(t, "sandbox sb2", query(t, s, store.AuditFilter{SandboxID: "sb2"}), pick(all, func(r store.AuditRecord) bool { return r.SandboxID == "sb2" }))
}

func auditFilterEvents(t *testing.T, s Subject) {
	all := fixture(t, s)
	ev := []string{store.EventCreate, store.EventKill}
	sameRecords(t, "create or kill", query(t, s, store.AuditFilter{Events: ev}), pick(all, func(r store.AuditRecord) bool { return slices.Contains(ev, r.Event) }))
}

func auditFilterMetadataAllPairs(t *testing.T, s Subject) {
	all := fixture(t, s)
	md := map[string]string{"doc": "d1", "job": "j1"}
	sameRecords(t, "doc=d1 job=j1", query(t, s, store.AuditFilter{Metadata: md}), pick(all, func(r store.AuditRecord) bool {
		return r.Metadata["doc"] == "d1" && r.Metadata["job"] == "j1"
	}))
	sameRecords(t, "doc=d1", query(t, s, store.AuditFilter{Metadata: map[string]string{"doc": "d1"}}), pick(all, func(r store.AuditRecord) bool {
		return r.Metadata["doc"] == "d1"
	}))
	if got := query(t, s, store.AuditFilter{Metadata: map[string]string{"doc": "nope"}}); len(got) != 0 {
		t.Fatalf("no record has doc=nope, got %d", len(got))
	}
}

func auditFiltersCombineWithLimit(t *testing.T, s Subject) {
	all := fixture(t, s)
	want := pick(all, func(r store.AuditRecord) bool {
		return r.Tenant == "a" && r.Metadata["doc"] == "d1" && r.Event != store.EventFork
	})[:2]
	got := query(t, s, store.AuditFilter{Tenant: "a", Metadata: map[string]string{"doc": "d1"},
		Events: []string{store.EventCreate, store.EventExec, store.EventKill}, Limit: 2})
	sameRecords(t, "combined", got, want)
}

func auditPagingAfterSeq(t *testing.T, s Subject) {
	all := fixture(t, s)
	var got []store.AuditRecord
	var after int64
	for pages := 0; ; pages++ {
		page := query(t, s, store.AuditFilter{AfterSeq: after, Limit: 3})
		if len(page) == 0 || pages > len(all) {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].Seq
	}
	sameRecords(t, "pages of 3", got, all)
}

func auditPagingAfterTenantSeq(t *testing.T, s Subject) {
	all := fixture(t, s)
	var got []store.AuditRecord
	var after int64
	for pages := 0; ; pages++ {
		page := query(t, s, store.AuditFilter{Tenant: "a", AfterTenantSeq: after, Limit: 2})
		if len(page) == 0 || pages > len(all) {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].TenantSeq
	}
	sameRecords(t, "tenant a in pages of 2", got, pick(all, func(r store.AuditRecord) bool { return r.Tenant == "a" }))
	// A later append continues the tenant's numbering after the cursor.
	must(t, s.Append(ctx, store.AuditRecord{Tenant: "a", Event: store.EventExec, Outcome: "ok"}))
	next := query(t, s, store.AuditFilter{Tenant: "a", AfterTenantSeq: after})
	if len(next) != 1 || next[0].TenantSeq != after+1 {
		t.Fatalf("after the cursor %d: %+v", after, next)
	}
}

func auditRefusesBadFilters(t *testing.T, s Subject) {
	_, err := s.Store.QueryAudit(ctx, store.AuditFilter{AfterTenantSeq: 1})
	wantClass(t, "tenant cursor without tenant", err, errdefs.ErrInvalidArgument)
	_, err = s.Store.QueryAudit(ctx, store.AuditFilter{Limit: -1})
	wantClass(t, "negative limit", err, errdefs.ErrInvalidArgument)
	_, err = s.Store.QueryAudit(ctx, store.AuditFilter{Tenant: "Bad Tenant"})
	wantClass(t, "bad tenant", err, errdefs.ErrInvalidArgument)
}

func auditRefusesContentAndBadRecords(t *testing.T, s Subject) {
	for name, r := range map[string]store.AuditRecord{
		"content detail": {Event: store.EventExec, Outcome: "ok", Detail: map[string]string{"cmd": "cat /etc/passwd"}},
		"bad event":      {Event: "Exec!", Outcome: "ok"},
		"no outcome":     {Event: store.EventExec},
		"negative bytes": {Event: store.EventExec, Outcome: "ok", Bytes: -1},
	} {
		wantClass(t, name, s.Append(ctx, r), errdefs.ErrInvalidArgument)
	}
	if recs := query(t, s, store.AuditFilter{}); len(recs) != 0 {
		t.Fatalf("refused records were kept: %d", len(recs))
	}
}

func auditFieldsRoundTrip(t *testing.T, s Subject) {
	exit := 7
	in := store.AuditRecord{Tenant: "acme", SandboxID: "sb-1", ParentID: "sb-0", Template: "invoice-ocr.v2",
		Event: store.EventExec, Metadata: map[string]string{"doc": "x", "k": "v"}, ExitCode: &exit,
		Bytes: 1234, DurationMS: 56, Outcome: "deadline_exceeded", Detail: map[string]string{"timed_out": "1"}}
	before := time.Now().Add(-time.Second)
	must(t, s.Append(ctx, in))
	recs := query(t, s, store.AuditFilter{})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Tenant != in.Tenant || r.SandboxID != in.SandboxID || r.ParentID != in.ParentID || r.Template != in.Template ||
		r.Event != in.Event || r.Outcome != in.Outcome || r.Bytes != in.Bytes || r.DurationMS != in.DurationMS ||
		r.ExitCode == nil || *r.ExitCode != exit || !maps.Equal(r.Metadata, in.Metadata) || !maps.Equal(r.Detail, in.Detail) {
		t.Fatalf("got %+v, appended %+v", r, in)
	}
	if r.Time.Before(before) || r.Time.After(time.Now().Add(time.Second)) || r.TenantSeq != 1 || r.PrevHash != "" || len(r.Hash) != 64 {
		t.Fatalf("assigned fields: time %v tenant seq %d prev %q hash %q", r.Time, r.TenantSeq, r.PrevHash, r.Hash)
	}
	if m := query(t, s, store.AuditFilter{})[0].Metadata; m == nil {
		t.Fatal("metadata lost on a second read")
	}
	must(t, s.Append(ctx, store.AuditRecord{Event: store.EventKeyCreate, Outcome: "ok"}))
	recs = query(t, s, store.AuditFilter{})
	if recs[1].ExitCode != nil || recs[1].Metadata != nil || recs[1].Detail != nil || recs[1].PrevHash != recs[0].Hash {
		t.Fatalf("second record %+v: want no exit code, nil maps, linked to the first", recs[1])
	}
}

func auditTimeWindow(t *testing.T, s Subject) {
	all := fixture(t, s)
	// Cut between records by their own times (several may share a
	// millisecond): Since is inclusive, Until exclusive.
	mid := all[len(all)/2].Time
	sameRecords(t, "since mid", query(t, s, store.AuditFilter{Since: mid}), pick(all, func(r store.AuditRecord) bool { return !r.Time.Before(mid) }))
	sameRecords(t, "until mid", query(t, s, store.AuditFilter{Until: mid}), pick(all, func(r store.AuditRecord) bool { return r.Time.Before(mid) }))
	first, last := all[0].Time, all[len(all)-1].Time
	sameRecords(t, "whole window", query(t, s, store.AuditFilter{Since: first, Until: last.Add(time.Millisecond)}), all)
	if got := query(t, s, store.AuditFilter{Since: last.Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("%d records after the last", len(got))
	}
}
