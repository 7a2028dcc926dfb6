package placement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestFullNodesAreNeverChosen(t *testing.T) {
	var views []NodeView
	room := map[string]bool{}
	for i := range 60 {
		v := roomy(i)
		switch i % 6 {
		case 0:
			v.Used.Slots = v.Capacity.Slots // no slot left
		case 1:
			v.Used.MemMiB = int64(float64(v.Capacity.MemMiB)*1.5) - 1024 // 1 GiB short of 2
		case 2:
			v.Used.VCPUs = v.Capacity.VCPUs*4 - 1 // 1 vCPU short of 2
		case 3:
			v.Used.Slots = v.Capacity.Slots - 1 // one slot: room for exactly one
			room[v.ID] = true
		default:
			room[v.ID] = true
		}
		views = append(views, v)
	}
	p, clk := newTestPlacer(t, views...)
	chosen := map[string]int{}
	for i := range 2000 {
		res, err := p.Place(context.Background(), testReq(), ok)
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if !room[res.Node] {
			t.Fatalf("create %d went to %s, which is full", i, res.Node)
		}
		chosen[res.Node]++
		// A heartbeat that reports none of it: only in-flight counts, and
		// it is cleared, so the one-slot nodes stay choosable.
		clk.Advance(time.Millisecond)
		v := views[indexOf(views, res.Node)]
		v.HeartbeatAt = clk.Now()
		v.LeaseExpires = clk.Now().Add(30 * time.Second)
		p.UpdateNode(v)
	}
	if len(chosen) != len(room) {
		t.Fatalf("%d of the %d nodes with room were ever chosen", len(chosen), len(room))
	}
}

func indexOf(views []NodeView, id string) int {
	for i, v := range views {
		if v.ID == id {
			return i
		}
	}
	return -1
}

func TestEachReasonIsCounted(t *testing.T) {
	for _, tc := range []struct {
		reason Reason
		mutate func(*NodeView, *Placer)
	}{
		{ReasonNotReady, func(v *NodeView, _ *Placer) { v.State = lease.Lost }},
		{ReasonNotReady, func(v *NodeView, _ *Placer) { v.State = lease.Left }},
		{ReasonDraining, func(v *NodeView, _ *Placer) { v.State = lease.Draining }},
		{ReasonLeaseShort, func(v *NodeView, _ *Placer) { v.LeaseExpires = t0.Add(5 * time.Second) }},
		{ReasonUnreachable, func(v *NodeView, p *Placer) { p.UpdateNode(*v); p.MarkUnreachable(v.ID) }},
		{ReasonHostClass, func(v *NodeView, _ *Placer) { v.HostClass = "arm-kvm" }},
		{ReasonBuildNotReady, func(v *NodeView, _ *Placer) { v.Builds = []BuildState{{Build: "b1", Ready: false}} }},
		{ReasonBuildNotReady, func(v *NodeView, _ *Placer) { v.Builds = []BuildState{{Build: "b0", Ready: true}} }},
		{ReasonCapability, func(v *NodeView, _ *Placer) { v.Capabilities = []string{"net"} }},
		{ReasonLabel, func(v *NodeView, _ *Placer) { v.Labels = map[string]string{"zone": "b"} }},
		{ReasonFullSlots, func(v *NodeView, _ *Placer) { v.Used.Slots = 100 }},
		{ReasonFullMemory, func(v *NodeView, _ *Placer) { v.Used.MemMiB = 96<<10 - 2047 }},
		{ReasonFullVCPUs, func(v *NodeView, _ *Placer) { v.Used.VCPUs = 127 }},
	} {
		// One node that fails for this reason, one that passes but refuses.
		p, _ := newTestPlacer(t)
		bad, good := roomy(1), roomy(2)
		tc.mutate(&bad, p)
		p.UpdateNode(bad)
		p.UpdateNode(good)
		req := testReq()
		req.Capabilities = []string{"net", "proxy"}
		req.Labels = map[string]string{"zone": "a"}
		s := &script{answers: []error{errdefs.ResourceExhausted("no room")}}
		_, err := p.Place(context.Background(), req, s.dispatch)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v, want a *placement.Error", tc.reason, err)
		}
		want := map[Reason]int{tc.reason: 1, ReasonExcluded: 1}
		if len(pe.Rejected) != 2 || pe.Rejected[tc.reason] != 1 || pe.Rejected[ReasonExcluded] != 1 {
			t.Errorf("%s: rejected %v, want %v", tc.reason, pe.Rejected, want)
		}
		if len(s.got) != 1 || s.got[0].Node != good.ID {
			t.Errorf("%s: called %+v, want only %s", tc.reason, s.got, good.ID)
		}
	}
}

func TestRefusalMovesToNextCandidateWithSameID(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1), roomy(2), roomy(3), roomy(4))
	refuse := errdefs.ResourceExhausted("node full")
	s := &script{answers: []error{refuse, refuse, nil}}
	res, err := p.Place(context.Background(), testReq(), s.dispatch)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 3 {
		t.Fatalf("%d calls, want 3", len(s.got))
	}
	seen := map[string]bool{}
	for i, a := range s.got {
		if a.N != 1 || a.Call != i+1 {
			t.Errorf("call %d: N %d Call %d, want N 1 (same sandbox id) Call %d", i, a.N, a.Call, i+1)
		}
		if seen[a.Node] {
			t.Errorf("call %d: %s again after it refused", i, a.Node)
		}
		seen[a.Node] = true
	}
	if res.Node != s.got[2].Node || res.N != 1 || res.Calls != 3 || res.Refused != 2 {
		t.Errorf("result %+v", res)
	}
}

func TestHardFailureTakesANewIDAndExcludesTheNode(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1), roomy(2), roomy(3))
	s := &script{answers: []error{errors.New("exec: qemu died"), errdefs.ResourceExhausted("full"), nil}}
	res, err := p.Place(context.Background(), testReq(), s.dispatch)
	if err != nil {
		t.Fatal(err)
	}
	if n := []int{s.got[0].N, s.got[1].N, s.got[2].N}; n[0] != 1 || n[1] != 2 || n[2] != 2 {
		t.Fatalf("sandbox numbers %v, want 1 then 2 (new id after the failure, same after the refusal)", n)
	}
	if s.got[0].Node == s.got[1].Node || s.got[1].Node == s.got[2].Node || s.got[0].Node == s.got[2].Node {
		t.Fatalf("a node was called twice: %+v", s.got)
	}
	if res.N != 2 || res.Calls != 3 || res.Refused != 1 {
		t.Fatalf("result %+v", res)
	}
}

func TestThreeHardFailuresEndWithTheLastClass(t *testing.T) {
	views := []NodeView{roomy(1), roomy(2), roomy(3), roomy(4), roomy(5)}
	p, _ := newTestPlacer(t, views...)
	s := &script{}
	s.answers = []error{
		errdefs.Unavailable("dial tcp 10.0.0.9:7070: connection refused"),
		errors.New("boom"),
		nil, // replaced below once the third node is known
	}
	third := func(ctx context.Context, a Attempt) error {
		if a.Call == 3 {
			s.answers[0] = errdefs.FailedPrecondition("build b1 on %s failed its checksum", a.Node)
		}
		return s.dispatch(ctx, a)
	}
	_, err := p.Place(context.Background(), testReq(), third)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%v, want *placement.Error", err)
	}
	if errdefs.Class(err) != errdefs.ErrFailedPrecondition || errdefs.HTTPStatus(errdefs.Class(err)) != 409 {
		t.Fatalf("class %v, want the last node's failed_precondition (409)", errdefs.Class(err))
	}
	if len(s.got) != 3 || len(pe.Attempts) != 3 || pe.Attempts[2].N != 3 {
		t.Fatalf("%d calls, attempts %+v: want 3, numbered to 3", len(s.got), pe.Attempts)
	}
	want := "failed to create after 3 attempts: build b1 on a node failed its checksum"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	assertNamesNoNode(t, err)
	if !strings.Contains(pe.Last.Error(), s.got[2].Node) {
		t.Errorf("Last %q should keep the node for the logs", pe.Last)
	}
}

func TestTransportFailuresAreUnavailableAndTripTheBreaker(t *testing.T) {
	p, clk := newTestPlacer(t, roomy(1), roomy(2), roomy(3), roomy(4))
	down := func(context.Context, Attempt) error {
		return fmt.Errorf("%w: %w", errdefs.Unavailable("dial tcp 10.0.0.9:7070: connection refused"), ErrNoAnswer)
	}
	_, err := p.Place(context.Background(), testReq(), down)
	if errdefs.Class(err) != errdefs.ErrUnavailable || err.Error() != "3 placement attempts failed: nodes unreachable" {
		t.Fatalf("%v (%v), want unavailable, nodes unreachable", err, errdefs.Class(err))
	}
	if errdefs.HTTPStatus(errdefs.Class(err)) != 503 {
		t.Fatal("unavailable does not answer 503")
	}
	// The three are now out of this replica's choices: only the fourth.
	s := &script{}
	if _, err := p.Place(context.Background(), testReq(), s.dispatch); err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, a := range err.(*Error).Attempts {
		failed[a.Node] = true
	}
	if failed[s.got[0].Node] {
		t.Fatalf("%s failed to answer and was chosen again within 30 s", s.got[0].Node)
	}
	// Every node unreachable: the answer counts them, and is 503 (for
	// now), not 429: no node is full.
	p.MarkUnreachable(s.got[0].Node)
	_, err = p.Place(context.Background(), testReq(), ok)
	if pe := err.(*Error); pe.Rejected[ReasonUnreachable] != 4 || errdefs.Class(err) != errdefs.ErrUnavailable {
		t.Fatalf("%v (%v): rejected %v, want 4 unreachable, unavailable", err, errdefs.Class(err), pe.Rejected)
	}
	clk.Advance(30*time.Second + time.Millisecond)
	for _, v := range []NodeView{roomy(1), roomy(2), roomy(3), roomy(4)} {
		v.LeaseExpires = clk.Now().Add(30 * time.Second)
		p.UpdateNode(v)
	}
	if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
		t.Fatalf("after 30 s the breaker still holds: %v", err)
	}
}

func TestNodeTimeoutCountsAsHardAndUnreachable(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1), roomy(2))
	s := &script{answers: []error{fmt.Errorf("%w: %w", errdefs.DeadlineExceeded("node call timed out"), ErrNoAnswer)}}
	res, err := p.Place(context.Background(), testReq(), s.dispatch)
	if err != nil || res.N != 2 {
		t.Fatalf("%+v, %v: want success with a new sandbox id", res, err)
	}
	_, err = p.Place(context.Background(), testReq(), func(_ context.Context, a Attempt) error {
		if a.Node == s.got[0].Node {
			t.Errorf("%s timed out and was chosen again", a.Node)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A node that answers "unavailable" (its lease unconfirmed while the
// database is down) is excluded for that request only: it answered, and a
// 30 s bench would outlast the outage. The cluster test that found this:
// after PostgreSQL came back, one replica had benched all four nodes.
func TestAnsweredUnavailableIsNotBenched(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1), roomy(2))
	s := &script{answers: []error{errdefs.Unavailable("node lease not confirmed")}}
	if _, err := p.Place(context.Background(), testReq(), s.dispatch); err != nil {
		t.Fatal(err)
	}
	first := s.got[0].Node
	seen := false
	for range 40 {
		if _, err := p.Place(context.Background(), testReq(), func(_ context.Context, a Attempt) error {
			seen = seen || a.Node == first
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !seen {
		t.Fatalf("%s answered unavailable once and was never chosen again in 40 creates", first)
	}
}

// deadlineCtx is a context whose deadline passes when told, so a test
// can end it in the middle of a placement without sleeping.
type deadlineCtx struct {
	context.Context
	passed bool
}

func (c *deadlineCtx) Err() error {
	if c.passed {
		return context.DeadlineExceeded
	}
	return nil
}

func TestContextDeadlineIsRespected(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1), roomy(2), roomy(3))
	ctx := &deadlineCtx{Context: context.Background()}
	calls := 0
	_, err := p.Place(ctx, testReq(), func(context.Context, Attempt) error {
		calls++
		if calls == 2 {
			ctx.passed = true
		}
		return errdefs.ResourceExhausted("full")
	})
	if errdefs.Class(err) != errdefs.ErrDeadlineExceeded || err.Error() != "placement timed out after 2 attempts" {
		t.Fatalf("%v (%v), want deadline_exceeded after 2 attempts", err, errdefs.Class(err))
	}
	if calls != 2 {
		t.Fatalf("%d calls, want 2 (none after the deadline)", calls)
	}
	// The second node's call was cut by our deadline, not by the node:
	// it must stay choosable.
	if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Place(gone, testReq(), func(context.Context, Attempt) error {
		t.Fatal("called a node with an ended context")
		return nil
	})
	if err == nil || err.Error() != "placement canceled after 0 attempts" {
		t.Fatalf("ended context: %v", err)
	}
}

func assertNamesNoNode(t *testing.T, err error) {
	t.Helper()
	if strings.Contains(err.Error(), "host-") || strings.Contains(err.Error(), "10.0.0.9") {
		t.Fatalf("message names a node: %q", err)
	}
}
