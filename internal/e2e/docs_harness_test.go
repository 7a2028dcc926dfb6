package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Document templates are baked into the env's state directory on first
// use, once per test process: they share one root image (cached by
// content), so after the first only the bake itself is paid.
var docTemplates sync.Map // name -> *docTemplate

type docTemplate struct {
	once sync.Once
	err  error
	out  string
}

// docsTemplate bakes the shipped template name (templates/NAME.yaml).
func docsTemplate(t *testing.T, e *env, name string) {
	t.Helper()
	v, _ := docTemplates.LoadOrStore(name, &docTemplate{})
	dt := v.(*docTemplate)
	dt.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
		defer cancel()
		runDir, err := os.MkdirTemp("/run", "alk-e2e-bake-") // short: unix socket paths
		if err != nil {
			dt.err = err
			return
		}
		defer os.RemoveAll(runDir)
		cmd := exec.CommandContext(ctx, e.bin, "template", "build", "--state-dir", e.stateDir, "--run-dir", runDir,
			filepath.Join(e.root, "templates", name+".yaml"))
		out, err := cmd.CombinedOutput()
		dt.err, dt.out = err, string(out)
	})
	if dt.err != nil {
		t.Fatalf("airlock template build %s: %v\n%s", name, dt.err, dt.out)
	}
}
