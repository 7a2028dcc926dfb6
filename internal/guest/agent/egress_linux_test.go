//go:build linux

package agent

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

func tcpTarget(addr string) *agentpb.EgressTarget {
	return &agentpb.EgressTarget{Target: &agentpb.EgressTarget_Tcp{Tcp: addr}}
}

// TestEgressCheckOutcomes runs the agent's attempts on the host's loopback:
// a listener is CONNECTED and a closed port REFUSED, each in its place.
func TestEgressCheckOutcomes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	s := &Server{}
	resp, err := s.EgressCheck(context.Background(), &agentpb.EgressCheckRequest{
		Targets:   []*agentpb.EgressTarget{tcpTarget(ln.Addr().String()), tcpTarget(closedAddr)},
		TimeoutMs: 2000,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []agentpb.EgressOutcome{agentpb.EgressOutcome_EGRESS_CONNECTED, agentpb.EgressOutcome_EGRESS_REFUSED}
	for i, r := range resp.Results {
		if r.Outcome != want[i] {
			t.Errorf("target %d: %v (%s), want %v", i, r.Outcome, r.Detail, want[i])
		}
	}
}

// TestEgressCheckRefusesBadRequests: no targets, too many, an empty one, or
// a timeout out of range are the host's mistakes, not outcomes.
func TestEgressCheckRefusesBadRequests(t *testing.T) {
	many := make([]*agentpb.EgressTarget, maxEgressTargets+1)
	for i := range many {
		many[i] = tcpTarget("127.0.0.1:1")
	}
	for name, req := range map[string]*agentpb.EgressCheckRequest{
		"no targets":   {TimeoutMs: 1000},
		"too many":     {Targets: many, TimeoutMs: 1000},
		"empty target": {Targets: []*agentpb.EgressTarget{{}}, TimeoutMs: 1000},
		"no timeout":   {Targets: []*agentpb.EgressTarget{tcpTarget("127.0.0.1:1")}},
		"huge timeout": {Targets: []*agentpb.EgressTarget{tcpTarget("127.0.0.1:1")}, TimeoutMs: int64(time.Hour / time.Millisecond)},
	} {
		_, err := (&Server{}).EgressCheck(context.Background(), req)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}
