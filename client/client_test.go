package client_test

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

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

func setup(t *testing.T, cfg api.Config) (*apitest.Env, *client.Client) {
	t.Helper()
	env := apitest.StartLocal(t, cfg)
	c, err := client.New("unix://"+env.Socket, env.Key(t, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

func TestNewURLs(t *testing.T) {
	for _, u := range []string{"unix:///run/airlock/airlock.sock", "/run/airlock/airlock.sock", "http://127.0.0.1:8080", "https://airlock.example.com/prefix/"} {
		if _, err := client.New(u, "k"); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	for _, u := range []string{"unix://relative.sock", "ftp://x", "http://", "localhost:8080", ""} {
		if _, err := client.New(u, "k"); !errors.Is(err, client.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want invalid argument", u, err)
		}
	}
	t.Setenv("AIRLOCK_URL", "")
	if _, err := client.FromEnv(); err != nil {
		t.Errorf("FromEnv with defaults: %v", err)
	}
}

func TestSandboxFlow(t *testing.T) {
	ctx := context.Background()
	env, c := setup(t, api.Config{})
	sbx, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 60,
		Metadata: map[string]string{"matter": "m-1", "class": "privileged"}})
	if err != nil {
		t.Fatal(err)
	}
	if sbx.ID == "" || sbx.State != "running" || sbx.Egress.Default != "deny" {
		t.Errorf("created %+v", sbx.SandboxInfo)
	}
	res, err := sbx.Exec(ctx, "echo hello", client.WithTimeout(5*time.Second))
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "hello" {
		t.Errorf("exec: %+v %v", res, err)
	}
	res, err = sbx.Exec(ctx, `printf '\377\376\000A'`)
	if err != nil || res.Stdout != "\xff\xfe\x00A" {
		t.Errorf("binary exec: %q %v", res.Stdout, err)
	}
	res, err = sbx.Exec(ctx, "cat", client.WithStdin([]byte{0xff, 0}))
	if err != nil || res.Stdout != "\xff\x00" {
		t.Errorf("binary stdin: %q %v", res.Stdout, err)
	}
	res, err = sbx.ExecArgv(ctx, []string{"echo", "x", "y"})
	if err != nil || res.Stdout != "x y\n" {
		t.Errorf("argv: %+v %v", res, err)
	}
	var so, se bytes.Buffer
	res, err = sbx.ExecStream(ctx, client.ExecRequest{Cmd: "for i in 0 1 2; do echo chunk $i; done; echo done >&2"}, &so, &se)
	if err != nil || res.ExitCode != 0 || so.String() != "chunk 0\nchunk 1\nchunk 2\n" || se.String() != "done\n" {
		t.Errorf("stream: %+v %v %q %q", res, err, so.String(), se.String())
	}
	// A stream cut midway (its sandbox killed under it) is an error,
	// never a clean end.
	victim, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	go func() {
		<-first
		victim.Kill(ctx)
	}()
	_, err = victim.ExecStream(ctx, client.ExecRequest{Cmd: "echo partial; sleep 60"}, &signalWriter{first: first}, nil)
	if !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("midway stream error = %v", err)
	}

	// Files, from memory and from an *os.File.
	fs := sbx.Files()
	if n, err := fs.Write(ctx, "/job/in.pdf", strings.NewReader("%PDF-1.7")); err != nil || n != 8 {
		t.Errorf("write: %d %v", n, err)
	}
	local := filepath.Join(t.TempDir(), "f")
	os.WriteFile(local, []byte("from disk"), 0o600)
	fh, _ := os.Open(local)
	defer fh.Close()
	if n, err := fs.Write(ctx, "/job/disk", fh, client.WithMode(0o600)); err != nil || n != 9 {
		t.Errorf("write file: %d %v", n, err)
	}
	if b, err := fs.ReadAll(ctx, "/job/in.pdf"); err != nil || string(b) != "%PDF-1.7" {
		t.Errorf("read: %q %v", b, err)
	}
	if fi, err := fs.Stat(ctx, "/job/in.pdf"); err != nil || fi.Size != 8 {
		t.Errorf("stat: %+v %v", fi, err)
	}
	if es, err := fs.List(ctx, "/job"); err != nil || len(es) != 2 {
		t.Errorf("list: %+v %v", es, err)
	}
	if err := fs.Mkdir(ctx, "/job/out"); err != nil {
		t.Error(err)
	}
	if err := fs.Remove(ctx, "/job"); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("remove non-empty = %v", err)
	}
	if err := fs.RemoveAll(ctx, "/job"); err != nil {
		t.Error(err)
	}
	if _, err := fs.ReadAll(ctx, "/job/in.pdf"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("read removed = %v", err)
	}
	if _, err := fs.Stat(ctx, "/job/../etc"); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("traversal = %v", err)
	}

	// This daemon has no sandbox networking: allow rules are refused.
	if err := sbx.SetEgress(ctx, client.EgressPolicy{Default: "deny", Allow: []client.EgressRule{
		{Name: "dms", CIDR: "10.250.0.2/32", Protocol: "tcp", Ports: []uint16{8080}}}}); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("set egress without networking: %v %+v", err, sbx.Egress)
	}
	if err := sbx.SetEgress(ctx, client.DenyAll()); err != nil || sbx.Egress.Default != "deny" {
		t.Errorf("set egress: %v %+v", err, sbx.Egress)
	}
	kids, err := sbx.Fork(ctx, 2)
	if err != nil || len(kids) != 2 || kids[0].ParentID != sbx.ID {
		t.Fatalf("fork: %v %+v", err, kids)
	}
	list, err := c.ListSandboxes(ctx, map[string]string{"matter": "m-1"})
	if err != nil || len(list) != 3 {
		t.Errorf("list: %d %v", len(list), err)
	}
	if list, _ := c.ListSandboxes(ctx, map[string]string{"matter": "other"}); len(list) != 0 {
		t.Errorf("list other matter: %d", len(list))
	}
	if ts, err := c.Templates(ctx); err != nil || len(ts) != 1 || ts[0].Name != "base" {
		t.Errorf("templates: %+v %v", ts, err)
	}
	if err := kids[0].Kill(ctx); err != nil {
		t.Error(err)
	}
	if list, _ := c.ListSandboxes(ctx, nil, client.IncludeEnded()); len(list) != 4 { // with the killed victim
		t.Errorf("list all: %d", len(list))
	}
	got, err := c.GetSandbox(ctx, kids[0].ID)
	if err != nil || got.State != "killed" {
		t.Errorf("get killed: %+v %v", got, err)
	}

	// The manager audited the creates: the sandbox and its two children
	// carry the matter; another tenant's record with it is not listed.
	env.Store.AppendAudit(ctx, store.AuditRecord{Tenant: "other", SandboxID: sbx.ID, Event: "create", Outcome: "ok", Metadata: map[string]string{"matter": "m-1"}})
	recs, err := c.Audit(ctx, client.AuditFilter{Metadata: map[string]string{"matter": "m-1"}, Events: []string{"create"}, Since: time.Now().Add(-time.Hour)})
	if err != nil || len(recs) != 3 || recs[0].SandboxID != sbx.ID || recs[0].Hash == "" || recs[1].ParentID != sbx.ID {
		t.Errorf("audit: %+v %v", recs, err)
	}
	for _, r := range recs {
		if r.Tenant != "acme" {
			t.Errorf("audit lists tenant %q's record", r.Tenant)
		}
	}
}

func TestSetTTL(t *testing.T) {
	ctx := context.Background()
	_, c := setup(t, api.Config{})
	sbx, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	if err := sbx.SetTTL(ctx, time.Hour); err != nil || time.Until(sbx.Deadline) < 50*time.Minute {
		t.Fatalf("SetTTL 1h: %v, deadline %v", err, sbx.Deadline)
	}
	if err := sbx.SetTTL(ctx, 0); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("SetTTL 0: %v, want invalid argument", err)
	}
	if err := sbx.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sbx.SetTTL(ctx, time.Hour); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("SetTTL after kill: %v, want failed precondition", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	env, c := setup(t, api.Config{MaxUploadBytes: 1024})
	_, err := c.GetSandbox(ctx, "sbx-0404")
	var ae *client.Error
	if !errors.Is(err, client.ErrNotFound) || !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "not_found" {
		t.Errorf("get missing = %#v", err)
	}
	if _, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: -1}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("negative ttl = %v", err)
	}
	sbx, _ := c.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
	if _, err := sbx.Files().Write(ctx, "/big", bytes.NewReader(make([]byte, 4096))); !errors.Is(err, client.ErrResourceExhausted) {
		t.Errorf("oversized upload = %v", err)
	}
	bad, _ := client.New(env.TCPURL, "alk_wrong")
	if _, err := bad.ListSandboxes(ctx, nil); !errors.Is(err, client.ErrPermissionDenied) {
		t.Errorf("bad key = %v", err)
	}
	other, _ := client.New(env.TCPURL, env.Key(t, "globex"))
	if _, err := other.Sandbox(sbx.ID).Exec(ctx, "echo hi"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("other tenant exec = %v", err)
	}
	down, _ := client.New("unix://"+filepath.Join(t.TempDir(), "none.sock"), "k")
	if err := down.Health(ctx); !errors.Is(err, client.ErrUnavailable) {
		t.Errorf("no daemon = %v", err)
	}
}

// signalWriter closes first on its first Write.
type signalWriter struct {
	first chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.first) })
	return len(p), nil
}
