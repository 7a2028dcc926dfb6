package sandbox_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// awaitState polls until the sandbox reaches state (or a generous bound
// for a loaded machine passes) and returns how long it took.
func awaitState(t *testing.T, m *sandbox.Manager, tenant, id, state string) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		info, err := m.Get(vmtest.Context(t), tenant, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if info.State == state {
			return time.Since(began)
		}
		if time.Since(began) > time.Minute {
			t.Fatalf("sandbox %s still %s a minute later; want %s", id, info.State, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeadVMIsNoticed: a VM that dies, from inside (the guest kills its
// PID 1, so its kernel panics and QEMU exits) or from outside (kill -9 of
// its QEMU), ends its sandbox as failed at once: the failure is audited,
// its quota is released, and a bystander sandbox carries on.
func TestDeadVMIsNoticed(t *testing.T) {
	m, st := newManager(t, sandbox.Config{MaxSandboxes: 2})
	bystander := create(t, m, "acme", nil)
	for _, tc := range []struct {
		name string
		kill func(t *testing.T, id string)
	}{
		{"guest kills its PID 1", func(t *testing.T, id string) {
			// The call itself dies with the VM; only what follows matters.
			m.Exec(vmtest.Context(t), "acme", id, guest.ExecOptions{Shell: "kill -TERM 1; sleep 60", Timeout: time.Minute}, nil, nil)
		}},
		{"kill -9 of its QEMU", func(t *testing.T, id string) {
			sb, err := st.GetSandbox(vmtest.Context(t), "acme", id)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(sb.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("kill QEMU %d: %v", sb.PID, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The host runs its maximum of 2: the victim's end must give
			// its place back.
			victim := create(t, m, "acme", map[string]string{"case": tc.name})
			sh(t, m, "acme", victim.ID, "true")
			killed := time.Now()
			tc.kill(t, victim.ID)
			took := awaitState(t, m, "acme", victim.ID, store.StateFailed)
			t.Logf("ended as failed %s after the kill (%s after the kill call returned)",
				time.Since(killed).Round(time.Millisecond), took.Round(time.Millisecond))
			recs, err := st.QueryAudit(vmtest.Context(t), store.AuditFilter{Tenant: "acme", SandboxID: victim.ID, Events: []string{"fail"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Detail["reason"] != "vm_exited" {
				t.Errorf("fail records for %s: %+v; want one with reason vm_exited", victim.ID, recs)
			}
			if got := sh(t, m, "acme", bystander.ID, "echo alive"); got != "alive\n" {
				t.Errorf("bystander after the victim died: %q", got)
			}
			next := create(t, m, "acme", nil) // would be resource_exhausted if the quota were still held
			if err := m.Kill(vmtest.Context(t), "acme", next.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}
