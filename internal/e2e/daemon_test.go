package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// TestDaemon runs the tests that can share one daemon, in order.
func TestDaemon(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	t.Run("GoSDK", func(t *testing.T) { testGoSDK(t, d) })
	t.Run("PythonSDK", func(t *testing.T) { testPythonSDK(t, d) })
	t.Run("TenantIsolation", func(t *testing.T) { testTenantIsolation(t, d) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, d) })
	t.Run("CLI", func(t *testing.T) { testCLI(t, d) })
	t.Run("TTL", func(t *testing.T) { testTTL(t, d) })
}

func testGoSDK(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	caseID := uniq("gosdk")
	md := map[string]string{"suite": "e2e", "case": caseID, "class": "privileged"}
	sbx := createSandbox(t, c, 300, md)
	if sbx.State != "running" || sbx.Template != templateName || sbx.Tenant != tenantA || sbx.Metadata["case"] != caseID {
		t.Fatalf("created sandbox = %+v", sbx.SandboxInfo)
	}
	if left := time.Until(sbx.Deadline); left < 250*time.Second || left > 301*time.Second {
		t.Errorf("deadline %s is %s away; want about 300s", sbx.Deadline, left)
	}

	// Exec: exit code, stdout and stderr kept apart.
	res, err := sbx.Exec(ctx(t), "echo to-stdout; echo to-stderr >&2; exit 3", client.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Stdout != "to-stdout\n" || res.Stderr != "to-stderr\n" || res.TimedOut {
		t.Fatalf("exec = exit %d, stdout %q, stderr %q, timed out %v", res.ExitCode, res.Stdout, res.Stderr, res.TimedOut)
	}
	res, err = sbx.ExecArgv(ctx(t), []string{"/bin/sh", "-c", `printf '%s|%s' "$1" "$GREETING"`, "sh", "arg with spaces"},
		client.WithEnv(map[string]string{"GREETING": "hi"}), client.WithTimeout(time.Minute))
	if err != nil || res.ExitCode != 0 || res.Stdout != "arg with spaces|hi" {
		t.Fatalf("exec argv = %+v, %v", res, err)
	}
	res, err = sbx.Exec(ctx(t), "cat", client.WithStdin([]byte("from stdin\x00\xff")), client.WithTimeout(time.Minute))
	if err != nil || res.Stdout != "from stdin\x00\xff" {
		t.Fatalf("exec with binary stdin = %+v, %v", res, err)
	}

	// Streaming exec: every chunk arrives, in order per stream.
	var sout, serr bytes.Buffer
	sres, err := sbx.ExecStream(ctx(t), client.ExecRequest{
		Cmd:     "for i in 1 2 3 4 5; do echo line$i; sleep 0.1; done; echo done >&2; exit 5",
		Timeout: time.Minute,
	}, &sout, &serr)
	if err != nil {
		t.Fatal(err)
	}
	if sres.ExitCode != 5 || sout.String() != "line1\nline2\nline3\nline4\nline5\n" || serr.String() != "done\n" {
		t.Fatalf("exec stream = exit %d, stdout %q, stderr %q", sres.ExitCode, sout.String(), serr.String())
	}
	if sres.StdoutBytes != int64(sout.Len()) {
		t.Errorf("exec stream reports %d stdout bytes, delivered %d", sres.StdoutBytes, sout.Len())
	}

	// Files: small, then 20 MB with a matching hash on both sides.
	if n, err := sbx.Files().Write(ctx(t), "/job/in/hello.txt", strings.NewReader("hello, sandbox\n")); err != nil || n != 15 {
		t.Fatalf("write = %d, %v", n, err)
	}
	if got := mustExec(t, sbx, "cat /job/in/hello.txt"); got != "hello, sandbox\n" {
		t.Fatalf("guest sees %q", got)
	}
	if b, err := sbx.Files().ReadAll(ctx(t), "/job/in/hello.txt"); err != nil || string(b) != "hello, sandbox\n" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if fi, err := sbx.Files().Stat(ctx(t), "/job/in/hello.txt"); err != nil || fi.Size != 15 || fi.IsDir {
		t.Fatalf("stat = %+v, %v", fi, err)
	}
	big := make([]byte, 20<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(big); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			big[i+j] = byte(v >> (8 * j))
		}
	}
	sum := sha256.Sum256(big)
	want := hex.EncodeToString(sum[:])
	began := time.Now()
	if n, err := sbx.Files().Write(ctx(t), "/job/big.bin", bytes.NewReader(big)); err != nil || n != int64(len(big)) {
		t.Fatalf("write 20 MB = %d, %v", n, err)
	}
	t.Logf("20 MB upload took %s", time.Since(began).Round(time.Millisecond))
	if got := mustExec(t, sbx, "sha256sum /job/big.bin"); !strings.HasPrefix(got, want+" ") {
		t.Fatalf("guest sha256 %q, want %s", got, want)
	}
	// Usage: the VMM has spent CPU, and the 20 MB the guest holds in its
	// page cache are pages of this sandbox alone.
	if got, err := c.GetSandbox(ctx(t), sbx.ID); err != nil || got.Usage == nil ||
		got.Usage.CPUSeconds <= 0 || got.Usage.MemoryPrivateBytes < 20<<20 || got.Usage.MemoryPSSBytes < got.Usage.MemoryPrivateBytes {
		t.Fatalf("get after a 20 MB upload: usage %+v, %v; want CPU > 0, private >= 20 MiB <= PSS", usageOf(got), err)
	}
	began = time.Now()
	back, err := sbx.Files().ReadAll(ctx(t), "/job/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 MB download took %s", time.Since(began).Round(time.Millisecond))
	if s := sha256.Sum256(back); hex.EncodeToString(s[:]) != want || len(back) != len(big) {
		t.Fatalf("downloaded %d bytes with sha256 %x, want %d bytes %s", len(back), s, len(big), want)
	}

	// List by metadata: exactly this sandbox; a non-matching value: none.
	got, err := c.ListSandboxes(ctx(t), map[string]string{"case": caseID, "suite": "e2e"})
	if err != nil || len(got) != 1 || got[0].ID != sbx.ID {
		t.Fatalf("list by metadata = %v, %v; want just %s", ids(got), err, sbx.ID)
	}
	if got, err := c.ListSandboxes(ctx(t), map[string]string{"case": caseID + "-other"}); err != nil || len(got) != 0 {
		t.Fatalf("list by other metadata = %v, %v; want none", ids(got), err)
	}

	// Fork: the child sees the parent's files; later writes stay apart.
	mustExec(t, sbx, "echo parent-v1 > /job/shared.txt")
	kids, err := sbx.Fork(ctx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 {
		t.Fatalf("fork returned %d sandboxes", len(kids))
	}
	child := kids[0]
	t.Cleanup(func() { _ = child.Kill(context.Background()) })
	if child.ParentID != sbx.ID || child.ID == sbx.ID || child.Metadata["case"] != caseID || child.State != "running" {
		t.Fatalf("child = %+v", child.SandboxInfo)
	}
	if got := mustExec(t, child, "cat /job/shared.txt; sha256sum /job/big.bin"); got != "parent-v1\n"+want+"  /job/big.bin\n" {
		t.Fatalf("child sees %q", got)
	}
	mustExec(t, child, "echo child > /job/shared.txt; echo only-child > /job/child.txt")
	mustExec(t, sbx, "echo parent-v2 > /job/shared.txt")
	if got := mustExec(t, sbx, "cat /job/shared.txt; ls /job"); got != "parent-v2\nbig.bin\nin\nshared.txt\n" {
		t.Fatalf("parent sees %q after the child wrote", got)
	}
	if b, err := child.Files().ReadAll(ctx(t), "/job/shared.txt"); err != nil || string(b) != "child\n" {
		t.Fatalf("child reads %q, %v after the parent wrote", b, err)
	}
	if got, err := c.ListSandboxes(ctx(t), map[string]string{"case": caseID}); err != nil || len(got) != 2 {
		t.Fatalf("list after fork = %v, %v; want parent and child", ids(got), err)
	}

	// Kill: the sandbox reads as killed, refuses work, and its VM is gone.
	for _, s := range []*client.Sandbox{child, sbx} {
		if err := s.Kill(ctx(t)); err != nil {
			t.Fatalf("kill %s: %v", s.ID, err)
		}
		got, err := c.GetSandbox(ctx(t), s.ID)
		if err != nil {
			t.Fatalf("get %s after kill: %v", s.ID, err)
		}
		if got.State != "killed" || got.EndedAt == nil {
			t.Fatalf("get %s after kill = state %q, ended %v", s.ID, got.State, got.EndedAt)
		}
		if _, err := s.Exec(ctx(t), "true"); !errors.Is(err, client.ErrFailedPrecondition) || !strings.Contains(err.Error(), "is killed") {
			t.Fatalf("exec in killed %s: %v, want failed_precondition naming the state", s.ID, err)
		}
		if err := s.Kill(ctx(t)); !errors.Is(err, client.ErrFailedPrecondition) {
			t.Fatalf("second kill of %s: %v, want failed_precondition", s.ID, err)
		}
		d.vmGone(t, s.ID)
	}
	if got, err := c.ListSandboxes(ctx(t), map[string]string{"case": caseID}); err != nil || len(got) != 0 {
		t.Fatalf("running list after kill = %v, %v", ids(got), err)
	}
	if got, err := c.ListSandboxes(ctx(t), map[string]string{"case": caseID}, client.IncludeEnded()); err != nil || len(got) != 2 {
		t.Fatalf("list with ended after kill = %v, %v; want both", ids(got), err)
	}
}

func ids(sbs []*client.Sandbox) []string {
	out := make([]string, len(sbs))
	for i, s := range sbs {
		out[i] = s.ID + "(" + s.State + ")"
	}
	return out
}

func testPythonSDK(t *testing.T, d *daemon) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-m", "unittest", "-v", "sdk/python/tests/test_e2e.py")
	cmd.Dir = d.env.root
	cmd.Env = append(os.Environ(),
		"AIRLOCK_URL="+d.url(),
		"AIRLOCK_API_KEY="+d.env.keys[tenantA],
		"AIRLOCK_E2E_TEMPLATE="+templateName,
		"PYTHONPATH="+filepath.Join(d.env.root, "sdk/python"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("python3 -m unittest sdk/python/tests/test_e2e.py (%s):\n%s", time.Since(began).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("python e2e tests failed: %v", err)
	}
	m := regexp.MustCompile(`(?m)^Ran (\d+) tests? in`).FindSubmatch(out)
	if m == nil || string(m[1]) == "0" {
		t.Fatalf("python e2e tests ran nothing")
	}
	if bytes.Contains(out, []byte("skipped")) {
		t.Fatalf("python e2e tests skipped some tests although AIRLOCK_URL was set")
	}
}

func testTenantIsolation(t *testing.T, d *daemon) {
	a, b := d.client(t, tenantA), d.client(t, tenantB)
	tag := uniq("iso")
	sbx := createSandbox(t, a, 300, map[string]string{"iso": tag})
	mustExec(t, sbx, "echo secret-of-acme > /job/secret.txt")
	// B's own sandbox, so B's lists are not trivially empty.
	own := createSandbox(t, b, 300, map[string]string{"iso": tag})

	// Through the SDK: every operation on A's sandbox is not_found for B.
	bsbx := b.Sandbox(sbx.ID)
	checks := []struct {
		name string
		err  error
	}{}
	add := func(name string, err error) {
		checks = append(checks, struct {
			name string
			err  error
		}{name, err})
	}
	_, err := b.GetSandbox(ctx(t), sbx.ID)
	add("get", err)
	_, err = bsbx.Exec(ctx(t), "cat /job/secret.txt")
	add("exec", err)
	_, err = bsbx.ExecStream(ctx(t), client.ExecRequest{Cmd: "cat /job/secret.txt"}, nil, nil)
	add("exec stream", err)
	_, err = bsbx.Files().ReadAll(ctx(t), "/job/secret.txt")
	add("read file", err)
	_, err = bsbx.Files().Write(ctx(t), "/job/planted.txt", strings.NewReader("from globex"))
	add("write file", err)
	_, err = bsbx.Files().Stat(ctx(t), "/job/secret.txt")
	add("stat", err)
	_, err = bsbx.Files().List(ctx(t), "/job")
	add("list files", err)
	add("remove file", bsbx.Files().Remove(ctx(t), "/job/secret.txt"))
	add("set egress", bsbx.SetEgress(ctx(t), client.DenyAll()))
	_, err = bsbx.Fork(ctx(t), 1)
	add("fork", err)
	add("kill", bsbx.Kill(ctx(t)))
	for _, c := range checks {
		var ae *client.Error
		if !errors.As(c.err, &ae) || ae.Status != 404 || ae.Code != "not_found" {
			t.Errorf("tenant %s %s on %s's sandbox: %v, want 404 not_found", tenantB, c.name, tenantA, c.err)
		}
	}

	// The raw answers are exactly those for a sandbox that never existed:
	// nothing tells B the id is taken.
	const ghost = "sbx-doesnotexist0000"
	for _, r := range []struct{ method, suffix, body string }{
		{"GET", "", ""},
		{"DELETE", "", ""},
		{"POST", "/exec", `{"cmd":"true"}`},
		{"POST", "/fork", `{}`},
		{"GET", "/files?path=/job/secret.txt", ""},
		{"PUT", "/egress", `{"default":"deny"}`},
	} {
		real := d.do(t, tenantB, r.method, "/v1/sandboxes/"+sbx.ID+r.suffix, strings.NewReader(r.body))
		fake := d.do(t, tenantB, r.method, "/v1/sandboxes/"+ghost+r.suffix, strings.NewReader(r.body))
		if real.status != 404 || real.errCode() != "not_found" {
			t.Errorf("B %s %s on A's sandbox = %s, want 404 not_found", r.method, r.suffix, real)
		}
		if got, want := strings.ReplaceAll(string(real.body), sbx.ID, ghost), string(fake.body); got != want {
			t.Errorf("B %s %s: answer for A's sandbox %q differs from an unknown one's %q", r.method, r.suffix, real.body, fake.body)
		}
	}

	// Lists and audit: B sees its own and nothing of A's.
	got, err := b.ListSandboxes(ctx(t), map[string]string{"iso": tag}, client.IncludeEnded())
	if err != nil || len(got) != 1 || got[0].ID != own.ID {
		t.Errorf("B lists %v, %v; want only its own %s", ids(got), err, own.ID)
	}
	all, err := b.ListSandboxes(ctx(t), nil, client.IncludeEnded())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Tenant != tenantB || s.ID == sbx.ID {
			t.Errorf("B's unfiltered list holds %s of tenant %s", s.ID, s.Tenant)
		}
	}
	if recs, err := b.Audit(ctx(t), client.AuditFilter{SandboxID: sbx.ID}); err != nil || len(recs) != 0 {
		t.Errorf("B's audit for A's sandbox = %d records, %v; want none", len(recs), err)
	}
	if recs, err := b.Audit(ctx(t), client.AuditFilter{Metadata: map[string]string{"iso": tag}}); err != nil || len(recs) == 0 {
		t.Errorf("B's audit by metadata = %d records, %v; want its own", len(recs), err)
	} else {
		for _, r := range recs {
			if r.Tenant != tenantB || r.SandboxID != own.ID {
				t.Errorf("B's audit by metadata holds %+v", r)
			}
		}
	}
	for _, r := range allAudit(t, b, client.AuditFilter{}) {
		if r.Tenant != tenantB || r.SandboxID == sbx.ID {
			t.Errorf("B's unfiltered audit holds a record of tenant %q sandbox %q", r.Tenant, r.SandboxID)
		}
	}
	raw := d.do(t, tenantB, "GET", "/v1/audit?sandbox="+sbx.ID, nil)
	if raw.status != 200 || strings.Contains(string(raw.body), sbx.ID) {
		t.Errorf("B GET /v1/audit?sandbox=A's = %s", raw)
	}

	// A's sandbox is untouched by all of it.
	if got := mustExec(t, sbx, "cat /job/secret.txt; ls /job"); got != "secret-of-acme\nsecret.txt\n" {
		t.Fatalf("A's sandbox after B's attempts: %q", got)
	}
	if s, err := a.GetSandbox(ctx(t), sbx.ID); err != nil || s.State != "running" {
		t.Fatalf("A's sandbox after B's attempts: %+v, %v", s, err)
	}
	// And A cannot reach B's either.
	if _, err := a.Sandbox(own.ID).Exec(ctx(t), "true"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("A exec in B's sandbox: %v, want not_found", err)
	}
}

// allAudit pages through every audit record c may see.
func allAudit(t *testing.T, c *client.Client, f client.AuditFilter) []client.AuditRecord {
	t.Helper()
	var out []client.AuditRecord
	f.Limit = 1000
	for {
		recs, err := c.Audit(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
		if len(recs) < f.Limit {
			return out
		}
		f.AfterSeq = recs[len(recs)-1].Seq
	}
}

func testTTL(t *testing.T, d *daemon) {
	c := d.client(t, tenantA)
	tag := uniq("ttl")
	const n, ttl = 20, 3
	sbs := make([]*client.Sandbox, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range sbs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sbs[i], errs[i] = c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: ttl,
				Metadata: map[string]string{"ttl": tag}})
		}(i)
	}
	wg.Wait()
	t.Logf("%d concurrent creates took %s", n, time.Since(began).Round(time.Millisecond))
	for i, err := range errs {
		if err != nil {
			t.Errorf("create %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	var last time.Time
	for _, s := range sbs {
		if d := s.Deadline.Sub(s.CreatedAt); d != ttl*time.Second {
			t.Errorf("%s: deadline - created = %s, want %ds", s.ID, d, ttl)
		}
		if s.Deadline.After(last) {
			last = s.Deadline
		}
	}
	// Poll until every sandbox shows expired, or well past the latest
	// deadline + 2 s (the margin only covers polling under load).
	pending := map[string]*client.Sandbox{}
	for _, s := range sbs {
		pending[s.ID] = s
	}
	for len(pending) > 0 && time.Now().Before(last.Add(2*time.Second+10*time.Second)) {
		time.Sleep(200 * time.Millisecond)
		got, err := c.ListSandboxes(ctx(t), map[string]string{"ttl": tag}, client.IncludeEnded())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			s := pending[g.ID]
			if s == nil || g.State == "running" {
				continue
			}
			delete(pending, g.ID)
			if g.State != "expired" {
				t.Errorf("%s: state %s, want expired", g.ID, g.State)
				continue
			}
			if g.EndedAt == nil {
				t.Errorf("%s: expired without ended_at", g.ID)
				continue
			}
			if late := g.EndedAt.Sub(s.Deadline); late > 2*time.Second || late < 0 {
				t.Errorf("%s: ended %s after its deadline; want within 0..2s", g.ID, late.Round(time.Millisecond))
			}
		}
	}
	for id := range pending {
		t.Errorf("%s still not expired %s after its deadline", id, time.Since(pending[id].Deadline).Round(time.Millisecond))
	}
	var worst time.Duration
	for _, s := range sbs {
		got, err := c.GetSandbox(ctx(t), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.EndedAt != nil && got.EndedAt.Sub(s.Deadline) > worst {
			worst = got.EndedAt.Sub(s.Deadline)
		}
		d.vmGone(t, s.ID)
		if _, err := s.Exec(ctx(t), "true"); !errors.Is(err, client.ErrFailedPrecondition) || !strings.Contains(err.Error(), "is expired") {
			t.Errorf("exec in expired %s: %v, want failed_precondition naming the state", s.ID, err)
		}
	}
	t.Logf("latest end after a deadline: %s", worst.Round(time.Millisecond))
	recs := allAudit(t, c, client.AuditFilter{Metadata: map[string]string{"ttl": tag}, Events: []string{"expire"}})
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Outcome != "ok" {
			t.Errorf("expire record %d of %s: outcome %s", r.Seq, r.SandboxID, r.Outcome)
		}
		seen[r.SandboxID] = true
	}
	for _, s := range sbs {
		if !seen[s.ID] {
			t.Errorf("no expire audit record for %s", s.ID)
		}
	}
	if len(recs) != n {
		t.Errorf("%d expire records for %d sandboxes", len(recs), n)
	}
	if running, err := c.ListSandboxes(ctx(t), map[string]string{"ttl": tag}); err != nil || len(running) != 0 {
		t.Errorf("running after expiry: %v, %v", ids(running), err)
	}
}

// usageOf is s's usage for a failure message (s may be nil).
func usageOf(s *client.Sandbox) any {
	if s == nil || s.Usage == nil {
		return nil
	}
	return *s.Usage
}
