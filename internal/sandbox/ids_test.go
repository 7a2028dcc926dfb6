package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// A caller-chosen id (a cluster's API tier) names the sandbox everywhere
// a caller looks, while its machine keeps its own name on the host; a
// warm-pool clone serves it, forks take chosen ids too, a repeated or
// malformed id is refused, and a restarted manager adopts by the machine
// and reaps by it.
func TestLifecycleCallerChosenIDs(t *testing.T) {
	e := newLCEnv(t)
	ctx := context.Background()
	first, err := sandbox.New(ctx, sandbox.Config{Machines: e.layer, TemplateSource: e.layer, Store: e.st,
		WarmPool: 1, ReapInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	id := sandbox.NewSandboxID()
	info := lcCreate(t, first, sandbox.CreateRequest{ID: id})
	if info.ID != id {
		t.Fatalf("created %s, asked for %s", info.ID, id)
	}
	lcSh(t, first, id, "echo kept > state")
	if _, err := first.Create(ctx, sandbox.CreateRequest{Tenant: lcTenant, Template: "base", ID: id}); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("second create with %s: %v, want already_exists", id, err)
	}
	if _, err := first.Create(ctx, sandbox.CreateRequest{Tenant: lcTenant, Template: "base", ID: "sbx-NOT-ours"}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("malformed id: %v, want invalid_argument", err)
	}
	sb, err := e.st.GetSandbox(ctx, lcTenant, id)
	if err != nil {
		t.Fatal(err)
	}
	machine := filepath.Base(sb.StateDir)
	if machine == id {
		t.Fatalf("the machine is named %s too: the test needs a decoupled id", machine)
	}
	kids := []string{sandbox.NewSandboxID(), sandbox.NewSandboxID()}
	children, err := first.ForkWithIDs(ctx, lcTenant, id, kids)
	if err != nil || len(children) != 2 || children[0].ID != kids[0] || children[1].ID != kids[1] {
		t.Fatalf("fork with ids: %+v, %v", children, err)
	}
	if _, err := first.ForkWithIDs(ctx, lcTenant, id, []string{kids[0]}); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Errorf("fork reusing %s: %v, want already_exists", kids[0], err)
	}
	ended := lcCreate(t, first, sandbox.CreateRequest{ID: sandbox.NewSandboxID()})
	endedSB, _ := e.st.GetSandbox(ctx, lcTenant, ended.ID)
	first.Close() // the daemon goes; its sandboxes keep running
	if err := e.layer.KillVMM(endedSB.StateDir); err != nil {
		t.Fatal(err)
	}

	m := e.manager(t, sandbox.Config{})
	if got := lcSh(t, m, id, "cat state"); got != "kept\n" {
		t.Errorf("adopted sandbox sees %q", got)
	}
	if got := lcSh(t, m, kids[1], "cat state"); got != "kept\n" {
		t.Errorf("adopted fork child sees %q", got)
	}
	waitState(t, m, ended.ID, store.StateFailed)
	if _, err := os.Stat(sb.StateDir); err != nil {
		t.Errorf("the adopted sandbox's machine %s was reaped: %v", machine, err)
	}
	if _, err := os.Stat(endedSB.StateDir); !os.IsNotExist(err) {
		t.Errorf("the dead sandbox's machine is left: %v", err)
	}
	if err := m.Kill(ctx, lcTenant, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sb.StateDir); !os.IsNotExist(err) {
		t.Errorf("killed sandbox's machine is left: %v", err)
	}
}
