package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// The wire types must marshal byte for byte like the manager's types did
// when they were the JSON (the strings are what those types produced).
func TestWireBytesUnchanged(t *testing.T) {
	ended := time.Date(2026, 1, 2, 3, 4, 5, 6000000, time.UTC)
	full := sandbox.Info{ID: "sbx-1", Tenant: "acme", Template: "base", ParentID: "sbx-0", Metadata: map[string]string{"doc": "d1", "a": "b"},
		State: "killed", CreatedAt: ended.Add(-time.Hour), Deadline: ended.Add(time.Hour), EndedAt: &ended,
		Egress:  netpool.Policy{Default: "deny", TLS: "inspect", Allow: []netpool.Rule{{Name: "dms", CIDR: "10.0.0.1/32", Ports: []uint16{443, 80}, Protocol: "tcp"}, {Name: "api", Domain: "*.example.com"}}},
		NetAddr: "10.200.0.2", Jailed: true}
	bare := sandbox.Info{ID: "sbx-2", Tenant: "t", Template: "base", State: "running", Egress: netpool.DenyAll()}
	for _, c := range []struct {
		v    any
		want string
	}{
		{sandboxFromInfo(full), "{\"id\":\"sbx-1\",\"tenant\":\"acme\",\"template\":\"base\",\"parent_id\":\"sbx-0\",\"metadata\":{\"a\":\"b\",\"doc\":\"d1\"},\"state\":\"killed\",\"created_at\":\"2026-01-02T02:04:05.006Z\",\"deadline\":\"2026-01-02T04:04:05.006Z\",\"ended_at\":\"2026-01-02T03:04:05.006Z\",\"egress\":{\"default\":\"deny\",\"allow\":[{\"name\":\"dms\",\"cidr\":\"10.0.0.1/32\",\"ports\":[443,80],\"protocol\":\"tcp\"},{\"name\":\"api\",\"domain\":\"*.example.com\"}],\"tls\":\"inspect\"},\"net_addr\":\"10.200.0.2\",\"jailed\":true}"},
		{sandboxFromInfo(bare), "{\"id\":\"sbx-2\",\"tenant\":\"t\",\"template\":\"base\",\"metadata\":null,\"state\":\"running\",\"created_at\":\"0001-01-01T00:00:00Z\",\"deadline\":\"0001-01-01T00:00:00Z\",\"egress\":{\"default\":\"deny\"},\"jailed\":false}"},
		{wire.SandboxList{Sandboxes: sandboxesFromInfos([]sandbox.Info{bare})}, "{\"sandboxes\":[{\"id\":\"sbx-2\",\"tenant\":\"t\",\"template\":\"base\",\"metadata\":null,\"state\":\"running\",\"created_at\":\"0001-01-01T00:00:00Z\",\"deadline\":\"0001-01-01T00:00:00Z\",\"egress\":{\"default\":\"deny\"},\"jailed\":false}]}"},
		{wire.SandboxList{Sandboxes: sandboxesFromInfos(nil)}, "{\"sandboxes\":[]}"},
		{wire.ProbeResponse{OK: true, Probes: probeResultsFrom([]sandbox.ProbeResult{{Name: "tcp-host", Target: "10.0.0.1:22", Reachable: true, Detail: "x"}, {Name: "dns-denied", Target: "n"}})},
			"{\"ok\":true,\"probes\":[{\"name\":\"tcp-host\",\"target\":\"10.0.0.1:22\",\"reachable\":true,\"detail\":\"x\"},{\"name\":\"dns-denied\",\"target\":\"n\",\"reachable\":false}]}"},
		{wire.TemplateList{Templates: templatesFrom([]sandbox.TemplateInfo{{Name: "base", Hash: "sha256:0", MemoryMiB: 256, VCPUs: 1, DefaultTTLSeconds: 60, BuiltAt: ended}})},
			"{\"templates\":[{\"name\":\"base\",\"hash\":\"sha256:0\",\"memory_mib\":256,\"vcpus\":1,\"default_ttl_seconds\":60,\"built_at\":\"2026-01-02T03:04:05.006Z\"}]}"},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T marshals as\n%s\nwant\n%s", c.v, b, c.want)
		}
	}
}

// A policy survives the trip through its wire shape.
func TestEgressPolicyRoundTrip(t *testing.T) {
	p := netpool.Policy{Default: "allow", TLS: "passthrough", Allow: []netpool.Rule{{Name: "x", CIDR: "10.0.0.0/8", Ports: []uint16{1}, Protocol: "udp"}}}
	got := policyFromWire(egressPolicyFrom(p))
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("round trip: %s, want %s", b, a)
	}
}
