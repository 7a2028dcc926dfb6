package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// minimalRootfsFormat changes whenever the minimal root layout changes.
const minimalRootfsFormat = "v1"

// BusyboxPath is where Debian's busybox-static package puts its binary.
const BusyboxPath = "/bin/busybox"

// BuildMinimalRootfs returns a small read-only ext4 root image holding a
// static busybox and its applets: enough for `airlock run` and the
// platform's own tests without a Debian bootstrap. Template images (full
// Debian roots) are built by the template package.
func BuildMinimalRootfs(ctx context.Context, cacheDir string) (string, error) {
	sum, err := FileSHA256(BusyboxPath)
	if err != nil {
		return "", fmt.Errorf("busybox-static is required for the minimal root (apt-get install busybox-static): %w", err)
	}
	dir := filepath.Join(cacheDir, "rootfs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(dir, "minimal-"+KeyOf(minimalRootfsFormat, sum)+".ext4")
	if exists(final) {
		return final, nil
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "dev", "proc", "sys", "tmp", "run", "root", "job", "var/tmp", "mnt"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	os.Chmod(filepath.Join(root, "tmp"), 0o1777)
	bb, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), bb, 0o755); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, BusyboxPath, "--list-full").Output()
	if err != nil {
		return "", fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		link := filepath.Join(root, applet)
		if applet == "bin/busybox" || exists(link) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return "", err
		}
		if err := os.Symlink("/bin/busybox", link); err != nil {
			return "", err
		}
	}
	files := map[string]string{
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":    "root:x:0:\nnogroup:x:65534:\n",
		"etc/hostname": "airlock\n",
		"etc/hosts":    "127.0.0.1 localhost\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	img := filepath.Join(tmp, "root.ext4")
	if err := MakeExt4(ctx, root, img, 64<<20); err != nil {
		return "", err
	}
	return final, publish(img, final)
}

// MakeExt4 packs dir into a new ext4 image of the given size with
// mkfs.ext4 -d (no loop mount, no root needed for the packing itself).
func MakeExt4(ctx context.Context, dir, img string, size int64) error {
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	f.Close()
	cmd := exec.CommandContext(ctx, "mkfs.ext4", "-q", "-F", "-L", "airlock-root",
		"-E", "root_owner=0:0", "-O", "^has_journal", "-m", "0", "-d", dir, img)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4 -d %s: %w: %s", dir, err, bytes.TrimSpace(out))
	}
	return nil
}
