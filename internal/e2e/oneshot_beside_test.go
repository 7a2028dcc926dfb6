package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOneShotCommandsBesideTheDaemon: `airlock template build` (a cache
// hit) and `airlock run` on the daemon's own state and run directories
// share its jail cgroup parent. Their exit used to remove that parent
// when the daemon had no VM in it (the README's order: start the daemon,
// then build templates), and every later create failed until the daemon
// restarted.
func TestOneShotCommandsBesideTheDaemon(t *testing.T) {
	e := getEnv(t).withOwnState(t)
	d := startDaemon(t, e, "--warm-pool", "0")
	c := d.client(t, tenantA)
	spec := filepath.Join(e.root, "internal/vmtest/testdata/test-tiny.yaml")
	dirs := []string{"--state-dir", e.stateDir, "--run-dir", d.runDir}
	for _, args := range [][]string{
		append(append([]string{"template", "build"}, dirs...), spec),
		append(append([]string{"run"}, dirs...), "--template", templateName, "--", "true"),
	} {
		if _, stderr, code := e.cli(t, args...); code != 0 {
			t.Fatalf("airlock %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		sbx := createSandbox(t, c, 60, nil)
		if out := mustExec(t, sbx, "echo alive"); out != "alive\n" {
			t.Fatalf("after `airlock %s`: exec printed %q", args[0], out)
		}
	}
}
