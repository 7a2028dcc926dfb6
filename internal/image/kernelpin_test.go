package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The kernel package is resolved through apt once per state of apt's
// lists: unchanged lists answer from the remembered resolution, a list
// update (a rename into the directory) asks apt again, and a failure is
// never remembered.
func TestResolveKernelCachedFollowsAptLists(t *testing.T) {
	lists, root := t.TempDir(), t.TempDir()
	oldDir, oldResolve := aptListsDir, resolveKernelPackage
	t.Cleanup(func() { aptListsDir, resolveKernelPackage = oldDir, oldResolve })
	aptListsDir = lists
	asked, answer := 0, "6.1.1-1"
	var fail error
	resolveKernelPackage = func(context.Context) (string, string, error) {
		asked++
		return "linux-image-x", answer, fail
	}
	resolve := func() string {
		t.Helper()
		_, v, err := resolveKernelCached(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := resolve(); v != "6.1.1-1" || asked != 1 {
		t.Fatalf("first: %s after %d apt calls", v, asked)
	}
	if v := resolve(); v != "6.1.1-1" || asked != 1 {
		t.Fatalf("unchanged lists: %s after %d apt calls, want the remembered answer", v, asked)
	}
	// apt-get update: a new list renamed into the directory. Timestamps
	// may be coarse, so make sure the directory's mtime really moves.
	answer = "6.1.2-1"
	tmp := filepath.Join(lists, "partial")
	if err := os.WriteFile(tmp, []byte("Package: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(lists, "deb.debian.org_Packages")); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(lists, future, future); err != nil {
		t.Fatal(err)
	}
	if v := resolve(); v != "6.1.2-1" || asked != 2 {
		t.Fatalf("after a list update: %s after %d apt calls, want apt asked again", v, asked)
	}
	fail = errors.New("apt broke")
	if err := os.Chtimes(lists, future.Add(time.Hour), future.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := resolveKernelCached(context.Background(), root); err == nil {
		t.Fatal("apt's failure was hidden by the remembered answer of older lists")
	}
	fail = nil
	if v := resolve(); v != "6.1.2-1" || asked != 4 {
		t.Fatalf("after a failure: %s after %d apt calls, want apt asked again", v, asked)
	}
}
