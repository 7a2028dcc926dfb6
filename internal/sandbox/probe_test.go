package sandbox

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// TestProbeVerdicts: what the host makes of each way an attempt can end.
// Anything that answered from beyond the guest is a way out; a DNS "no
// such name" is one only when the egress proxy is not the resolver; an
// outcome this host does not know fails closed.
func TestProbeVerdicts(t *testing.T) {
	for _, c := range []struct {
		o       agentpb.EgressOutcome
		proxied bool
		want    bool
	}{
		{agentpb.EgressOutcome_EGRESS_TIMEOUT, false, false},
		{agentpb.EgressOutcome_EGRESS_LOCAL_ERROR, false, false},
		{agentpb.EgressOutcome_EGRESS_CONNECTED, false, true},
		{agentpb.EgressOutcome_EGRESS_REFUSED, false, true},
		{agentpb.EgressOutcome_EGRESS_UNREACHABLE, false, true},
		{agentpb.EgressOutcome_EGRESS_RESOLVED, false, true},
		{agentpb.EgressOutcome_EGRESS_RESOLVED, true, true},
		{agentpb.EgressOutcome_EGRESS_NAME_NOT_FOUND, false, true},
		{agentpb.EgressOutcome_EGRESS_NAME_NOT_FOUND, true, false},
		{agentpb.EgressOutcome_EGRESS_OUTCOME_UNSPECIFIED, false, true},
		{agentpb.EgressOutcome(99), true, true},
	} {
		if got := reached(c.o, c.proxied); got != c.want {
			t.Errorf("reached(%v, proxied=%v) = %v, want %v", c.o, c.proxied, got, c.want)
		}
	}
}

// TestProbeSpecs: every probe has a target, a fresh DNS name each time, and
// the host's slot address only with a slot.
func TestProbeSpecs(t *testing.T) {
	a, b := probeSpecs(nil), probeSpecs(nil)
	names := map[string]bool{}
	for i, p := range a {
		names[p.name] = true
		if (p.try.TCP == "") == (p.try.DNS == "") {
			t.Errorf("%s: needs exactly one of tcp and dns: %+v", p.name, p.try)
		}
		if p.name == "dns-denied" && p.try.DNS == b[i].try.DNS {
			t.Errorf("dns-denied probes the same name twice: %s", p.try.DNS)
		}
	}
	for _, n := range []string{"tcp-gateway", "tcp-public", "tcp-metadata", "dns-denied"} {
		if !names[n] {
			t.Errorf("no %s probe in %+v", n, a)
		}
	}
	if names["tcp-host"] {
		t.Error("tcp-host probed without a slot")
	}
}
