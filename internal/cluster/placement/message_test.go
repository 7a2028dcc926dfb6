package placement

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// TestExhaustedMessageCountsReasonsAndNamesNoNode is the tenant's answer
// at 1,000 nodes: 3 lost, 12 draining, 940 without memory, 42 without a
// slot, and 3 with room that refuse.
func TestExhaustedMessageCountsReasonsAndNamesNoNode(t *testing.T) {
	var views []NodeView
	for i := range 1000 {
		v := roomy(i)
		switch {
		case i < 3:
			v.State = lease.Lost
		case i < 15:
			v.State = lease.Draining
		case i < 955:
			v.Used.MemMiB = 96 << 10
		case i < 997:
			v.Used.Slots = 100
		}
		views = append(views, v)
	}
	p, _ := newTestPlacer(t, views...)
	refuse := func(context.Context, Attempt) error { return errdefs.ResourceExhausted("admission: memory") }
	_, err := p.Place(context.Background(), testReq(), refuse)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%v, want *placement.Error", err)
	}
	want := "no node can take a sandbox of legal-doc-review (2048 MiB, 2 vCPUs) now: 1000 nodes, 3 not ready, 12 draining, 982 full (memory 940, slots 42); 3 refused"
	if err.Error() != want {
		t.Fatalf("message\n %q\nwant\n %q", err, want)
	}
	assertNamesNoNode(t, err)
	wantRejected := map[Reason]int{ReasonNotReady: 3, ReasonDraining: 12, ReasonFullMemory: 940, ReasonFullSlots: 42, ReasonExcluded: 3}
	if len(pe.Rejected) != len(wantRejected) {
		t.Fatalf("rejected %v, want %v", pe.Rejected, wantRejected)
	}
	for r, n := range wantRejected {
		if pe.Rejected[r] != n {
			t.Errorf("rejected[%s] = %d, want %d", r, pe.Rejected[r], n)
		}
	}
	if pe.Class != errdefs.ErrResourceExhausted || errdefs.HTTPStatus(errdefs.Class(err)) != 429 {
		t.Fatalf("class %v, want resource_exhausted (429)", pe.Class)
	}
	if pe.Considered != 1000 || pe.Refused != 3 || len(pe.Attempts) != 3 || pe.MemMiB != 2048 || pe.VCPUs != 2 || pe.Template != "legal-doc-review" {
		t.Fatalf("fields %+v", pe)
	}
}

func TestTooManyRefusalsAnswer429(t *testing.T) {
	var views []NodeView
	for i := range 50 {
		views = append(views, roomy(i))
	}
	p, _ := newTestPlacer(t, views...)
	calls := 0
	_, err := p.Place(context.Background(), testReq(), func(context.Context, Attempt) error {
		calls++
		return errdefs.ResourceExhausted("full")
	})
	if calls != DefaultConfig().MaxRefusals+1 || errdefs.Class(err) != errdefs.ErrResourceExhausted {
		t.Fatalf("%d calls, %v: want %d refusals then resource_exhausted", calls, err, DefaultConfig().MaxRefusals+1)
	}
	if want := "no node can take a sandbox of legal-doc-review (2048 MiB, 2 vCPUs) now: 50 nodes; 11 refused"; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
}

func TestFailedPreconditionWhenNoNodeCouldEverTakeIt(t *testing.T) {
	pulling := func(i int) NodeView {
		v := roomy(i)
		v.Builds = []BuildState{{Build: "b1", Ready: false}}
		return v
	}
	other := func(i int) NodeView {
		v := roomy(i)
		v.HostClass = "arm-kvm"
		return v
	}
	noProxy := func(i int) NodeView {
		v := roomy(i)
		v.Capabilities = []string{"net"}
		return v
	}
	shortLease := func(i int) NodeView {
		v := roomy(i)
		v.LeaseExpires = t0.Add(time.Second) // within the 5 s margin
		return v
	}
	lostWithBuild := roomy(9)
	lostWithBuild.State = lease.Lost
	for _, tc := range []struct {
		name  string
		views []NodeView
		req   func(*Request)
		class error
		msg   string
	}{
		{"build pulling", []NodeView{pulling(1), pulling(2), other(3)}, nil, errdefs.ErrFailedPrecondition,
			"template legal-doc-review build b1 is ready on no node of host class x86-kvm (pulling on 2)"},
		{"no node of the class", []NodeView{other(1)}, nil, errdefs.ErrFailedPrecondition,
			"template legal-doc-review build b1 is ready on no node of host class x86-kvm"},
		{"capability", []NodeView{noProxy(1), noProxy(2)}, func(r *Request) { r.Capabilities = []string{"net", "proxy"} }, errdefs.ErrFailedPrecondition,
			"a sandbox of legal-doc-review needs net, proxy, which no node of host class x86-kvm with its build offers"},
		{"label", []NodeView{roomy(1)}, func(r *Request) { r.Labels = map[string]string{"zone": "eu-2", "disk": "ssd"} }, errdefs.ErrFailedPrecondition,
			"a sandbox of legal-doc-review asks for labels disk=ssd, zone=eu-2, which no node of host class x86-kvm with its build and capabilities carries"},
		{"only a lost node has it: may come back", []NodeView{pulling(1), lostWithBuild}, nil, errdefs.ErrResourceExhausted,
			"no node can take a sandbox of legal-doc-review (2048 MiB, 2 vCPUs) now: 2 nodes, 1 not ready, 1 without the build ready"},
		{"every lease about to end: unavailable for now", []NodeView{shortLease(1), shortLease(2), lostWithBuild}, nil, errdefs.ErrUnavailable,
			"no node can take a sandbox of legal-doc-review (2048 MiB, 2 vCPUs) now: 3 nodes, 1 not ready, 2 with a lease about to end"},
		{"pull allowed", []NodeView{pulling(1)}, func(r *Request) { r.AllowPull = true }, nil, ""},
	} {
		p, _ := newTestPlacer(t, tc.views...)
		req := testReq()
		if tc.req != nil {
			tc.req(&req)
		}
		_, err := p.Place(context.Background(), req, ok)
		if errdefs.Class(err) != tc.class {
			t.Errorf("%s: %v (%v), want %v", tc.name, err, errdefs.Class(err), tc.class)
			continue
		}
		if err == nil {
			continue
		}
		if err.Error() != tc.msg {
			t.Errorf("%s: message\n %q\nwant\n %q", tc.name, err, tc.msg)
		}
		if tc.class == errdefs.ErrFailedPrecondition && errdefs.HTTPStatus(tc.class) != 409 {
			t.Errorf("%s: not 409", tc.name)
		}
		assertNamesNoNode(t, err)
	}
}

func TestInvalidRequestAndConfig(t *testing.T) {
	p, _ := newTestPlacer(t, roomy(1))
	for _, r := range []Request{{Build: "b1", VCPUs: 1}, {Build: "b1", MemMiB: 1}, {MemMiB: 1, VCPUs: 1}} {
		if _, err := p.Place(context.Background(), r, ok); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%+v: %v, want invalid_argument", r, err)
		}
	}
	bad := DefaultConfig()
	bad.K = 0
	if _, err := NewPlacer(bad, nil, nil); !errdefs.IsInvalidArgument(err) {
		t.Errorf("K 0: %v", err)
	}
}
