package pgstore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

func spec(id, secret string, epoch int64) NodeSpec {
	return NodeSpec{ID: id, Addr: "127.0.0.1:1", HostClass: "hc", Version: "test", Secret: secret, Epoch: epoch,
		Capacity: Capacity{Slots: 8, MemMiB: 8192, VCPUs: 8}}
}

// TestNodeLifecycle walks one node through the lease rules with the
// database clock: first registration, heartbeats, a second claimant, a
// restart that renews, drain, a refused leave, a sweep, the fenced
// heartbeat, a fresh registration that writes off the old epoch, and a
// clean leave.
func TestNodeLifecycle(t *testing.T) {
	s, _ := open(t, Options{})
	reg, err := s.RegisterNode(ctx, spec("n1", "s1", 0))
	must(t, err)
	if reg.Epoch != 1 || reg.How != lease.Fresh || reg.Fence {
		t.Fatalf("first registration: %+v", reg)
	}
	ack, err := s.Heartbeat(ctx, "n1", 1, Usage{Used: Capacity{Slots: 1}, Warm: map[string]int{"base": 2}})
	must(t, err)
	if ack.State != lease.Ready || !ack.LeaseExpires.After(reg.LeaseExpires.Add(-time.Millisecond)) {
		t.Fatalf("heartbeat ack %+v", ack)
	}
	for name, sp := range map[string]NodeSpec{
		"another daemon, no epoch":          spec("n1", "s2", 0),
		"another daemon, the current epoch": spec("n1", "s2", 1),
	} {
		if _, err := s.RegisterNode(ctx, sp); !errdefs.IsFailedPrecondition(err) {
			t.Errorf("%s: %v, want failed_precondition (the lease is live)", name, err)
		}
	}
	reg, err = s.RegisterNode(ctx, spec("n1", "s1", 1))
	must(t, err)
	if reg.Epoch != 1 || reg.How != lease.Renewed || reg.Fence {
		t.Fatalf("restart with epoch and secret: %+v, want renewed", reg)
	}
	must(t, s.PutTenant(ctx, "acme", 10))
	now := time.Now()
	sb := Sandbox{ID: "sb-1", Tenant: "acme", Template: "base", BuildID: "b", NodeID: "n1", NodeEpoch: 1,
		State: StateRunning, CreatedAt: now, Deadline: now.Add(time.Hour)}
	must(t, s.CreateSandbox(ctx, sb))

	must(t, s.DrainNode(ctx, "n1"))
	sb.ID = "sb-2"
	if err := s.CreateSandbox(ctx, sb); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("create on a draining node: %v", err)
	}
	if ack, err := s.Heartbeat(ctx, "n1", 1, Usage{}); err != nil || ack.State != lease.Draining {
		t.Fatalf("heartbeat while draining: %+v, %v", ack, err)
	}
	if err := s.LeaveNode(ctx, "n1", 1); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("leave with a live sandbox: %v", err)
	}
	must(t, s.UndrainNode(ctx, "n1"))

	// Its lease ends; a sweep marks it lost with a new epoch.
	s.exec(t, `UPDATE nodes SET lease_expires_at = now() - interval '1 hour'`)
	s.exec(t, `UPDATE cluster_state SET last_sweep_at = now()`)
	rep, err := s.Sweep(ctx)
	must(t, err)
	if rep.Amnesty || len(rep.Lost) != 1 || rep.Lost[0].OldEpoch != 1 || len(rep.Lost[0].Sandboxes) != 1 {
		t.Fatalf("sweep: %+v", rep)
	}
	if got, _ := s.GetSandbox(ctx, "acme", "sb-1"); got.State != StateLost || got.EndReason != "node_lost" {
		t.Fatalf("sandbox of the swept node: %+v", got)
	}
	if _, err := s.Heartbeat(ctx, "n1", 1, Usage{}); !errors.Is(err, ErrFenced) {
		t.Fatalf("heartbeat after the sweep: %v, want fenced", err)
	}
	reg, err = s.RegisterNode(ctx, spec("n1", "s3", 1))
	must(t, err)
	if reg.Epoch != 3 || reg.How != lease.Fresh || !reg.Fence {
		t.Fatalf("registration after the sweep: %+v, want fresh epoch 3 and fence", reg)
	}
	must(t, s.LeaveNode(ctx, "n1", 3))
	nodes, err := s.ListNodes(ctx)
	must(t, err)
	if len(nodes) != 1 || nodes[0].State != lease.Left || nodes[0].Epoch != 3 {
		t.Fatalf("after leaving: %+v", nodes)
	}
	recs, err := s.ChainRecords(ctx, ControlChain, 0, 10)
	must(t, err)
	if len(recs) != 1 || recs[0].SandboxID != "sb-1" || recs[0].Detail["reason"] != "node_lost" || recs[0].Event != store.EventFail {
		t.Fatalf("control chain after the sweep: %+v", recs)
	}
}

// TestFreshRegistrationWritesOffTheOldEpoch: a node whose lease ended
// registers afresh before any sweep; its sandboxes of the old epoch are
// lost, audited, and its new epoch takes sandboxes.
func TestFreshRegistrationWritesOffTheOldEpoch(t *testing.T) {
	s, _ := open(t, Options{})
	_, err := s.RegisterNode(ctx, spec("n1", "s1", 0))
	must(t, err)
	now := time.Now()
	must(t, s.CreateSandbox(ctx, Sandbox{ID: "old", Tenant: "acme", Template: "base", NodeID: "n1", NodeEpoch: 1,
		State: StateCreating, CreatedAt: now, Deadline: now.Add(time.Hour)}))
	s.exec(t, `UPDATE nodes SET lease_expires_at = now() - interval '1 second'`)
	reg, err := s.RegisterNode(ctx, spec("n1", "s2", 0))
	must(t, err)
	if reg.Epoch != 2 || reg.Fence || len(reg.WrittenOff) != 1 || reg.WrittenOff[0] != "old" {
		t.Fatalf("re-registration: %+v", reg)
	}
	if _, err := s.ShipSandboxState(ctx, "n1", 1, "old", StateFailed, "vm_exited", now); !errors.Is(err, ErrFenced) {
		t.Fatalf("a report under the old epoch: %v, want fenced", err)
	}
	must(t, s.CreateSandbox(ctx, Sandbox{ID: "new", Tenant: "acme", Template: "base", NodeID: "n1", NodeEpoch: 2,
		State: StateCreating, CreatedAt: now, Deadline: now.Add(time.Hour)}))
	if _, err := s.ShipSandboxState(ctx, "n1", 2, "new", StateRunning, "", now); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSandbox(ctx, "acme", "new"); got.State != StateRunning {
		t.Fatalf("shipped running: %+v", got)
	}
}

// TestConcurrentFirstRegistrations registers one new node id from eight
// daemons at once: the inserts race, the losers are retried and then see
// the winner's live lease, so exactly one registers.
func TestConcurrentFirstRegistrations(t *testing.T) {
	s, _ := open(t, Options{})
	const daemons = 8
	errs := make([]error, daemons)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range daemons {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = s.RegisterNode(ctx, spec("n1", fmt.Sprintf("s%d", i), 0))
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errdefs.IsFailedPrecondition(err):
			t.Errorf("a losing registration: %v, want failed_precondition", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent first registrations won, want 1", won, daemons)
	}
}

// TestOpenRefusesBadAndUnreachableDatabases: a malformed DSN is the
// caller's mistake, a server that is not there is unavailable.
func TestOpenRefusesBadAndUnreachableDatabases(t *testing.T) {
	if _, err := Open(ctx, "host=/nonexistent port=1 connect_timeout=2 user=x dbname=x", Options{}); !errdefs.IsUnavailable(err) {
		t.Errorf("unreachable: %v, want unavailable", err)
	}
	if _, err := Open(ctx, "postgres://%zz", Options{}); !errdefs.IsInvalidArgument(err) {
		t.Errorf("malformed: %v, want invalid_argument", err)
	}
	bad := testLease()
	bad.SweepInterval = bad.TTL
	if _, err := Open(ctx, "host=/nonexistent", Options{Lease: bad}); !errdefs.IsInvalidArgument(err) {
		t.Errorf("contradictory lease timing: %v, want invalid_argument", err)
	}
}
