package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// TestBakeFailureLeavesNothing: a failing build step is a clear error that
// names the step, and no half-built template remains.
func TestBakeFailureLeavesNothing(t *testing.T) {
	vmtest.Registry(t) // bakes test-tiny: its root image is then cached
	h := vmtest.Host(t)
	dir := t.TempDir()
	// Same image as test-tiny (suite and packages), different build steps.
	spec := `name: broken
suite: bookworm
packages: []
build:
  - echo "step one ran"
  - echo "about to fail" >&2; exit 3
`
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := template.LoadResolved(dir, "broken")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := template.NewRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg.Bake(vmtest.Context(t), h, s, nil)
	if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "build[1] exited 3") || !strings.Contains(err.Error(), "about to fail") {
		t.Fatalf("bake error = %v; want FailedPrecondition naming build[1], its exit code and its output", err)
	}
	if _, err := reg.Get("broken"); !errdefs.IsNotFound(err) {
		t.Fatalf("a failed bake left a template: %v", err)
	}
	var left []string
	filepath.Walk(reg.Root(), func(p string, fi os.FileInfo, err error) error {
		if p != reg.Root() && fi != nil && !fi.IsDir() || strings.Contains(p, ".bake-") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("a failed bake left files: %v", left)
	}
	if entries, _ := os.ReadDir(h.RunDir); len(entries) > 0 {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "vm-") {
				t.Errorf("bake VM state left in the run dir: %s", e.Name())
			}
		}
	}
}

// TestOpenRefusesChangedFiles: once verified, a template whose files change
// identity (inode, size, mtime, ctime) is refused with a clear error and
// verified again from scratch at the next use: a touched file passes
// again, a modified one never does, and a writable one is refused.
func TestOpenRefusesChangedFiles(t *testing.T) {
	vmtest.Registry(t) // caches test-tiny's root image
	h := vmtest.Host(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trusted.yaml"), []byte("name: trusted\nsuite: bookworm\npackages: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := template.LoadResolved(dir, "trusted")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := template.NewRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := reg.Bake(vmtest.Context(t), h, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Open(h, "trusted"); err != nil {
		t.Fatalf("first open: %v", err)
	}
	// A later process (a new registry, a host without the sealed copy)
	// trusts the stamp the full verification wrote, while no file changed.
	later, err := template.NewRegistry(reg.Root())
	if err != nil {
		t.Fatal(err)
	}
	if !later.Stamped(tmpl) {
		t.Fatal("no stamp trusted after a full verification")
	}
	h.DropBase(tmpl.MemPath())
	if _, err := later.Open(h, "trusted"); err != nil {
		t.Fatalf("open through the stamp: %v", err)
	}
	stampPath := filepath.Join(tmpl.Dir, "verified.json")
	os.Chmod(stampPath, 0o620)
	if later.Stamped(tmpl) {
		t.Error("a group-writable stamp was trusted")
	}
	os.Chmod(stampPath, 0o400)
	state := tmpl.StatePath()
	now := time.Now()
	if err := os.Chtimes(state, now, now); err != nil {
		t.Fatal(err)
	}
	if later.Stamped(tmpl) {
		t.Error("the stamp was trusted after state's mtime and ctime moved")
	}
	if _, err := reg.Open(h, "trusted"); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "changed since it was verified") {
		t.Fatalf("open after touching state: %v, want failed_precondition naming the change", err)
	}
	if _, err := reg.Open(h, "trusted"); err != nil {
		t.Fatalf("open after re-verifying a touched (unchanged) file: %v", err)
	}
	if !later.Stamped(tmpl) {
		t.Error("the re-verification wrote no new stamp")
	}
	b, _ := os.ReadFile(state)
	b[len(b)/2] ^= 0xff
	os.Chmod(state, 0o644)
	if err := os.WriteFile(state, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Open(h, "trusted"); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("open after modifying state: %v, want failed_precondition", err)
	}
	if later.Stamped(tmpl) {
		t.Error("the stamp was trusted after state was rewritten")
	}
	if _, err := reg.Open(h, "trusted"); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("open of a writable state file: %v, want failed_precondition naming it writable", err)
	}
	os.Chmod(state, 0o444)
	if _, err := reg.Open(h, "trusted"); !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("open of a modified state file: %v, want failed_precondition naming the checksum", err)
	}
}
