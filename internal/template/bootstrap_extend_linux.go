package template

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A cached bootstrap (bootstrap-<key>.tar) carries a manifest beside it
// (bootstrap-<key>.json) naming its suite and packages, so a root whose
// packages are a superset of a cached one's (a template `from: base` that
// adds a package) starts from that archive and installs only the rest in a
// chroot, instead of running mmdebstrap over the whole root again.

// bootstrapManifest is what a cached bootstrap holds.
type bootstrapManifest struct {
	Format   string   `json:"format"`
	Suite    string   `json:"suite"`
	Packages []string `json:"packages"` // sorted
}

func manifestPath(archive string) string { return strings.TrimSuffix(archive, ".tar") + ".json" }

func writeManifest(archive, suite string, sorted []string) error {
	b, err := json.Marshal(bootstrapManifest{Format: rootfsFormat, Suite: suite, Packages: sorted})
	if err != nil {
		return err
	}
	tmp := manifestPath(archive) + ".part"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, manifestPath(archive))
}

// nearestBootstrap is the cached bootstrap of suite whose packages are
// the largest subset of sorted, and the packages it lacks; "" when none.
func nearestBootstrap(cacheDir, suite string, sorted []string) (archive string, extra []string) {
	manifests, _ := filepath.Glob(filepath.Join(cacheDir, "rootfs", "bootstrap-*.json"))
	best := -1
	for _, mp := range manifests {
		b, err := os.ReadFile(mp)
		if err != nil {
			continue
		}
		var m bootstrapManifest
		if json.Unmarshal(b, &m) != nil || m.Format != rootfsFormat || m.Suite != suite || len(m.Packages) <= best {
			continue
		}
		a := strings.TrimSuffix(mp, ".json") + ".tar"
		if _, err := os.Stat(a); err != nil {
			continue
		}
		var missing []string
		for _, p := range sorted {
			if !slices.Contains(m.Packages, p) {
				missing = append(missing, p)
			}
		}
		if len(missing)+len(m.Packages) != len(sorted) {
			continue // it holds packages this root does not want
		}
		archive, extra, best = a, missing, len(m.Packages)
	}
	return archive, extra
}

// installInto installs pkgs into the Debian tree at root with apt-get in
// a chroot: /proc, /sys and /dev mounted for the package scripts, the
// host's resolv.conf for apt, and no service started (policy-rc.d). All of
// it is undone before it returns, whatever happened.
func installInto(ctx context.Context, root string, pkgs []string, st *steps) (err error) {
	var undo []func() error
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			err = errors.Join(err, undo[i]())
		}
	}()
	for _, m := range []struct{ src, dst, fstype string }{{"proc", "proc", "proc"}, {"/sys", "sys", ""}, {"/dev", "dev", ""}} {
		dst := filepath.Join(root, m.dst)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		flags := uintptr(0)
		if m.fstype == "" {
			flags = syscall.MS_BIND | syscall.MS_REC
		}
		if err := syscall.Mount(m.src, dst, m.fstype, flags, ""); err != nil {
			return fmt.Errorf("mount %s in the build root: %w", m.dst, err)
		}
		undo = append(undo, func() error { return syscall.Unmount(dst, syscall.MNT_DETACH) })
	}
	for name, body := range map[string]string{"etc/resolv.conf": "", "usr/sbin/policy-rc.d": "#!/bin/sh\nexit 101\n"} {
		p := filepath.Join(root, name)
		if _, err := os.Lstat(p); err == nil {
			continue // the tree's own: leave it
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if body == "" {
			b, err := os.ReadFile("/etc/resolv.conf")
			if err != nil {
				return err
			}
			body = string(b)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			return err
		}
		undo = append(undo, func() error { return os.Remove(p) })
	}
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	for _, args := range [][]string{
		{"apt-get", "-q", "-o", "Acquire::Retries=3", "update"},
		append([]string{"apt-get", "-q", "-y", "--no-install-recommends", "install"}, pkgs...),
		{"apt-get", "clean"},
	} {
		st.detail("%s", strings.Join(args[:min(len(args), 6)], " "))
		cmd := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			tail := strings.TrimSpace(string(out))
			if len(tail) > 2000 {
				tail = tail[len(tail)-2000:]
			}
			return fmt.Errorf("%s in the build root: %w: %s", strings.Join(args, " "), err, tail)
		}
	}
	return nil
}
