package pgstore

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func newSandbox(id, tenant string, epoch int64) Sandbox {
	now := time.Now()
	return Sandbox{ID: id, Tenant: tenant, Template: "base", BuildID: "b", NodeID: "n1", NodeEpoch: epoch, State: StateRunning,
		Metadata: map[string]string{"doc": "d1"}, Egress: json.RawMessage(`{"default":"deny"}`), Jailed: true,
		CreatedAt: now, Deadline: now.Add(time.Hour)}
}

// TestCatalogRules checks the catalog's refusals: quota, tenant
// isolation, parents, duplicates, a disabled tenant, and that a terminal
// row never changes, even by SQL that bypasses the store.
func TestCatalogRules(t *testing.T) {
	s, _ := open(t, Options{})
	_, err := s.RegisterNode(ctx, spec("n1", "s1", 0))
	must(t, err)
	must(t, s.PutTenant(ctx, "acme", 2))
	must(t, s.CreateSandbox(ctx, newSandbox("a1", "acme", 1)))
	got, err := s.GetSandbox(ctx, "acme", "a1")
	must(t, err)
	if got.Metadata["doc"] != "d1" || string(got.Egress) == "" || !got.Jailed || got.EndedAt != nil || got.NodeEpoch != 1 {
		t.Fatalf("round trip: %+v", got)
	}
	if err := s.CreateSandbox(ctx, newSandbox("a1", "acme", 1)); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("duplicate id: %v", err)
	}
	child := newSandbox("a2", "acme", 1)
	child.ParentID = "a1"
	must(t, s.CreateSandbox(ctx, child))
	if err := s.CreateSandbox(ctx, newSandbox("a3", "acme", 1)); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Errorf("over quota: %v", err)
	}
	other := newSandbox("b1", "other", 1)
	other.ParentID = "a1"
	if err := s.CreateSandbox(ctx, other); !errdefs.IsNotFound(err) {
		t.Errorf("fork of another tenant's sandbox: %v", err)
	}
	if _, err := s.GetSandbox(ctx, "other", "a1"); !errdefs.IsNotFound(err) {
		t.Errorf("read of another tenant's sandbox: %v", err)
	}
	if _, err := s.KillSandbox(ctx, "other", "a1"); !errdefs.IsNotFound(err) {
		t.Errorf("kill of another tenant's sandbox: %v", err)
	}
	if err := s.CreateSandbox(ctx, newSandbox("b2", "other", 7)); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("create under a stale epoch: %v", err)
	}
	ended, err := s.KillSandbox(ctx, "acme", "a1")
	if err != nil || !ended {
		t.Fatalf("kill: %v, %v", ended, err)
	}
	if ended, err := s.KillSandbox(ctx, "acme", "a1"); err != nil || ended {
		t.Fatalf("second kill: %v, %v; want no-op", ended, err)
	}
	for _, q := range []string{
		`UPDATE sandboxes SET state = 'running', ended_ms = NULL, end_reason = NULL WHERE id = 'a1'`,
		`UPDATE sandboxes SET state = 'lost', end_reason = 'node_lost' WHERE id = 'a1'`,
		`UPDATE sandboxes SET ended_ms = ended_ms + 1 WHERE id = 'a1'`,
		`UPDATE sandboxes SET state = 'creating' WHERE id = 'a2'`,
		`UPDATE sandboxes SET node_epoch = 2 WHERE id = 'a2'`,
	} {
		if _, err := s.pool.Exec(ctx, q); !errdefs.IsFailedPrecondition(mapErr(err)) {
			t.Errorf("%s: %v, want refused by the trigger", q, err)
		}
	}
	if _, err := s.pool.Exec(ctx, `UPDATE sandboxes SET state = 'killed' WHERE id = 'a2'`); !errdefs.IsInvalidArgument(mapErr(err)) {
		t.Errorf("ended without an end time: %v, want a check violation", err)
	}
	must(t, s.SetTenantDisabled(ctx, "acme", true))
	if err := s.CreateSandbox(ctx, newSandbox("a4", "acme", 1)); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("create for a disabled tenant: %v", err)
	}
}

// TestBuilds publishes builds and points a template at one.
func TestBuilds(t *testing.T) {
	s, _ := open(t, Options{})
	sum := "0000000000000000000000000000000000000000000000000000000000000000"
	b := Build{BuildID: "base-1", Name: "base", HostClass: "hc", Manifest: `{}`, MemSHA256: sum, StateSHA256: sum, RootSHA256: sum,
		SizeBytes: 10, MemoryMiB: 512, VCPUs: 1, DefaultTTL: time.Hour, PublishedAt: time.UnixMilli(1_700_000_000_000).UTC()}
	must(t, s.PutBuild(ctx, b))
	must(t, s.PutBuild(ctx, b)) // the same build again: a no-op
	changed := b
	changed.SizeBytes = 11
	if err := s.PutBuild(ctx, changed); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("other content under the same build id: %v", err)
	}
	if _, err := s.CurrentBuild(ctx, "base"); !errdefs.IsNotFound(err) {
		t.Errorf("current build before any: %v", err)
	}
	must(t, s.SetCurrentBuild(ctx, "base", "base-1"))
	got, err := s.CurrentBuild(ctx, "base")
	must(t, err)
	if got != b {
		t.Fatalf("current build %+v, want %+v", got, b)
	}
	if err := s.SetCurrentBuild(ctx, "other", "base-1"); !errdefs.IsInvalidArgument(err) {
		t.Errorf("a build of another template: %v", err)
	}
	_, err = s.RegisterNode(ctx, spec("n1", "s1", 0))
	must(t, err)
	must(t, s.SetNodeBuild(ctx, "n1", "base-1", "pulling", ""))
	if ids, _ := s.NodesWithBuild(ctx, "base-1"); len(ids) != 0 {
		t.Fatalf("pulling counted as ready: %v", ids)
	}
	must(t, s.SetNodeBuild(ctx, "n1", "base-1", "ready", ""))
	if ids, _ := s.NodesWithBuild(ctx, "base-1"); len(ids) != 1 {
		t.Fatalf("ready nodes %v", ids)
	}
}
