package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// sandbox returns a valid running sandbox for tests.
func sandbox(id, tenant string, md map[string]string) Sandbox {
	return Sandbox{
		ID:        id,
		Tenant:    tenant,
		Template:  "legal-doc-review",
		Metadata:  md,
		State:     StateRunning,
		CreatedAt: t0,
		Deadline:  t0.Add(5 * time.Minute),
		PID:       4242,
		StateDir:  "/var/lib/airlock/sandboxes/" + id,
		NetSlot:   NoNetSlot,
	}
}

func mustPut(t *testing.T, s *Store, sbs ...Sandbox) {
	t.Helper()
	for _, sb := range sbs {
		if err := s.PutSandbox(ctx, sb); err != nil {
			t.Fatalf("PutSandbox(%s): %v", sb.ID, err)
		}
	}
}

func ids(sbs []Sandbox) []string {
	out := []string{}
	for _, sb := range sbs {
		out = append(out, sb.ID)
	}
	return out
}

func TestSandboxPutGet(t *testing.T) {
	s, _ := newTestStore(t)
	parent := sandbox("sb-parent", "firm-a", map[string]string{"matter": "m1", "doc": "d1", "class": "privileged"})
	parent.Egress = json.RawMessage(`{"default":"deny","allow":[]}`)
	parent.NetSlot = 7
	parent.Jailed = true
	parent.CreatedAt = t0.Add(123456 * time.Nanosecond) // sub-ms part is dropped
	child := sandbox("sb-child", "firm-a", nil)
	child.ParentID = parent.ID
	mustPut(t, s, parent, child)

	got, err := s.GetSandbox(ctx, "firm-a", parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := parent
	want.CreatedAt = t0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetSandbox =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := s.GetSandbox(ctx, "", child.ID); err != nil || got.ParentID != parent.ID || got.Metadata != nil || got.Egress != nil || got.Jailed {
		t.Errorf("GetSandbox(any tenant, child) = %+v, %v", got, err)
	}

	// Another tenant's sandbox looks exactly like a missing one.
	_, errOther := s.GetSandbox(ctx, "firm-b", parent.ID)
	_, errMissing := s.GetSandbox(ctx, "firm-b", "sb-nope")
	if !errdefs.IsNotFound(errOther) || is(errOther, errdefs.ErrPermissionDenied) {
		t.Errorf("cross-tenant get = %v, want NotFound", errOther)
	}
	if !errdefs.IsNotFound(errMissing) {
		t.Errorf("missing get = %v, want NotFound", errMissing)
	}
	if strings.ReplaceAll(errOther.Error(), parent.ID, "ID") != strings.ReplaceAll(errMissing.Error(), "sb-nope", "ID") {
		t.Errorf("cross-tenant error %q differs from missing error %q", errOther, errMissing)
	}
}

func TestPutSandboxRefusals(t *testing.T) {
	s, _ := newTestStore(t)
	mustPut(t, s, sandbox("sb-1", "firm-a", nil))
	slotHolder := sandbox("sb-slot", "firm-a", nil)
	slotHolder.NetSlot = 3
	mustPut(t, s, slotHolder)
	other := sandbox("sb-other", "firm-b", nil)
	mustPut(t, s, other)

	ended := t0.Add(time.Minute)
	for _, tc := range []struct {
		name  string
		edit  func(*Sandbox)
		class error
	}{
		{"duplicate id", func(sb *Sandbox) { sb.ID = "sb-1" }, errdefs.ErrAlreadyExists},
		{"net slot held", func(sb *Sandbox) { sb.NetSlot = 3 }, errdefs.ErrAlreadyExists},
		{"parent missing", func(sb *Sandbox) { sb.ParentID = "sb-nope" }, errdefs.ErrNotFound},
		{"parent of another tenant", func(sb *Sandbox) { sb.ParentID = "sb-other" }, errdefs.ErrNotFound},
		{"own parent", func(sb *Sandbox) { sb.ParentID = sb.ID }, errdefs.ErrInvalidArgument},
		{"bad id", func(sb *Sandbox) { sb.ID = "../etc" }, errdefs.ErrInvalidArgument},
		{"bad tenant", func(sb *Sandbox) { sb.Tenant = "Firm" }, errdefs.ErrInvalidArgument},
		{"bad template", func(sb *Sandbox) { sb.Template = "" }, errdefs.ErrInvalidArgument},
		{"bad state", func(sb *Sandbox) { sb.State = "paused" }, errdefs.ErrInvalidArgument},
		{"ended but running", func(sb *Sandbox) { sb.EndedAt = &ended }, errdefs.ErrInvalidArgument},
		{"killed but not ended", func(sb *Sandbox) { sb.State = StateKilled }, errdefs.ErrInvalidArgument},
		{"deadline before creation", func(sb *Sandbox) { sb.Deadline = t0.Add(-time.Second) }, errdefs.ErrInvalidArgument},
		{"no deadline", func(sb *Sandbox) { sb.Deadline = time.Time{} }, errdefs.ErrInvalidArgument},
		{"bad egress", func(sb *Sandbox) { sb.Egress = json.RawMessage(`{`) }, errdefs.ErrInvalidArgument},
		{"net slot below -1", func(sb *Sandbox) { sb.NetSlot = -2 }, errdefs.ErrInvalidArgument},
		{"empty metadata key", func(sb *Sandbox) { sb.Metadata = map[string]string{"": "x"} }, errdefs.ErrInvalidArgument},
		{"huge metadata value", func(sb *Sandbox) { sb.Metadata = map[string]string{"k": strings.Repeat("x", 513)} }, errdefs.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandbox("sb-new", "firm-a", nil)
			tc.edit(&sb)
			if err := s.PutSandbox(ctx, sb); !is(err, tc.class) {
				t.Fatalf("PutSandbox = %v, want %v", err, tc.class)
			}
		})
	}
	// Nothing half-written by the refusals.
	all, err := s.ListSandboxes(ctx, SandboxFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("after refusals: %v, %v; want the 3 originals", ids(all), err)
	}

	// A slot is free again once its holder has ended.
	if err := s.UpdateSandboxState(ctx, "sb-slot", StateKilled, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	reuse := sandbox("sb-reuse", "firm-a", nil)
	reuse.NetSlot = 3
	if err := s.PutSandbox(ctx, reuse); err != nil {
		t.Fatalf("reuse a freed slot: %v", err)
	}
}

func TestListSandboxesMetadata(t *testing.T) {
	s, _ := newTestStore(t)
	many := map[string]string{}
	for i := 0; i < 12; i++ {
		many[fmt.Sprintf("k%02d", i)] = fmt.Sprintf("v%02d", i)
	}
	mustPut(t, s,
		sandbox("a1", "firm-a", map[string]string{"matter": "m1", "doc": "d1", "class": "privileged"}),
		sandbox("a2", "firm-a", map[string]string{"matter": "m1", "doc": "d2"}),
		sandbox("a3", "firm-a", map[string]string{"matter": "m2", "doc": "d1"}),
		sandbox("a4", "firm-a", map[string]string{"doc": "m1"}), // value in the wrong key
		sandbox("a5", "firm-a", many),
		sandbox("b1", "firm-b", map[string]string{"matter": "m1", "doc": "d1"}),
		sandbox("b2", "firm-b", nil),
	)
	if err := s.UpdateSandboxState(ctx, "a2", StateKilled, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	almost := maps.Clone(many)
	almost["k05"] = "wrong"
	extra := maps.Clone(many)
	extra["k99"] = "v99"

	for _, tc := range []struct {
		name string
		f    SandboxFilter
		want []string
	}{
		{"all", SandboxFilter{}, []string{"a1", "a2", "a3", "a4", "a5", "b1", "b2"}},
		{"tenant", SandboxFilter{Tenant: "firm-b"}, []string{"b1", "b2"}},
		{"one key", SandboxFilter{Tenant: "firm-a", Metadata: map[string]string{"matter": "m1"}}, []string{"a1", "a2"}},
		{"one key any tenant", SandboxFilter{Metadata: map[string]string{"matter": "m1"}}, []string{"a1", "a2", "b1"}},
		{"two keys", SandboxFilter{Tenant: "firm-a", Metadata: map[string]string{"matter": "m1", "doc": "d1"}}, []string{"a1"}},
		{"three keys", SandboxFilter{Metadata: map[string]string{"matter": "m1", "doc": "d1", "class": "privileged"}}, []string{"a1"}},
		// Each pair matches some sandbox, but no sandbox has both.
		{"pairs split across sandboxes", SandboxFilter{Metadata: map[string]string{"matter": "m2", "doc": "d2"}}, []string{}},
		{"no match", SandboxFilter{Metadata: map[string]string{"matter": "m9"}}, []string{}},
		{"unknown key", SandboxFilter{Metadata: map[string]string{"nokey": "m1"}}, []string{}},
		{"other tenant's match", SandboxFilter{Tenant: "firm-b", Metadata: map[string]string{"matter": "m2"}}, []string{}},
		{"many keys", SandboxFilter{Metadata: many}, []string{"a5"}},
		{"many keys one wrong", SandboxFilter{Metadata: almost}, []string{}},
		{"many keys one extra", SandboxFilter{Metadata: extra}, []string{}},
		{"state", SandboxFilter{Tenant: "firm-a", States: []string{StateKilled}}, []string{"a2"}},
		{"state and metadata", SandboxFilter{Metadata: map[string]string{"matter": "m1"}, States: []string{StateRunning}}, []string{"a1", "b1"}},
		{"two states", SandboxFilter{Tenant: "firm-a", States: []string{StateKilled, StateRunning}}, []string{"a1", "a2", "a3", "a4", "a5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListSandboxes(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Errorf("ListSandboxes = %v, want %v", ids(got), tc.want)
			}
		})
	}
	for _, f := range []SandboxFilter{{Tenant: "BAD"}, {States: []string{"paused"}}} {
		if _, err := s.ListSandboxes(ctx, f); !errdefs.IsInvalidArgument(err) {
			t.Errorf("ListSandboxes(%+v) = %v, want InvalidArgument", f, err)
		}
	}
}

func TestUpdateSandboxState(t *testing.T) {
	s, _ := newTestStore(t)
	mustPut(t, s, sandbox("sb-1", "firm-a", nil))
	end := t0.Add(90 * time.Second)

	for _, tc := range []struct {
		name  string
		id    string
		state string
		at    time.Time
		class error
	}{
		{"to running", "sb-1", StateRunning, end, errdefs.ErrInvalidArgument},
		{"unknown state", "sb-1", "paused", end, errdefs.ErrInvalidArgument},
		{"no end time", "sb-1", StateKilled, time.Time{}, errdefs.ErrInvalidArgument},
		{"unknown sandbox", "sb-nope", StateKilled, end, errdefs.ErrNotFound},
	} {
		if err := s.UpdateSandboxState(ctx, tc.id, tc.state, tc.at); !is(err, tc.class) {
			t.Errorf("%s: UpdateSandboxState = %v, want %v", tc.name, err, tc.class)
		}
	}

	if err := s.UpdateSandboxState(ctx, "sb-1", StateExpired, end); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSandbox(ctx, "firm-a", "sb-1")
	if got.State != StateExpired || got.EndedAt == nil || !got.EndedAt.Equal(end) {
		t.Errorf("after expire: state %q ended %v", got.State, got.EndedAt)
	}
	// The reaper won; a late kill learns so and changes nothing.
	if err := s.UpdateSandboxState(ctx, "sb-1", StateKilled, end.Add(time.Second)); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("kill after expire = %v, want FailedPrecondition", err)
	}
	got, _ = s.GetSandbox(ctx, "firm-a", "sb-1")
	if got.State != StateExpired || !got.EndedAt.Equal(end) {
		t.Errorf("late kill changed the sandbox: %q %v", got.State, got.EndedAt)
	}
}

func TestOverdueAndLiveSandboxes(t *testing.T) {
	s, _ := newTestStore(t)
	now := t0.Add(10 * time.Minute)
	mk := func(id string, deadline time.Time) Sandbox {
		sb := sandbox(id, "firm-a", nil)
		sb.Deadline = deadline
		return sb
	}
	mustPut(t, s,
		mk("late-2", now.Add(-time.Minute)),
		mk("late-1", now.Add(-5*time.Minute)),
		mk("exactly-now", now),
		mk("not-yet", now.Add(time.Millisecond)),
		mk("late-but-killed", now.Add(-time.Minute)),
	)
	if err := s.UpdateSandboxState(ctx, "late-but-killed", StateKilled, now.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}

	over, err := s.OverdueSandboxes(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"late-1", "late-2", "exactly-now"}; !slices.Equal(ids(over), want) {
		t.Errorf("OverdueSandboxes = %v, want %v (earliest deadline first)", ids(over), want)
	}
	live, err := s.LiveSandboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(live)
	slices.Sort(got)
	if want := []string{"exactly-now", "late-1", "late-2", "not-yet"}; !slices.Equal(got, want) {
		t.Errorf("LiveSandboxes = %v, want %v", got, want)
	}
}

func TestSetSandboxEgress(t *testing.T) {
	s, _ := newTestStore(t)
	mustPut(t, s, sandbox("sb-1", "firm-a", nil))
	policy := json.RawMessage(`{"default":"deny","allow":["api.example.com:443"]}`)
	if err := s.SetSandboxEgress(ctx, "sb-1", policy); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSandbox(ctx, "", "sb-1")
	if string(got.Egress) != string(policy) {
		t.Errorf("egress = %s, want %s", got.Egress, policy)
	}
	if err := s.SetSandboxEgress(ctx, "sb-1", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSandbox(ctx, "", "sb-1"); got.Egress != nil {
		t.Errorf("egress after clear = %s, want nil", got.Egress)
	}
	if err := s.SetSandboxEgress(ctx, "sb-1", json.RawMessage(`{"default":`)); !errdefs.IsInvalidArgument(err) {
		t.Errorf("invalid egress = %v, want InvalidArgument", err)
	}
	if err := s.SetSandboxEgress(ctx, "sb-nope", policy); !errdefs.IsNotFound(err) {
		t.Errorf("egress of unknown sandbox = %v, want NotFound", err)
	}
}

// A pause gives up the VMM's pid, state directory and slot and keeps the
// sandbox running (its deadline counts; recovery finds it); a resume
// takes a new pid, directory and slot. Each moves only from the other,
// and only a running sandbox moves at all.
func TestPauseResumeSandbox(t *testing.T) {
	s, _ := newTestStore(t)
	sb := sandbox("sb-p", "firm-a", nil)
	sb.NetSlot = 5
	mustPut(t, s, sb, sandbox("sb-ended", "firm-a", nil))
	if err := s.UpdateSandboxState(ctx, "sb-ended", StateKilled, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.ResumeSandbox(ctx, "sb-p", 1, "/run/x", NoNetSlot); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("resume of a running sandbox = %v, want failed_precondition", err)
	}
	if err := s.PauseSandbox(ctx, "sb-p", "/var/lib/airlock/paused/sb-p"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSandbox(ctx, "firm-a", "sb-p")
	if err != nil || got.State != StateRunning || got.PID != 0 || got.StateDir != "" || got.NetSlot != NoNetSlot ||
		got.PausedDir != "/var/lib/airlock/paused/sb-p" {
		t.Fatalf("paused = %+v, %v", got, err)
	}
	live, _ := s.LiveSandboxes(ctx)
	if !slices.Contains(ids(live), "sb-p") {
		t.Errorf("live sandboxes %v lack the paused one", ids(live))
	}
	// Its slot is free for another sandbox meanwhile.
	other := sandbox("sb-q", "firm-a", nil)
	other.NetSlot = 5
	mustPut(t, s, other)
	if err := s.PauseSandbox(ctx, "sb-p", "/elsewhere"); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("second pause = %v, want failed_precondition", err)
	}
	if err := s.ResumeSandbox(ctx, "sb-p", 99, "/run/airlock/sb-p", 5); !is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("resume into a held slot = %v, want already_exists", err)
	}
	if err := s.ResumeSandbox(ctx, "sb-p", 99, "/run/airlock/sb-p", 6); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSandbox(ctx, "firm-a", "sb-p")
	if got.PID != 99 || got.StateDir != "/run/airlock/sb-p" || got.NetSlot != 6 || got.PausedDir != "" {
		t.Errorf("resumed = %+v", got)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"pause ended", s.PauseSandbox(ctx, "sb-ended", "/d")},
		{"resume ended", s.ResumeSandbox(ctx, "sb-ended", 1, "/d", NoNetSlot)},
	} {
		if !errdefs.IsFailedPrecondition(tc.err) {
			t.Errorf("%s = %v, want failed_precondition", tc.name, tc.err)
		}
	}
	if err := s.PauseSandbox(ctx, "sb-nope", "/d"); !errdefs.IsNotFound(err) {
		t.Errorf("pause missing = %v", err)
	}
	if err := s.PauseSandbox(ctx, "sb-p", ""); !errdefs.IsInvalidArgument(err) {
		t.Errorf("pause without a dir = %v", err)
	}
}
