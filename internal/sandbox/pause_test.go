package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// A pause saves the guest to disk and ends its machine; the paused
// sandbox keeps its id and answers get and list but no call into it,
// holds no capacity, and resumes with what it had written. Both are
// audited; a second pause or a resume of a running one is refused.
func TestLifecyclePauseResume(t *testing.T) {
	e := newLCEnv(t)
	ctx := context.Background()
	pauseDir := t.TempDir()
	m := e.manager(t, sandbox.Config{MaxSandboxes: 1, PauseDir: pauseDir})
	sb := lcCreate(t, m, sandbox.CreateRequest{Metadata: map[string]string{"matter": "m-1"}})
	lcSh(t, m, sb.ID, "echo kept > state")
	if _, err := m.Resume(ctx, lcTenant, sb.ID); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("resume of a running sandbox = %v, want failed_precondition", err)
	}

	info, err := m.Pause(ctx, lcTenant, sb.ID)
	if err != nil || info.State != sandbox.StatePaused {
		t.Fatalf("pause = %+v, %v", info, err)
	}
	if _, err := os.Stat(filepath.Join(e.layer.RunDir(), sb.ID)); !os.IsNotExist(err) {
		t.Errorf("the paused sandbox's machine directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pauseDir, sb.ID)); err != nil {
		t.Errorf("no saved state: %v", err)
	}
	if got, err := m.Get(ctx, lcTenant, sb.ID); err != nil || got.State != sandbox.StatePaused || !got.Deadline.Equal(sb.Deadline) {
		t.Errorf("get while paused = %+v, %v (deadline unchanged, state paused)", got, err)
	}
	if list, _ := m.List(ctx, sandbox.ListFilter{Tenant: lcTenant}); len(list) != 1 || list[0].State != sandbox.StatePaused {
		t.Errorf("list while paused = %+v", list)
	}
	_, err = m.Exec(ctx, lcTenant, sb.ID, guest.ExecOptions{Shell: "true"}, nil, nil)
	if !errdefs.IsFailedPrecondition(err) {
		t.Errorf("exec while paused = %v, want failed_precondition", err)
	}
	if _, err := m.Fork(ctx, lcTenant, sb.ID, 1); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("fork while paused = %v, want failed_precondition", err)
	}
	if _, err := m.Pause(ctx, lcTenant, sb.ID); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("second pause = %v, want failed_precondition", err)
	}
	// MaxSandboxes is 1: the paused one holds no capacity, so another
	// runs, and the resume must wait until there is room again.
	other := lcCreate(t, m, sandbox.CreateRequest{})
	if _, err := m.Resume(ctx, lcTenant, sb.ID); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Errorf("resume at capacity = %v, want resource_exhausted", err)
	}
	if err := m.Kill(ctx, lcTenant, other.ID); err != nil {
		t.Fatal(err)
	}

	info, err = m.Resume(ctx, lcTenant, sb.ID)
	if err != nil || info.State != store.StateRunning || info.ID != sb.ID {
		t.Fatalf("resume = %+v, %v", info, err)
	}
	if got := lcSh(t, m, sb.ID, "cat state"); got != "kept\n" {
		t.Errorf("after resume the guest has %q", got)
	}
	if _, err := os.Stat(filepath.Join(pauseDir, sb.ID)); !os.IsNotExist(err) {
		t.Errorf("saved state left after resume: %v", err)
	}
	p := e.auditSoon(t, sb.ID, store.EventPause, 2)
	r := e.auditSoon(t, sb.ID, store.EventResume, 3)
	if len(p) != 2 || p[0].Outcome != "ok" || p[0].Bytes == 0 || p[0].Metadata["matter"] != "m-1" || p[1].Outcome != "failed_precondition" {
		t.Errorf("pause records: %+v", p)
	}
	if len(r) != 3 || r[0].Outcome != "failed_precondition" || r[1].Outcome != "resource_exhausted" ||
		r[2].Outcome != "ok" || r[2].Detail["paused_ms"] == "" {
		t.Errorf("resume records: %+v", r)
	}
}

// A paused sandbox's TTL keeps counting: the reaper expires it and
// removes its saved state; a kill removes it too.
func TestLifecyclePausedEnds(t *testing.T) {
	e := newLCEnv(t)
	ctx := context.Background()
	pauseDir := t.TempDir()
	m := e.manager(t, sandbox.Config{ReapInterval: 20 * time.Millisecond, PauseDir: pauseDir})
	short := lcCreate(t, m, sandbox.CreateRequest{TTL: 2 * time.Second})
	killed := lcCreate(t, m, sandbox.CreateRequest{})
	for _, id := range []string{short.ID, killed.ID} {
		if _, err := m.Pause(ctx, lcTenant, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Kill(ctx, lcTenant, killed.ID); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, short.ID, store.StateExpired)
	for _, id := range []string{short.ID, killed.ID} {
		if _, err := os.Stat(filepath.Join(pauseDir, id)); !os.IsNotExist(err) {
			t.Errorf("%s: saved state left after its end: %v", id, err)
		}
	}
	if _, err := m.Resume(ctx, lcTenant, killed.ID); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("resume of a killed sandbox = %v, want failed_precondition", err)
	}
	if _, err := m.Pause(ctx, lcTenant, "sbx-nope"); !errdefs.IsNotFound(err) {
		t.Errorf("pause of a missing sandbox = %v, want not_found", err)
	}
}

// A restarted daemon keeps a paused sandbox paused and can resume it;
// saved states no sandbox owns are removed.
func TestLifecyclePausedSurvivesRestart(t *testing.T) {
	e := newLCEnv(t)
	ctx := context.Background()
	pauseDir := t.TempDir()
	first, err := sandbox.New(ctx, sandbox.Config{Machines: e.layer, TemplateSource: e.layer, Store: e.st,
		WarmPool: -1, ReapInterval: time.Hour, PauseDir: pauseDir})
	if err != nil {
		t.Fatal(err)
	}
	sb := lcCreate(t, first, sandbox.CreateRequest{})
	lcSh(t, first, sb.ID, "echo kept > state")
	if _, err := first.Pause(ctx, lcTenant, sb.ID); err != nil {
		t.Fatal(err)
	}
	first.Close()
	stray := filepath.Join(pauseDir, "sbx-stray")
	if err := os.MkdirAll(stray, 0o700); err != nil {
		t.Fatal(err)
	}

	m := e.manager(t, sandbox.Config{PauseDir: pauseDir})
	if got, err := m.Get(ctx, lcTenant, sb.ID); err != nil || got.State != sandbox.StatePaused {
		t.Fatalf("after restart = %+v, %v", got, err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("stray saved state kept: %v", err)
	}
	if _, err := m.Resume(ctx, lcTenant, sb.ID); err != nil {
		t.Fatal(err)
	}
	if got := lcSh(t, m, sb.ID, "cat state"); got != "kept\n" {
		t.Errorf("resumed after restart: %q", got)
	}
}

// Without a pause directory a pause is refused before anything happens.
func TestLifecyclePauseNeedsDir(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	sb := lcCreate(t, m, sandbox.CreateRequest{})
	if _, err := m.Pause(context.Background(), lcTenant, sb.ID); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("pause without a pause dir = %v, want failed_precondition", err)
	}
	lcSh(t, m, sb.ID, "true")
}
