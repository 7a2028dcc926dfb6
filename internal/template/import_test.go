package template_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/template"
)

// TestImport: an import is invisible until Commit, which writes the
// manifest last with the root image rewritten to the bake's own copy; a
// temporary directory left by an interrupted import is removed by the
// next one.
func TestImport(t *testing.T) {
	reg, err := template.NewRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := template.Manifest{Name: "pulled", Key: "0123456789abcdef01234567", RootImage: "/var/cache/builder/rootfs/x.img"}
	im, err := reg.BeginImport(m.Name, m.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(im.MemPath(), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The process dies here; the next attempt starts clean.
	im, err = reg.BeginImport(m.Name, m.Key)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(im.Dir()); len(entries) != 0 {
		t.Fatalf("a new import found %d files of the interrupted one", len(entries))
	}
	for _, p := range []string{im.MemPath(), im.StatePath(), im.RootPath()} {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if reg.Has(m.Name, m.Key) {
		t.Fatal("held before Commit")
	}
	if _, err := reg.Get(m.Name); err == nil {
		t.Fatal("visible before Commit")
	}
	other := m
	other.Key = "ffffffffffffffffffffffff"
	if err := im.Commit(other); err == nil {
		t.Fatal("committed under another key")
	}
	if err := im.Commit(m); err != nil {
		t.Fatal(err)
	}
	got, err := reg.Get(m.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != m.Key || got.RootImage != filepath.Join(got.Dir, template.ImportRoot) || !reg.Has(m.Name, m.Key) || reg.Current(m.Name) != m.Key {
		t.Fatalf("imported %+v", got.Manifest)
	}
	if _, err := os.Stat(im.Dir()); !os.IsNotExist(err) {
		t.Fatalf("the temporary directory is still there: %v", err)
	}
	for _, p := range []string{got.MemPath(), got.StatePath(), got.RootImage} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o222 != 0 {
			t.Fatalf("%s: %v %v", p, st.Mode(), err)
		}
	}
}

// TestHostClass: every host part and only those decide the class.
func TestHostClass(t *testing.T) {
	hp := template.HostParts{Kernel: "k", Initramfs: "i", QEMUVersion: "7.2", Accel: "kvm"}
	base := template.HostClass(hp)
	withMax := hp
	withMax.CPU = "max"
	if template.HostClass(withMax) != base {
		t.Error("an unrecorded CPU model is max")
	}
	for _, change := range []func(*template.HostParts){
		func(h *template.HostParts) { h.Kernel = "k2" },
		func(h *template.HostParts) { h.Initramfs = "i2" },
		func(h *template.HostParts) { h.QEMUVersion = "8.0" },
		func(h *template.HostParts) { h.Accel = "tcg" },
		func(h *template.HostParts) { h.CPU = "host" },
	} {
		h := hp
		change(&h)
		if template.HostClass(h) == base {
			t.Errorf("%+v has the class of %+v", h, hp)
		}
	}
}
