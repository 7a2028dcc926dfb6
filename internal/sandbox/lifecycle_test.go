package sandbox_test

// The manager's lifecycle decisions, in -short, on real local machines
// (package localmachines: directories and process trees on this host)
// instead of VMs. The VM-backed tests cover the same paths on QEMU.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
)

const lcTenant = "acme"

// lcEnv is a store and a local machine layer with one template, "base",
// whose root holds /etc/motd.
type lcEnv struct {
	st    *store.Store
	layer *localmachines.Layer
}

func newLCEnv(t *testing.T) *lcEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	layer, err := localmachines.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, map[string]string{"JOB": "test"}); err != nil {
		t.Fatal(err)
	}
	return &lcEnv{st: st, layer: layer}
}

// manager starts a Manager over e; it is shut down at cleanup unless the
// test closes it first.
func (e *lcEnv) manager(t *testing.T, cfg sandbox.Config) *sandbox.Manager {
	t.Helper()
	cfg.Machines, cfg.TemplateSource, cfg.Store = e.layer, e.layer, e.st
	if cfg.WarmPool == 0 {
		cfg.WarmPool = -1
	}
	m, err := sandbox.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

func (e *lcEnv) audit(t *testing.T, id, event string) []store.AuditRecord {
	t.Helper()
	recs, err := e.st.QueryAudit(context.Background(), store.AuditFilter{SandboxID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditRecord
	for _, r := range recs {
		if r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// auditSoon waits (briefly) for n records of event about id: an end is
// visible as a state a moment before its record is appended.
func (e *lcEnv) auditSoon(t *testing.T, id, event string, n int) []store.AuditRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs := e.audit(t, id, event)
		if len(recs) >= n || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func lcCreate(t *testing.T, m *sandbox.Manager, req sandbox.CreateRequest) sandbox.Info {
	t.Helper()
	if req.Tenant == "" {
		req.Tenant = lcTenant
	}
	if req.Template == "" {
		req.Template = "base"
	}
	info, err := m.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return info
}

func lcSh(t *testing.T, m *sandbox.Manager, id, cmd string) string {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := m.Exec(context.Background(), lcTenant, id, guest.ExecOptions{Shell: cmd, Timeout: time.Minute}, &out, &errb)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec %q in %s: %v (exit %d): %s", cmd, id, err, res.ExitCode, errb.String())
	}
	return out.String()
}

// waitState waits until sandbox id reads state.
func waitState(t *testing.T, m *sandbox.Manager, id, state string) sandbox.Info {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := m.Get(context.Background(), lcTenant, id)
		if err == nil && info.State == state {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s: state %q (err %v), want %q", id, info.State, err, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Capacity counts running sandboxes and reservations, a refused create is
// audited without an id, and a kill gives the place back.
func TestLifecycleCapacity(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{MaxSandboxes: 2})
	a := lcCreate(t, m, sandbox.CreateRequest{Metadata: map[string]string{"doc": "a"}})
	lcCreate(t, m, sandbox.CreateRequest{})
	_, err := m.Create(context.Background(), sandbox.CreateRequest{Tenant: lcTenant, Template: "base", Metadata: map[string]string{"doc": "refused"}})
	if !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("third create: %v, want resource exhausted", err)
	}
	recs, err := e.st.QueryAudit(context.Background(), store.AuditFilter{Metadata: map[string]string{"doc": "refused"}})
	if err != nil || len(recs) != 1 || recs[0].Event != store.EventCreate || recs[0].Outcome != "resource_exhausted" || recs[0].SandboxID != "" {
		t.Fatalf("refused create audit: %+v, %v", recs, err)
	}
	if err := m.Kill(context.Background(), lcTenant, a.ID); err != nil {
		t.Fatal(err)
	}
	lcCreate(t, m, sandbox.CreateRequest{})
	if _, err := os.Stat(filepath.Join(e.layer.RunDir(), a.ID)); !os.IsNotExist(err) {
		t.Errorf("killed sandbox's machine is still there: %v", err)
	}
}

// A create whose template does not exist is refused and audited.
func TestLifecycleCreateRefusals(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{MaxTTL: time.Hour})
	for _, c := range []struct {
		req  sandbox.CreateRequest
		want error
	}{
		{sandbox.CreateRequest{Tenant: lcTenant, Template: "nope"}, errdefs.ErrNotFound},
		{sandbox.CreateRequest{Tenant: lcTenant, Template: "base", TTL: 2 * time.Hour}, errdefs.ErrInvalidArgument},
		{sandbox.CreateRequest{Tenant: lcTenant, Template: "base", TTL: -time.Second}, errdefs.ErrInvalidArgument},
		{sandbox.CreateRequest{Tenant: "", Template: "base"}, errdefs.ErrInvalidArgument},
	} {
		if _, err := m.Create(context.Background(), c.req); !errors.Is(err, c.want) {
			t.Errorf("create %+v: %v, want %v", c.req, err, c.want)
		}
	}
	recs, err := e.st.QueryAudit(context.Background(), store.AuditFilter{Events: []string{store.EventCreate}})
	if err != nil || len(recs) != 4 {
		t.Fatalf("create audit records: %d (%v), want 4", len(recs), err)
	}
	for _, r := range recs {
		if r.Outcome == "ok" || r.SandboxID != "" {
			t.Errorf("refused create audited as %+v", r)
		}
	}
	if ents, _ := os.ReadDir(e.layer.RunDir()); len(ents) != 0 {
		t.Errorf("refused creates left machines: %v", ents)
	}
}

// SetTTL moves a running sandbox's deadline: extended, it outlives its
// first deadline; shortened, the reaper ends it at the new one; past the
// daemon's maximum lifetime, or on an ended sandbox, or another tenant's,
// it is refused. The deadline is persisted and audited.
func TestLifecycleSetTTL(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{ReapInterval: 20 * time.Millisecond, MaxTTL: time.Minute})
	ctx := context.Background()
	info := lcCreate(t, m, sandbox.CreateRequest{TTL: 500 * time.Millisecond})
	got, err := m.SetTTL(ctx, lcTenant, info.ID, 30*time.Second)
	if err != nil || !got.Deadline.After(info.Deadline.Add(20*time.Second)) {
		t.Fatalf("extend: %v, deadline %v (was %v)", err, got.Deadline, info.Deadline)
	}
	if sb, err := e.st.GetSandbox(ctx, lcTenant, info.ID); err != nil || !sb.Deadline.Equal(got.Deadline) {
		t.Errorf("stored deadline %v, %v; want %v", sb.Deadline, err, got.Deadline)
	}
	time.Sleep(800 * time.Millisecond) // past the first deadline
	if cur, _ := m.Get(ctx, lcTenant, info.ID); cur.State != store.StateRunning {
		t.Fatalf("extended sandbox ended at its old deadline: %s", cur.State)
	}
	for _, tc := range []struct {
		tenant string
		ttl    time.Duration
		want   error
	}{
		{lcTenant, 2 * time.Minute, errdefs.ErrInvalidArgument}, // past the 1 minute maximum lifetime
		{lcTenant, 0, errdefs.ErrInvalidArgument},
		{"other", 10 * time.Second, errdefs.ErrNotFound},
	} {
		if _, err := m.SetTTL(ctx, tc.tenant, info.ID, tc.ttl); !errors.Is(err, tc.want) {
			t.Errorf("SetTTL(%s, %s): %v, want %v", tc.tenant, tc.ttl, err, tc.want)
		}
	}
	if _, err := m.SetTTL(ctx, lcTenant, info.ID, time.Second); err != nil {
		t.Fatalf("shorten: %v", err)
	}
	waitState(t, m, info.ID, store.StateExpired)
	if _, err := m.SetTTL(ctx, lcTenant, info.ID, time.Minute); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("SetTTL on an expired sandbox: %v, want failed_precondition", err)
	}
	recs := e.audit(t, info.ID, store.EventTTLChange)
	if len(recs) != 2 || recs[0].Outcome != "ok" || recs[0].Detail["to"] == "" || recs[0].Template != "base" {
		t.Errorf("ttl_change audit: %+v", recs)
	}
}

// The reaper ends a sandbox at its deadline, destroys its machine and
// audits the expiry.
func TestLifecycleTTL(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{ReapInterval: 20 * time.Millisecond})
	info := lcCreate(t, m, sandbox.CreateRequest{TTL: 300 * time.Millisecond})
	if got := lcSh(t, m, info.ID, "cat etc/motd; echo $JOB"); got != "hello\ntest\n" {
		t.Errorf("template root and env: %q", got)
	}
	ended := waitState(t, m, info.ID, store.StateExpired)
	if ended.EndedAt == nil || ended.EndedAt.Before(info.Deadline) {
		t.Errorf("expired at %v, deadline %v", ended.EndedAt, info.Deadline)
	}
	if recs := e.auditSoon(t, info.ID, store.EventExpire, 1); len(recs) != 1 || recs[0].Detail["reason"] != "expired" {
		t.Errorf("expire audit: %+v", recs)
	}
	if _, err := os.Stat(filepath.Join(e.layer.RunDir(), info.ID)); !os.IsNotExist(err) {
		t.Errorf("expired sandbox's machine is still there: %v", err)
	}
	if _, err := m.Exec(context.Background(), lcTenant, info.ID, guest.ExecOptions{Shell: "true"}, nil, nil); !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "is expired") {
		t.Errorf("exec in an expired sandbox: %v, want failed_precondition naming the state", err)
	}
	if _, err := m.Exec(context.Background(), "other", info.ID, guest.ExecOptions{Shell: "true"}, nil, nil); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("another tenant's exec in an expired sandbox: %v, want not found", err)
	}
}

// A kill never waits for a running command: the command's call fails at
// once as NotFound, and both are audited.
func TestLifecycleKillRacesExec(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	info := lcCreate(t, m, sandbox.CreateRequest{})
	var wg sync.WaitGroup
	var execErr error
	var took time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		began := time.Now()
		_, execErr = m.Exec(context.Background(), lcTenant, info.ID, guest.ExecOptions{Shell: "touch started; sleep 30"}, nil, nil)
		took = time.Since(began)
	}()
	started := filepath.Join(e.layer.RunDir(), info.ID, "root", "started")
	for i := 0; ; i++ {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if i > 1000 {
			t.Fatal("command never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := m.Kill(context.Background(), lcTenant, info.ID); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(execErr, errdefs.ErrFailedPrecondition) || !strings.Contains(execErr.Error(), "ended while the call was running") {
		t.Errorf("exec killed under it: %v", execErr)
	}
	if took > 10*time.Second {
		t.Errorf("exec took %s after the kill", took)
	}
	if recs := e.audit(t, info.ID, store.EventExec); len(recs) != 1 || recs[0].Outcome != "failed_precondition" {
		t.Errorf("exec audit: %+v", recs)
	}
	if recs := e.audit(t, info.ID, store.EventKill); len(recs) != 1 || recs[0].Detail["reason"] != "killed" {
		t.Errorf("kill audit: %+v", recs)
	}
	if err := m.Kill(context.Background(), lcTenant, info.ID); !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "is killed") {
		t.Errorf("second kill: %v, want failed_precondition: killed", err)
	}
}

// A machine that dies on its own ends its sandbox as failed, noticed by
// the watcher.
func TestLifecycleMachineExit(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{MaxSandboxes: 1})
	info := lcCreate(t, m, sandbox.CreateRequest{})
	if err := e.layer.KillVMM(filepath.Join(e.layer.RunDir(), info.ID)); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, info.ID, store.StateFailed)
	if recs := e.auditSoon(t, info.ID, store.EventFail, 1); len(recs) != 1 || recs[0].Detail["reason"] != "vm_exited" {
		t.Errorf("fail audit: %+v", recs)
	}
	lcCreate(t, m, sandbox.CreateRequest{}) // the failed sandbox's place is free again
}

// Every call into a sandbox is audited with its sandbox's labels; file
// paths only as keyed digests; another tenant sees nothing.
func TestLifecycleAuditEveryCall(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	ctx := context.Background()
	md := map[string]string{"matter": "m1"}
	info := lcCreate(t, m, sandbox.CreateRequest{Metadata: md})
	if n, err := m.WriteFile(ctx, lcTenant, info.ID, "/job/in/doc.txt", strings.NewReader("secret text"), 0o644); err != nil || n != 11 {
		t.Fatalf("write: %d, %v", n, err)
	}
	var buf bytes.Buffer
	if _, err := m.ReadFile(ctx, lcTenant, info.ID, "/job/in/doc.txt", &buf, 0); err != nil || buf.String() != "secret text" {
		t.Fatalf("read: %q, %v", buf.String(), err)
	}
	if fi, err := m.StatFile(ctx, lcTenant, info.ID, "/job/in/doc.txt"); err != nil || fi.Size != 11 || fi.IsDir {
		t.Fatalf("stat: %+v, %v", fi, err)
	}
	if ents, err := m.ListFiles(ctx, lcTenant, info.ID, "/job/in"); err != nil || len(ents) != 1 || ents[0].Name != "doc.txt" {
		t.Fatalf("list: %+v, %v", ents, err)
	}
	if res, err := m.Exec(ctx, lcTenant, info.ID, guest.ExecOptions{Shell: "exit 3"}, nil, nil); err != nil || res.ExitCode != 3 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	if err := m.RemoveFile(ctx, lcTenant, info.ID, "/job/in/doc.txt", false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StatFile(ctx, lcTenant, info.ID, "/job/in/doc.txt"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("stat after remove: %v", err)
	}
	if _, err := m.Get(ctx, "other", info.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("another tenant's get: %v, want not found", err)
	}
	if _, err := m.WriteFile(ctx, "other", info.ID, "/x", strings.NewReader("x"), 0o644); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("another tenant's write: %v, want not found", err)
	}
	if err := m.Kill(ctx, lcTenant, info.ID); err != nil {
		t.Fatal(err)
	}
	recs, err := e.st.QueryAudit(ctx, store.AuditFilter{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
		if r.SandboxID != info.ID || r.Template != "base" || r.Tenant != lcTenant {
			t.Errorf("record without its sandbox's labels: %+v", r)
		}
		for k, v := range r.Detail {
			if strings.Contains(v, "doc.txt") || strings.Contains(v, "secret") {
				t.Errorf("record %s detail %s=%q names content", r.Event, k, v)
			}
		}
	}
	want := []string{"create", "file_write", "file_read", "exec", "file_remove", "kill"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Errorf("audited events %v, want %v", events, want)
	}
	for _, r := range recs {
		if r.Event == store.EventExec && (r.ExitCode == nil || *r.ExitCode != 3) {
			t.Errorf("exec record: %+v", r)
		}
		if strings.HasPrefix(r.Event, "file_") && len(r.Detail["path_hmac"]) != 32 {
			t.Errorf("%s record without a path digest: %+v", r.Event, r)
		}
	}
}

// Fork children start from the parent's files at the fork and diverge;
// the fork and each child are audited; counts are bounded.
func TestLifecycleFork(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{MaxSandboxes: 3})
	ctx := context.Background()
	parent := lcCreate(t, m, sandbox.CreateRequest{Metadata: map[string]string{"doc": "p"}})
	lcSh(t, m, parent.ID, "echo before > state")
	if _, err := m.Fork(ctx, lcTenant, parent.ID, sandbox.MaxForkCount+1); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("oversized fork: %v", err)
	}
	if _, err := m.Fork(ctx, lcTenant, parent.ID, 3); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Errorf("fork beyond capacity: %v", err)
	}
	kids, err := m.Fork(ctx, lcTenant, parent.ID, 2)
	if err != nil || len(kids) != 2 {
		t.Fatalf("fork: %v, %v", kids, err)
	}
	lcSh(t, m, parent.ID, "echo parent-after > state")
	for i, k := range kids {
		if k.ParentID != parent.ID || k.Deadline != parent.Deadline || k.Metadata["doc"] != "p" {
			t.Errorf("child %d: %+v", i, k)
		}
		if got := lcSh(t, m, k.ID, "cat state"); got != "before\n" {
			t.Errorf("child %d sees %q", i, got)
		}
		lcSh(t, m, k.ID, "echo child > state")
		if recs := e.audit(t, k.ID, store.EventCreate); len(recs) != 1 || recs[0].ParentID != parent.ID || recs[0].Detail["forked"] != "true" {
			t.Errorf("child %d create audit: %+v", i, recs)
		}
	}
	if got := lcSh(t, m, parent.ID, "cat state"); got != "parent-after\n" {
		t.Errorf("parent sees %q", got)
	}
	if recs := e.audit(t, parent.ID, store.EventFork); len(recs) != 1 || recs[0].Detail["children"] != "2" { // refusals happen before anything is tried
		t.Errorf("fork audit: %+v", recs)
	}
	if ents, _ := os.ReadDir(e.layer.RunDir()); len(ents) != 3 {
		t.Errorf("run dir holds %d entries, want the 3 machines (no fork data left)", len(ents))
	}
}

// A restarted manager adopts what still runs, fails what died, expires
// what is overdue and reaps machines nobody owns.
func TestLifecycleRecovery(t *testing.T) {
	e := newLCEnv(t)
	ctx := context.Background()
	first, err := sandbox.New(ctx, sandbox.Config{Machines: e.layer, TemplateSource: e.layer, Store: e.st,
		WarmPool: -1, ReapInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	alive := lcCreate(t, first, sandbox.CreateRequest{})
	lcSh(t, first, alive.ID, "echo kept > state")
	dead := lcCreate(t, first, sandbox.CreateRequest{})
	overdue := lcCreate(t, first, sandbox.CreateRequest{TTL: 100 * time.Millisecond})
	tmpl, _ := e.layer.Get("base")
	orphan, err := e.layer.Restore(ctx, tmpl, "sbx-orphan", nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Close() // the daemon goes; its sandboxes keep running
	if err := e.layer.KillVMM(filepath.Join(e.layer.RunDir(), dead.ID)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)

	m := e.manager(t, sandbox.Config{})
	if got := lcSh(t, m, alive.ID, "cat state"); got != "kept\n" {
		t.Errorf("adopted sandbox sees %q", got)
	}
	if info := waitState(t, m, dead.ID, store.StateFailed); info.EndedAt == nil {
		t.Errorf("dead sandbox: %+v", info)
	}
	waitState(t, m, overdue.ID, store.StateExpired)
	for id, reason := range map[string]string{dead.ID: "vm_exited", overdue.ID: "expired"} {
		var recs []store.AuditRecord
		for _, ev := range []string{store.EventFail, store.EventExpire} {
			recs = append(recs, e.auditSoon(t, id, ev, 0)...)
		}
		if len(recs) != 1 || recs[0].Detail["during"] != "recovery" || recs[0].Detail["reason"] != reason {
			t.Errorf("sandbox %s end audit: %+v, want reason %s during recovery", id, recs, reason)
		}
	}
	select {
	case <-orphan.Exited():
	case <-time.After(5 * time.Second):
		t.Error("orphan machine's VMM still runs")
	}
	for _, id := range []string{"sbx-orphan", dead.ID, overdue.ID} {
		if _, err := os.Stat(filepath.Join(e.layer.RunDir(), id)); !os.IsNotExist(err) {
			t.Errorf("%s left in the run dir: %v", id, err)
		}
	}
	list, err := m.List(ctx, sandbox.ListFilter{Tenant: lcTenant})
	if err != nil || len(list) != 1 || list[0].ID != alive.ID {
		t.Errorf("running after recovery: %+v, %v", list, err)
	}
}

// With a warm pool, a deny-all create with the self-check relies on the
// check the clone passed while warming; without one it runs it.
func TestLifecycleProbeAtCreate(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{WarmPool: 1})
	if err := m.Prewarm(context.Background(), "base"); err != nil {
		t.Fatal(err)
	}
	warm := lcCreate(t, m, sandbox.CreateRequest{Probe: true})
	if recs := e.audit(t, warm.ID, store.EventCreate); len(recs) != 1 || recs[0].Detail["probe"] != "ok_at_warmup" {
		t.Errorf("create from the pool: %+v", recs)
	}
	cold := e.manager(t, sandbox.Config{})
	info := lcCreate(t, cold, sandbox.CreateRequest{Probe: true})
	if recs := e.audit(t, info.ID, store.EventCreate); len(recs) != 1 || recs[0].Detail["probe"] != "ok" {
		t.Errorf("create with a probe: %+v", recs)
	}
	if rs, err := cold.Probe(context.Background(), lcTenant, info.ID); err != nil || len(rs) == 0 {
		t.Errorf("probe: %+v, %v", rs, err)
	}
	if recs := e.audit(t, info.ID, store.EventEgressProbe); len(recs) != 1 || recs[0].Outcome != "ok" {
		t.Errorf("probe audit: %+v", recs)
	}
}
