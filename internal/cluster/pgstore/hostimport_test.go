package pgstore

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// The import steps are idempotent and refuse what would overwrite
// another's rows: a key id under another hash, a sandbox id of another
// node, a live sandbox, a chain bound to another node, and records that
// do not extend the chain's head.
func TestImportSteps(t *testing.T) {
	s, _ := open(t, Options{})
	must(t, s.ImportHostNode(ctx, "oldhost", "class-a"))
	must(t, s.ImportHostNode(ctx, "oldhost", "class-b")) // kept as it was
	n, err := s.NodeStatusOf(ctx, "oldhost")
	if err != nil || n.State != "left" || n.Epoch != importEpoch || n.HostClass != "class-a" {
		t.Fatalf("imported node: %+v, %v", n, err)
	}

	now := time.Now().UTC().Truncate(time.Millisecond)
	_, k, err := store.NewKey("imp", "laptop", now)
	must(t, err)
	key := store.StoredKey{Key: k, Hash: store.HashKey("alk_not-a-real-key")}
	if added, err := s.ImportKeys(ctx, []store.StoredKey{key}); err != nil || added != 1 {
		t.Fatalf("import key: %d, %v", added, err)
	}
	key.RevokedAt = &now
	if added, err := s.ImportKeys(ctx, []store.StoredKey{key}); err != nil || added != 0 {
		t.Fatalf("import the key again, revoked: %d, %v", added, err)
	}
	keys, err := s.ListKeys(ctx, "imp")
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("keys after a revoked import: %+v, %v", keys, err)
	}
	other := key
	other.Hash = store.HashKey("alk_another")
	if _, err := s.ImportKeys(ctx, []store.StoredKey{other}); errdefs.Class(err) != errdefs.ErrAlreadyExists {
		t.Errorf("a key id under another hash: %v, want already_exists", err)
	}

	ended := store.Sandbox{ID: "sbx-old-1", Tenant: "imp", Template: "base", State: store.StateExpired,
		CreatedAt: now, Deadline: now.Add(time.Minute), EndedAt: &now}
	child := ended
	child.ID, child.ParentID, child.State = "sbx-old-2", "sbx-old-1", store.StateFailed
	orphan := ended
	orphan.ID, orphan.ParentID = "sbx-old-3", "sbx-gone"
	for round := range 2 {
		added, err := s.ImportEnded(ctx, "oldhost", []store.Sandbox{ended, child, orphan})
		if err != nil || added != 3*(1-round) {
			t.Fatalf("import ended, round %d: %d, %v", round, added, err)
		}
	}
	got, err := s.GetSandbox(ctx, "imp", "sbx-old-2")
	if err != nil || got.State != StateFailed || got.EndReason != StateFailed || got.ParentID != "sbx-old-1" || got.NodeID != "oldhost" {
		t.Fatalf("imported child: %+v, %v", got, err)
	}
	if got, _ := s.GetSandbox(ctx, "imp", "sbx-old-3"); got.ParentID != "" {
		t.Errorf("a parent not in the catalog was kept: %+v", got)
	}
	live := ended
	live.ID, live.State, live.EndedAt = "sbx-live", store.StateRunning, nil
	if _, err := s.ImportEnded(ctx, "oldhost", []store.Sandbox{live}); errdefs.Class(err) != errdefs.ErrInvalidArgument {
		t.Errorf("a live sandbox: %v, want invalid_argument", err)
	}
	must(t, s.ImportHostNode(ctx, "otherhost", ""))
	if _, err := s.ImportEnded(ctx, "otherhost", []store.Sandbox{ended}); errdefs.Class(err) != errdefs.ErrAlreadyExists {
		t.Errorf("another node's sandbox id: %v, want already_exists", err)
	}

	chain, recs := uuid.NewString(), nodeChain(t, 6)
	if _, err := s.ImportChain(ctx, "oldhost", chain, recs[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportChain(ctx, "oldhost", chain, recs[:4]); !errors.Is(err, ErrDiverged) {
		t.Errorf("the same records again: %v, want ErrDiverged (the caller ships after the head)", err)
	}
	if _, err := s.ImportChain(ctx, "otherhost", chain, recs[4:]); errdefs.Class(err) != errdefs.ErrPermissionDenied {
		t.Errorf("oldhost's chain as otherhost's: %v, want permission_denied", err)
	}
	head, err := s.ImportChain(ctx, "oldhost", chain, recs[4:])
	if err != nil || head.Seq != 6 {
		t.Fatalf("the rest: %+v, %v", head, err)
	}
	if rep, err := s.VerifyChain(ctx, chain); err != nil || !rep.OK || rep.Records != 6 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	if h, err := s.ChainRecordHash(ctx, chain, 6); err != nil || h != recs[5].Hash {
		t.Errorf("record 6's hash: %q, %v", h, err)
	}
}
