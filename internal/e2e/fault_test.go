package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// TestFaultInjection kills the daemon (SIGKILL, from a failpoint) in the
// middle of each step of create, exec, upload, fork and kill, and starts
// the next one over the same state. Then the sandbox involved is either
// running, with its VM and files, or ended with its VM gone; a partial
// upload is not visible; every running sandbox answers; a new sandbox
// works; the audit chain verifies; and once everything is killed and the
// daemon stopped, no QEMU, run directory entry or jail cgroup is left
// (the harness's checks).
func TestFaultInjection(t *testing.T) {
	e := getEnv(t).withOwnState(t)
	for _, fp := range sandbox.Failpoints {
		t.Run(fp, func(t *testing.T) {
			d := startDaemonEnv(t, e, []string{"AIRLOCK_FAILPOINT=" + fp})
			c := d.client(t, tenantA)
			tag := uniq("fault")
			var victim *client.Sandbox
			switch fp {
			case sandbox.FailCreateRestored, sandbox.FailCreateRegistered:
				if _, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 300,
					Metadata: map[string]string{"fault": tag}}); err == nil {
					t.Fatal("create succeeded although the daemon was to die during it")
				}
			default:
				victim = createSandbox(t, c, 300, map[string]string{"fault": tag})
				mustExec(t, victim, "echo kept > /job/kept.txt")
				var err error
				switch fp {
				case sandbox.FailExecRunning:
					_, err = victim.Exec(ctx(t), "sleep 10")
				case sandbox.FailUploadMidway:
					_, err = victim.Files().Write(ctx(t), "/job/partial.bin", bytes.NewReader(make([]byte, 4<<20)))
				case sandbox.FailForkSnapshotted, sandbox.FailForkChildren:
					_, err = victim.Fork(ctx(t), 2)
				case sandbox.FailKillDestroyed:
					err = victim.Kill(ctx(t))
				}
				if err == nil {
					t.Fatalf("%s succeeded although the daemon was to die during it", fp)
				}
			}
			select {
			case <-d.exited:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the daemon did not die at %s", fp)
			}
			d.extEnv = nil
			d.start(t)

			if victim != nil {
				got, err := c.GetSandbox(ctx(t), victim.ID)
				switch {
				case err != nil:
					t.Fatalf("get %s after restart: %v", victim.ID, err)
				case got.State == "running":
					if out := mustExec(t, victim, "cat /job/kept.txt; test -e /job/partial.bin && echo PARTIAL || true"); out != "kept\n" {
						t.Errorf("sandbox %s after restart: %q, want its file and no partial upload", victim.ID, out)
					}
				default:
					d.vmGone(t, victim.ID)
				}
				if fp == sandbox.FailKillDestroyed && got.State == "running" {
					t.Errorf("a sandbox whose VM was destroyed is running after restart")
				}
			}
			running, err := c.ListSandboxes(ctx(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range running {
				if s.ParentID != "" || s.Metadata["fault"] == tag {
					mustExec(t, s, "true")
				}
			}
			fresh := createSandbox(t, c, 300, nil)
			if out := mustExec(t, fresh, "echo ok"); out != "ok\n" {
				t.Errorf("a sandbox created after the restart: %q", out)
			}
			if out, stderr, code := e.cli(t, "audit", "verify", "--state-dir", e.stateDir); code != 0 {
				t.Errorf("audit verify after a crash at %s: %s %s", fp, out, stderr)
			}
			running, _ = c.ListSandboxes(ctx(t), nil)
			for _, s := range running {
				if err := s.Kill(ctx(t)); err != nil && !strings.Contains(err.Error(), "not found") {
					t.Errorf("kill %s: %v", s.ID, err)
				}
			}
		})
	}
}
