package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// newManager starts a Manager over the test template with its own store.
func newManager(t testing.TB, cfg sandbox.Config) (*sandbox.Manager, *store.Store) {
	t.Helper()
	cfg.Host = vmtest.Host(t)
	cfg.Templates = vmtest.Registry(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = st
	m, err := sandbox.New(vmtest.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		st.Close()
	})
	return m, st
}

func create(t *testing.T, m *sandbox.Manager, tenant string, md map[string]string) sandbox.Info {
	t.Helper()
	info, err := m.Create(vmtest.Context(t), sandbox.CreateRequest{Tenant: tenant, Template: vmtest.TemplateName, Metadata: md})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return info
}

func sh(t *testing.T, m *sandbox.Manager, tenant, id, cmd string) string {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := m.Exec(vmtest.Context(t), tenant, id, guest.ExecOptions{Shell: cmd, Timeout: time.Minute}, &out, &errb)
	if err != nil {
		t.Fatalf("exec %q in %s: %v", cmd, id, err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exec %q in %s: exit %d: %s", cmd, id, res.ExitCode, errb.String())
	}
	return out.String()
}

func TestClonesShareTheBakeAndNothingElse(t *testing.T) {
	m, _ := newManager(t, sandbox.Config{})
	a := create(t, m, "acme", nil)
	b := create(t, m, "acme", nil)
	for _, id := range []string{a.ID, b.ID} {
		if got := sh(t, m, "acme", id, "cat /etc/airlock/baked-marker"); got != "written during the bake\n" {
			t.Fatalf("%s: baked file = %q", id, got)
		}
	}
	sh(t, m, "acme", a.ID, "echo privileged > /job/a.txt; echo x > /etc/a-was-here")
	if got := sh(t, m, "acme", b.ID, "ls /job /etc | grep -c -e a.txt -e a-was-here || true"); strings.TrimSpace(got) != "0" {
		t.Fatalf("clone b sees clone a's files (%s)", got)
	}
	if err := m.Kill(vmtest.Context(t), "acme", a.ID); err != nil {
		t.Fatal(err)
	}
	c := create(t, m, "acme", nil)
	if got := sh(t, m, "acme", c.ID, "ls /job /etc | grep -c -e a.txt -e a-was-here || true"); strings.TrimSpace(got) != "0" {
		t.Fatalf("a clone created after a was destroyed sees its files (%s)", got)
	}
}

func TestClonesDivergeAndKeepTime(t *testing.T) {
	m, _ := newManager(t, sandbox.Config{MaxSandboxes: 32})
	tmpl, err := vmtest.Registry(t).Get(vmtest.TemplateName)
	if err != nil {
		t.Fatal(err)
	}
	memBefore, _ := image.FileSHA256(tmpl.MemPath())
	rootBefore, _ := image.FileSHA256(tmpl.RootImage)

	const n = 20
	infos := make([]sandbox.Info, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range infos {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			infos[i], errs[i] = m.Create(vmtest.Context(t), sandbox.CreateRequest{Tenant: "acme", Template: vmtest.TemplateName})
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	randoms, bootIDs := map[string]string{}, map[string]string{}
	for _, info := range infos {
		before := time.Now()
		out := sh(t, m, "acme", info.ID, "head -c 32 /dev/urandom | sha256sum; cat /proc/sys/kernel/random/boot_id; date +%s.%N")
		after := time.Now()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: output %q", info.ID, out)
		}
		if other, dup := randoms[lines[0]]; dup {
			t.Fatalf("%s and %s produced the same random bytes", info.ID, other)
		}
		randoms[lines[0]] = info.ID
		if other, dup := bootIDs[lines[1]]; dup {
			t.Fatalf("%s and %s share boot_id %s", info.ID, other, lines[1])
		}
		bootIDs[lines[1]] = info.ID
		secs, err := strconv.ParseFloat(lines[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		guestTime := time.Unix(0, int64(secs*1e9))
		if guestTime.Before(before.Add(-time.Second)) || guestTime.After(after.Add(time.Second)) {
			t.Fatalf("%s: guest clock %s, host between %s and %s", info.ID, guestTime, before, after)
		}
	}
	for _, info := range infos {
		m.Kill(vmtest.Context(t), "acme", info.ID)
	}
	if after, _ := image.FileSHA256(tmpl.MemPath()); after != memBefore {
		t.Fatal("template memory file changed while clones ran")
	}
	if after, _ := image.FileSHA256(tmpl.RootImage); after != rootBefore {
		t.Fatal("template root image changed while clones ran")
	}
}

func TestFork(t *testing.T) {
	m, st := newManager(t, sandbox.Config{})
	parent := create(t, m, "acme", map[string]string{"matter": "m-1"})
	sh(t, m, "acme", parent.ID, "echo before-fork > /job/state")
	children, err := m.Fork(vmtest.Context(t), "acme", parent.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 2 {
		t.Fatalf("%d children", len(children))
	}
	sh(t, m, "acme", parent.ID, "echo parent-after > /job/state")
	for i, c := range children {
		if c.ParentID != parent.ID || c.Metadata["matter"] != "m-1" {
			t.Fatalf("child %+v", c)
		}
		if got := sh(t, m, "acme", c.ID, "cat /job/state"); got != "before-fork\n" {
			t.Fatalf("child %d sees %q, want the parent's state at fork time", i, got)
		}
		sh(t, m, "acme", c.ID, "echo child-"+strconv.Itoa(i)+" > /job/state")
	}
	if got := sh(t, m, "acme", parent.ID, "cat /job/state"); got != "parent-after\n" {
		t.Fatalf("parent sees %q after children wrote", got)
	}
	if got := sh(t, m, "acme", children[0].ID, "cat /job/state"); got != "child-0\n" {
		t.Fatalf("child 0 sees %q", got)
	}
	recs, err := st.QueryAudit(vmtest.Context(t), store.AuditFilter{SandboxID: parent.ID, Events: []string{"fork"}})
	if err != nil || len(recs) != 1 || recs[0].Outcome != "ok" {
		t.Fatalf("fork audit: %+v %v", recs, err)
	}
}

func TestTenantIsolationAndErrors(t *testing.T) {
	m, _ := newManager(t, sandbox.Config{MaxTTL: time.Hour})
	ctx := vmtest.Context(t)
	a := create(t, m, "tenant-a", map[string]string{"doc": "d1"})
	if _, err := m.Get(ctx, "tenant-b", a.ID); !errdefs.IsNotFound(err) {
		t.Errorf("get as other tenant: %v", err)
	}
	if _, err := m.Exec(ctx, "tenant-b", a.ID, guest.ExecOptions{Shell: "true"}, nil, nil); !errdefs.IsNotFound(err) {
		t.Errorf("exec as other tenant: %v", err)
	}
	if _, err := m.ReadFile(ctx, "tenant-b", a.ID, "/etc/hostname", &bytes.Buffer{}, 0); !errdefs.IsNotFound(err) {
		t.Errorf("read as other tenant: %v", err)
	}
	if err := m.Kill(ctx, "tenant-b", a.ID); !errdefs.IsNotFound(err) {
		t.Errorf("kill as other tenant: %v", err)
	}
	if _, err := m.Fork(ctx, "tenant-b", a.ID, 1); !errdefs.IsNotFound(err) {
		t.Errorf("fork as other tenant: %v", err)
	}
	if l, _ := m.List(ctx, sandbox.ListFilter{Tenant: "tenant-b"}); len(l) != 0 {
		t.Errorf("tenant b lists %d sandboxes", len(l))
	}
	if l, _ := m.List(ctx, sandbox.ListFilter{Tenant: "tenant-a", Metadata: map[string]string{"doc": "d1"}}); len(l) != 1 || l[0].ID != a.ID {
		t.Errorf("list by metadata: %+v", l)
	}
	for _, tc := range []struct {
		name string
		req  sandbox.CreateRequest
		want error
	}{
		{"unknown template", sandbox.CreateRequest{Tenant: "tenant-a", Template: "no-such"}, errdefs.ErrNotFound},
		{"negative ttl", sandbox.CreateRequest{Tenant: "tenant-a", Template: vmtest.TemplateName, TTL: -time.Second}, errdefs.ErrInvalidArgument},
		{"ttl over max", sandbox.CreateRequest{Tenant: "tenant-a", Template: vmtest.TemplateName, TTL: 2 * time.Hour}, errdefs.ErrInvalidArgument},
		{"bad tenant", sandbox.CreateRequest{Tenant: "Bad Tenant", Template: vmtest.TemplateName}, errdefs.ErrInvalidArgument},
		{"bad metadata", sandbox.CreateRequest{Tenant: "tenant-a", Template: vmtest.TemplateName, Metadata: map[string]string{"a b": "c"}}, errdefs.ErrInvalidArgument},
	} {
		if _, err := m.Create(ctx, tc.req); errdefs.Class(err) != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	// The sandbox still works after all the refusals.
	sh(t, m, "tenant-a", a.ID, "true")
}

func TestTTLExpiry(t *testing.T) {
	m, st := newManager(t, sandbox.Config{MaxSandboxes: 32})
	ctx := vmtest.Context(t)
	const n = 20
	ttl := 3 * time.Second
	var ids []string
	created := map[string]sandbox.Info{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "acme", Template: vmtest.TemplateName, TTL: ttl})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids = append(ids, info.ID)
			created[info.ID] = info
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var latest time.Time
	for _, id := range ids {
		info, _ := m.Get(ctx, "acme", id)
		if info.Deadline.After(latest) {
			latest = info.Deadline
		}
	}
	time.Sleep(time.Until(latest.Add(2 * time.Second)))
	for _, id := range ids {
		info, err := m.Get(ctx, "acme", id)
		if err != nil || info.State != store.StateExpired {
			t.Errorf("%s: state %q (%v), want expired within ttl+2s", id, info.State, err)
		}
		// What create answered is what the store holds (milliseconds), and
		// no sandbox ends before the deadline its creator was given.
		stored, err := st.GetSandbox(ctx, "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		if c := created[id]; !stored.Deadline.Equal(c.Deadline) || !stored.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("%s: stored created %s deadline %s, create answered %s %s", id, stored.CreatedAt, stored.Deadline, c.CreatedAt, c.Deadline)
		}
		if info.EndedAt == nil || info.EndedAt.Before(info.Deadline) {
			t.Errorf("%s: ended %v, before its deadline %s", id, info.EndedAt, info.Deadline)
		}
		if _, err := os.Stat(filepath.Join(vmtest.Host(t).RunDir, id)); !os.IsNotExist(err) {
			t.Errorf("%s: state dir remains", id)
		}
		recs, _ := st.QueryAudit(ctx, store.AuditFilter{SandboxID: id, Events: []string{"expire"}})
		if len(recs) != 1 {
			t.Errorf("%s: %d expire records", id, len(recs))
		}
	}
}

// TestPrewarm: Prewarm returns once the pool holds clones that have run
// the egress self-check while warming, so the next create with a probe is
// served from one of them (its create record says so); a template that
// cannot be opened fails Prewarm as it would fail Create.
func TestPrewarm(t *testing.T) {
	m, st := newManager(t, sandbox.Config{WarmPool: 2})
	ctx := vmtest.Context(t)
	if err := m.Prewarm(ctx, vmtest.TemplateName); err != nil {
		t.Fatalf("prewarm: %v", err)
	}
	info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "acme", Template: vmtest.TemplateName, Probe: true})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	recs, err := st.QueryAudit(ctx, store.AuditFilter{SandboxID: info.ID, Events: []string{"create"}})
	if err != nil || len(recs) != 1 {
		t.Fatalf("create records: %v %+v", err, recs)
	}
	if got := recs[0].Detail["probe"]; got != "ok_at_warmup" {
		t.Errorf("create after prewarm: probe %q, want ok_at_warmup (a prewarmed clone)", got)
	}
	if err := m.Prewarm(ctx, "no-such-template"); !errdefs.IsNotFound(err) {
		t.Errorf("prewarm of a missing template: %v, want not_found", err)
	}
}
