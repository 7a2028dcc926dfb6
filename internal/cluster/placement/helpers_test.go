package placement

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clock"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// hostID names test nodes so that a message naming one is easy to spot.
func hostID(i int) string { return fmt.Sprintf("host-%04d", i) }

// roomy is a ready node with plenty of room for testReq.
func roomy(i int) NodeView {
	return NodeView{
		ID: hostID(i), State: lease.Ready,
		LeaseExpires: t0.Add(30 * time.Second), HeartbeatAt: t0,
		HostClass: "x86-kvm", Capabilities: []string{"net", "proxy"},
		Labels:   map[string]string{"zone": "a"},
		Capacity: Resources{Slots: 100, MemMiB: 64 << 10, VCPUs: 32},
		Builds:   []BuildState{{Build: "b1", Ready: true}},
	}
}

func testReq() Request {
	return Request{Template: "legal-doc-review", Build: "b1", HostClass: "x86-kvm", MemMiB: 2048, VCPUs: 2}
}

func newTestPlacer(t testing.TB, views ...NodeView) (*Placer, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual(t0)
	p, err := NewPlacer(DefaultConfig(), clk, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	p.SetView(views)
	return p, clk
}

// script is a Dispatch that answers from a list, one error per call
// (nil: success), and records the attempts.
type script struct {
	answers []error
	got     []Attempt
}

func (s *script) dispatch(_ context.Context, a Attempt) error {
	s.got = append(s.got, a)
	if len(s.answers) == 0 {
		return nil
	}
	err := s.answers[0]
	s.answers = s.answers[1:]
	return err
}

func ok(context.Context, Attempt) error { return nil }
