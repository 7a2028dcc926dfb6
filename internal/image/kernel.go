package image

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// KernelMetaPackage is the Debian metapackage the guest kernel is resolved
// from at fetch time. The archive keeps only the current build of each
// kernel ABI, so an exact pin would break; the resolved version is
// recorded and is part of every cache key that depends on it.
const KernelMetaPackage = "linux-image-cloud-amd64"

// GuestModules are the kernel modules the guest needs, in load order. The
// cloud kernel builds its virtio drivers as modules.
var GuestModules = []string{
	"kernel/drivers/virtio/virtio_ring.ko",
	"kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/virtio/virtio_mmio.ko",
	"kernel/drivers/char/virtio_console.ko",
	"kernel/drivers/block/virtio_blk.ko",
	"kernel/fs/overlayfs/overlay.ko",
	"kernel/net/core/failover.ko",
	"kernel/drivers/net/net_failover.ko",
	"kernel/drivers/net/virtio_net.ko",
}

// Kernel is a fetched, unpacked guest kernel.
type Kernel struct {
	Package   string `json:"package"`    // e.g. linux-image-6.1.0-57-cloud-amd64
	Version   string `json:"version"`    // Debian version, e.g. 6.1.192-3
	Release   string `json:"release"`    // uname -r, e.g. 6.1.0-57-cloud-amd64
	DebSHA256 string `json:"deb_sha256"` // of the downloaded .deb
	Dir       string `json:"-"`          // cache directory holding it
}

// Vmlinuz is the path of the kernel image.
func (k *Kernel) Vmlinuz() string { return filepath.Join(k.Dir, "vmlinuz") }

// ModulesDir holds the modules listed in GuestModules, flattened.
func (k *Kernel) ModulesDir() string { return filepath.Join(k.Dir, "modules") }

// CacheKey identifies this exact kernel build for dependent caches.
func (k *Kernel) CacheKey() string { return k.Package + "=" + k.Version + "@" + k.DebSHA256 }

// ResolveKernelPackage asks apt which kernel package the metapackage points
// to now, and its version. It reads apt's local lists only.
func ResolveKernelPackage(ctx context.Context) (pkg, version string, err error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "depends", KernelMetaPackage).Output()
	if err != nil {
		return "", "", fmt.Errorf("apt-cache depends %s: %w (is apt's package list present? run apt-get update)", KernelMetaPackage, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if dep, ok := strings.CutPrefix(line, "Depends: "); ok && strings.HasPrefix(dep, "linux-image-") {
			pkg = strings.TrimSpace(dep)
			break
		}
	}
	if pkg == "" {
		return "", "", fmt.Errorf("%s depends on no linux-image package", KernelMetaPackage)
	}
	out, err = exec.CommandContext(ctx, "apt-cache", "show", "--no-all-versions", pkg).Output()
	if err != nil {
		return "", "", fmt.Errorf("apt-cache show %s: %w", pkg, err)
	}
	sc = bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Version: "); ok {
			version = strings.TrimSpace(v)
			break
		}
	}
	if version == "" {
		return "", "", fmt.Errorf("apt-cache show %s: no Version", pkg)
	}
	return pkg, version, nil
}

// FetchKernel returns the current cloud kernel, downloading and unpacking it
// into the cache if it is not there yet. When apt cannot resolve the
// metapackage (no network, no lists), the newest cached kernel is used.
func FetchKernel(ctx context.Context, cacheDir string, progress Progress) (*Kernel, error) {
	root := filepath.Join(cacheDir, "kernel")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("kernel cache: %w", err)
	}
	pkg, version, err := resolveKernelCached(ctx, root)
	if err != nil {
		if k, cerr := NewestCachedKernel(cacheDir); cerr == nil {
			progress.Say("kernel: %v; using cached %s %s", err, k.Package, k.Version)
			return k, nil
		}
		return nil, err
	}
	dir := filepath.Join(root, pkg+"_"+version)
	if k, err := loadKernel(dir); err == nil {
		return k, nil
	}
	progress.Say("kernel: downloading %s %s", pkg, version)
	tmp, err := os.MkdirTemp(root, ".fetch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// apt's download sandbox user cannot write into root-owned temp dirs.
	cmd := exec.CommandContext(ctx, "apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", pkg+"="+version)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apt-get download %s=%s: %w: %s", pkg, version, err, bytes.TrimSpace(out))
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("apt-get download %s: expected one .deb, found %d", pkg, len(debs))
	}
	sum, err := FileSHA256(debs[0])
	if err != nil {
		return nil, err
	}
	x := filepath.Join(tmp, "x")
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", debs[0], x).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dpkg-deb -x: %w: %s", err, bytes.TrimSpace(out))
	}
	k := &Kernel{Package: pkg, Version: version, Release: strings.TrimPrefix(pkg, "linux-image-"), DebSHA256: sum}
	stage := filepath.Join(tmp, "stage")
	if err := os.MkdirAll(filepath.Join(stage, "modules"), 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(x, "boot", "vmlinuz-"+k.Release), filepath.Join(stage, "vmlinuz")); err != nil {
		return nil, fmt.Errorf("kernel package %s has no vmlinuz-%s: %w", pkg, k.Release, err)
	}
	for _, m := range GuestModules {
		src := filepath.Join(x, "lib", "modules", k.Release, m)
		if err := os.Rename(src, filepath.Join(stage, "modules", filepath.Base(m))); err != nil {
			return nil, fmt.Errorf("kernel package %s lacks module %s: %w", pkg, m, err)
		}
	}
	meta, _ := json.MarshalIndent(k, "", "  ")
	if err := os.WriteFile(filepath.Join(stage, "kernel.json"), meta, 0o644); err != nil {
		return nil, err
	}
	if err := publish(stage, dir); err != nil {
		return nil, err
	}
	progress.Say("kernel: cached %s (%s)", k.Release, version)
	return loadKernel(dir)
}

func loadKernel(dir string) (*Kernel, error) {
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	var k Kernel
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	k.Dir = dir
	if !exists(k.Vmlinuz()) {
		return nil, fmt.Errorf("%s: vmlinuz missing", dir)
	}
	return &k, nil
}

// NewestCachedKernel returns the most recently fetched kernel in the cache.
func NewestCachedKernel(cacheDir string) (*Kernel, error) {
	dirs, _ := filepath.Glob(filepath.Join(cacheDir, "kernel", "linux-image-*"))
	type cand struct {
		k   *Kernel
		mod int64
	}
	var cands []cand
	for _, d := range dirs {
		if k, err := loadKernel(d); err == nil {
			fi, _ := os.Stat(filepath.Join(d, "kernel.json"))
			cands = append(cands, cand{k, fi.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no kernel cached under %s", filepath.Join(cacheDir, "kernel"))
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	return cands[0].k, nil
}
