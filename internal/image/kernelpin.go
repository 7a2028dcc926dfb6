package image

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Resolving the kernel package runs apt-cache twice, ~1 s of CPU on a
// small host: most of what a one-shot `airlock run` spent before its VM
// started. The answer only changes when apt's package lists do, so it is
// remembered with a stamp of the lists directory (inode, mtime and ctime:
// `apt-get update` renames new lists into it, which moves both times) and
// asked again whenever the stamp differs.

// aptListsDir is where apt keeps its package lists; a variable for tests.
var aptListsDir = "/var/lib/apt/lists"

// resolveKernelPackage is ResolveKernelPackage; a variable for tests.
var resolveKernelPackage = ResolveKernelPackage

// kernelResolution is the remembered answer (root/resolved.json).
type kernelResolution struct {
	ListsStamp string `json:"lists_stamp"`
	Package    string `json:"package"`
	Version    string `json:"version"`
}

// listsStamp identifies the current state of apt's lists directory.
func listsStamp() (string, error) {
	fi, err := os.Stat(aptListsDir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no inode data", aptListsDir)
	}
	return fmt.Sprintf("%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), nil
}

// resolveKernelCached answers ResolveKernelPackage from root/resolved.json
// while apt's lists are unchanged, and asks apt (and remembers) otherwise.
// A stamp that cannot be read means asking apt every time.
func resolveKernelCached(ctx context.Context, root string) (pkg, version string, err error) {
	path := filepath.Join(root, "resolved.json")
	stamp, stampErr := listsStamp()
	if stampErr == nil {
		if b, err := os.ReadFile(path); err == nil {
			var r kernelResolution
			if json.Unmarshal(b, &r) == nil && r.ListsStamp == stamp && r.Package != "" && r.Version != "" {
				return r.Package, r.Version, nil
			}
		}
	}
	if pkg, version, err = resolveKernelPackage(ctx); err != nil {
		return "", "", err
	}
	if stampErr == nil {
		b, _ := json.Marshal(kernelResolution{ListsStamp: stamp, Package: pkg, Version: version})
		_ = WriteFileAtomic(path, b, 0o600) // only a cache: a failed write asks apt next time
	}
	return pkg, version, nil
}

// WriteFileAtomic writes b to path with perm through a temporary file in
// the same directory and a rename, so a reader sees the old content or
// the new, never a torn one.
func WriteFileAtomic(path string, b []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
