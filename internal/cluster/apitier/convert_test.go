package apitier

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/wire"
)

// An egress policy survives the trip to the node and back, every field.
func TestPolicyRoundTrip(t *testing.T) {
	p := netpool.Policy{Default: netpool.DefaultDeny, Allow: []netpool.Rule{
		{Name: "pypi", Domain: "pypi.org", Ports: []uint16{443}, Protocol: "tcp"},
		{Name: "lan", CIDR: "10.0.0.0/8", Ports: []uint16{53, 5353}, Protocol: "udp"},
	}}
	if got := policyFromWire(policyToWire(p)); !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n %+v\nwant\n %+v", got, p)
	}
}

// The exec a tenant asked for reaches the node whole: environment split
// at the first '=', a malformed entry dropped, the PTY size kept.
func TestExecRequest(t *testing.T) {
	o := guest.ExecOptions{Shell: "echo $A", Cwd: "/work", Timeout: 3 * time.Second, User: "user",
		Env: []string{"A=b=c", "EMPTY=", "NOEQUALS"}, Pty: &guest.WindowSize{Rows: 24, Cols: 80}}
	req := execRequest(o, []byte("in"))
	if want := map[string]string{"A": "b=c", "EMPTY": ""}; !reflect.DeepEqual(req.Env, want) {
		t.Fatalf("env %v, want %v", req.Env, want)
	}
	if req.Cmd != o.Shell || req.Cwd != o.Cwd || req.Timeout != o.Timeout || req.User != "user" || string(req.Stdin) != "in" ||
		req.Pty == nil || req.Pty.Rows != 24 || req.Pty.Cols != 80 {
		t.Fatalf("request %+v", req)
	}
	if req := execRequest(guest.ExecOptions{Argv: []string{"true"}}, nil); req.Env != nil || req.Pty != nil {
		t.Fatalf("no env, no pty: %+v", req)
	}
}

// What the API shows of a sandbox always has metadata (never null) and an
// egress policy: a catalog row with none, or one it cannot read, shows
// deny-all, never an open policy.
func TestInfoDefaults(t *testing.T) {
	if in := infoFromWire(wire.Sandbox{ID: "sbx-a"}, "n1"); in.Metadata == nil || in.Node != "n1" {
		t.Fatalf("from the node: %+v", in)
	}
	for _, eg := range []json.RawMessage{nil, json.RawMessage(`{`), json.RawMessage(`{"default":""}`)} {
		in := infoFromRow(pgstore.Sandbox{ID: "sbx-a", NodeID: "n1", Egress: eg})
		if in.Metadata == nil || !reflect.DeepEqual(in.Egress, netpool.DenyAll()) || in.Node != "n1" {
			t.Fatalf("row with egress %q: %+v", eg, in)
		}
	}
	open := netpool.Policy{Default: netpool.DefaultAllow}
	b, _ := json.Marshal(open)
	if in := infoFromRow(pgstore.Sandbox{ID: "sbx-a", Egress: b}); in.Egress.Default != "allow" {
		t.Fatalf("a stored policy was not shown: %+v", in.Egress)
	}
}
