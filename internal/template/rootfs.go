//go:build linux

package template

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/image"
)

// rootfsFormat changes whenever the way a template root is built changes
// (default packages, trimming, layout), so old cache entries are not reused.
const rootfsFormat = "template-rootfs-v1"

// DefaultPackages are installed into every template on top of minbase:
// procps gives ps, which the platform's tests use. Keep this minimal.
var DefaultPackages = []string{"procps"}

const (
	mib = 1 << 20
	// Computed image size: content * 1.2 + 64 MiB, so build commands and
	// ext4's own metadata fit without the author sizing anything.
	headroomBytes = 64 * mib
	// mmdebstrap can wait this long for apt/dpkg to stop after a
	// cancellation before it is killed outright.
	bootstrapStopGrace = 30 * time.Second
	// mmdebstrap's own hook that sets up merged /usr without usrmerge.
	mergedUsrHooks = "/usr/share/mmdebstrap/hooks/merged-usr"
	// Lines of mmdebstrap output kept for the error message.
	bootstrapTailLines = 40
)

// rootfsSteps are BuildRootfs's steps, in order.
var rootfsSteps = []string{"check packages", "bootstrap", "copy files", "trim", "pack ext4", "publish"}

// imageRootfsSteps are BuildRootfs's steps for a root from a container image.
var imageRootfsSteps = []string{"extract layers", "copy files", "pack ext4", "publish"}

// RootfsPath is where the root image of resolved spec s is (or will be)
// cached under cacheDir. It hashes s's copied files.
func RootfsPath(cacheDir string, s *Spec) (string, error) {
	hash, err := s.ImageHash()
	if err != nil {
		return "", err
	}
	return rootfsPathFor(cacheDir, hash), nil
}

func rootfsPathFor(cacheDir, imageHash string) string {
	sum := sha256.Sum256([]byte(rootfsFormat + "\x00" + imageHash))
	return filepath.Join(cacheDir, "rootfs", "template-"+hex.EncodeToString(sum[:])[:24]+".ext4")
}

// TemplateInfo is written to /etc/airlock/template.json in every template
// root, so a running guest (and anyone inspecting an image) can tell which
// template and which exact spec it came from.
//
// The image depends only on what goes into it (suite, packages, files), so
// templates that differ in build steps, memory or env share one image;
// hence it names the image's hash, not a template.
type TemplateInfo struct {
	ImageHash string `json:"image_hash"`      // Spec.ImageHash()
	Suite     string `json:"suite,omitempty"` // Debian suite ("" for a root from a container image)
	Image     string `json:"image,omitempty"` // container image id, for a root from one
	Format    string `json:"format"`          // root build format version
}

// TemplateInfoPath is where TemplateInfo lives inside the guest.
const TemplateInfoPath = templateInfoPath

// BuildRootfs returns the path of the read-only ext4 root image of the
// resolved spec, building it with mmdebstrap (minbase + DefaultPackages +
// spec.Packages, then spec.Files), or for a spec with an image from that
// container image's layers (then spec.Files), unless an image for the same
// ImageHash is already cached under cacheDir/rootfs. Building needs root (mmdebstrap
// --mode=root) and the host's apt sources for spec.Suite.
//
// All work happens in a temporary directory under cacheDir/rootfs which is
// removed whether the build succeeds or fails; the image appears at its
// final path only once complete. An unknown package is found before
// anything is downloaded or created, and reported as InvalidArgument
// naming the spec file, packages[i] and the package.
func BuildRootfs(ctx context.Context, spec *Spec, cacheDir string, progress image.Progress) (imagePath string, err error) {
	if !spec.Resolved() {
		return "", errdefs.FailedPrecondition("template %q: resolve its `from` (%q) before building", spec.Name, spec.From)
	}
	digests, err := spec.fileDigests()
	if err != nil {
		return "", err
	}
	b := &rootfsBuild{spec: spec, cacheDir: cacheDir, digests: digests}
	names := rootfsSteps
	if spec.Image.IsSet() {
		if b.src, err = openImage(spec.Image); err != nil {
			return "", err
		}
		names = imageRootfsSteps
	}
	if b.hash, err = spec.imageHashWith(digests, b.src.idString()); err != nil {
		return "", err
	}
	final := rootfsPathFor(cacheDir, b.hash)
	b.st = newSteps(progress, "rootfs", names...)
	if fi, err := os.Stat(final); err == nil {
		b.st.done("template %q: cached %s (%s)", spec.Name, final, sizeString(fi))
		return final, nil
	}
	if !spec.Image.IsSet() {
		b.st.next("check packages")
		b.pkgs = packageList(spec)
		if err := checkPackages(ctx, spec, b.pkgs); err != nil {
			return "", err
		}
	}

	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".build-template-")
	if err != nil {
		return "", err
	}
	// Whatever happens, the temporary tree goes: on failure nothing is left
	// behind, on success the image has been renamed out of it already.
	defer func() {
		if rmErr := removeBuildDir(tmp); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
	}()
	root := filepath.Join(tmp, "root")
	if err := b.tree(ctx, root); err != nil {
		return "", err
	}
	img := filepath.Join(tmp, "root.ext4")
	if err := packTree(ctx, spec, root, img, b.st); err != nil {
		return "", err
	}

	b.st.next("publish")
	if err := image.Publish(img, final); err != nil {
		return "", err
	}
	fi, err := os.Stat(final)
	if err != nil {
		return "", err
	}
	b.st.done("template %q: built %s (%s) in %s", spec.Name, final, sizeString(fi), time.Since(b.st.start).Round(100*time.Millisecond))
	return final, nil
}

// rootfsBuild is one BuildRootfs run's inputs.
type rootfsBuild struct {
	spec     *Spec
	cacheDir string
	digests  []string     // of spec.Files
	hash     string       // the image hash
	src      *sourceImage // the container image, nil for a Debian root
	pkgs     []string     // Debian packages, nil for an image root
	st       *steps
}

// tree makes the root's tree: from the Debian bootstrap or the container
// image, then the spec's files and the identity file.
func (b *rootfsBuild) tree(ctx context.Context, root string) error {
	if b.src == nil {
		return buildTree(ctx, b.spec, b.cacheDir, b.pkgs, b.digests, b.hash, root, b.st)
	}
	b.st.next("extract layers")
	if err := extractImage(ctx, b.src, root, b.st); err != nil {
		return err
	}
	if w := shellWarning(b.spec.Name, root); w != "" && b.st.progress != nil {
		b.st.progress("WARNING: %s", w)
	}
	b.st.next("copy files")
	if err := copyFiles(b.spec, b.digests, root); err != nil {
		return err
	}
	// The image is the operator's: nothing in it is trimmed. Only what
	// identifies the guest is airlock's.
	return writeIdentity(root, TemplateInfo{ImageHash: b.hash, Image: b.src.idString(), Format: rootfsFormat})
}

// buildTree makes the image's tree at root: bootstrap (cached per suite
// and package list), the spec's files, trimming, and the identity file.
func buildTree(ctx context.Context, spec *Spec, cacheDir string, pkgs, digests []string, hash, root string, st *steps) error {
	st.next("bootstrap")
	if err := bootstrapCached(ctx, cacheDir, spec.Suite, pkgs, root, st); err != nil {
		return err
	}
	st.next("copy files")
	if err := copyFiles(spec, digests, root); err != nil {
		return err
	}
	if len(spec.Keep) > 0 {
		if err := minimizeTree(root, spec.Keep, st); err != nil {
			return err
		}
	}
	st.next("trim")
	if err := trimTree(root); err != nil {
		return err
	}
	return writeIdentity(root, TemplateInfo{ImageHash: hash, Suite: spec.Suite, Format: rootfsFormat})
}

// packTree packs the tree at root into the ext4 image img, sized for its
// content (or the spec's rootfs_size_mib).
func packTree(ctx context.Context, spec *Spec, root, img string, st *steps) error {
	st.next("pack ext4")
	used, inodes, err := treeUsage(root)
	if err != nil {
		return err
	}
	size, err := imageSize(spec, used, inodes)
	if err != nil {
		return err
	}
	st.detail("%d MiB of content, %d inodes -> %d MiB image", used/mib, inodes, size/mib)
	return image.MakeExt4(ctx, root, img, size)
}

// packageList is DefaultPackages followed by the spec's, without repeats.
func packageList(s *Spec) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range append(append([]string(nil), DefaultPackages...), s.Packages...) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// CheckPackages reports, without building anything, whether every package
// of the resolved spec is known to the host's apt sources.
func CheckPackages(ctx context.Context, s *Spec) error {
	return checkPackages(ctx, s, packageList(s))
}

// checkPackages asks apt-cache about all packages in one call, so an
// unknown package fails the build in a second instead of after a download.
// It uses the host's apt lists, the same sources mmdebstrap uses.
func checkPackages(ctx context.Context, s *Spec, pkgs []string) error {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "apt-cache", append([]string{"show", "--no-all-versions"}, pkgs...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errdefs.FailedPrecondition("apt-cache is needed to check template packages: %v", err)
	}
	found := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "Package: "); ok {
			found[strings.TrimSpace(name)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read apt-cache output: %w", err)
	}
	for _, p := range DefaultPackages {
		if !found[p] {
			// Not the spec's fault: the host's package lists are missing.
			return errdefs.FailedPrecondition("the host's apt lists do not know %q (run apt-get update): %s",
				p, strings.TrimSpace(stderr.String()))
		}
	}
	for i, p := range s.Packages {
		if !found[p] {
			return s.pkgOrigin(i).errf("Debian package %q not found in the host's apt sources for %s", p, s.Suite)
		}
	}
	return nil
}

// copyFiles copies the spec's files into root with their modes, owned by
// root. All writes go through an os.Root, so a symlink in the tree (say an
// absolute /etc/foo -> /etc/shadow) can never redirect a write to the host.
func copyFiles(s *Spec, digests []string, root string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for i, f := range s.Files {
		if err := copyFile(r, f, digests[i]); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(r *os.Root, f File, digest string) error {
	rel := strings.TrimPrefix(f.Dst, "/")
	if dir := path.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return f.origin.errf("cannot create %s in the image: %v", path.Dir(f.Dst), err)
		}
	}
	// Replace, never write through, whatever the tree has at dst.
	if fi, err := r.Lstat(rel); err == nil {
		if fi.IsDir() {
			return f.origin.errf("dst %s is a directory in the image", f.Dst)
		}
		if err := r.Remove(rel); err != nil {
			return f.origin.errf("replace %s: %v", f.Dst, err)
		}
	}
	src, err := f.open()
	if err != nil {
		return f.origin.errf("%v", err)
	}
	defer src.Close()
	dst, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return f.origin.errf("create %s in the image: %v", f.Dst, err)
	}
	h := sha256.New()
	_, err = io.Copy(dst, io.TeeReader(src, h))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", f.Src, f.Dst, err)
	}
	// The hash names the image; an image whose content differs from its
	// name would be served for the wrong spec forever.
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return errdefs.FailedPrecondition("%s changed while the template was being built; build again", f.Src)
	}
	if err := r.Lchown(rel, 0, 0); err != nil {
		return err
	}
	return r.Chmod(rel, f.Mode)
}

// trimPaths are emptied (their contents removed, the directory kept) to
// shrink the image: apt's lists and caches (the guest never runs apt from
// the image), documentation, and logs of the bootstrap itself.
var trimPaths = []string{
	"var/lib/apt/lists",
	"var/cache/apt",
	"usr/share/doc",
	"usr/share/man",
	"usr/share/info",
	"usr/share/lintian",
	"usr/share/locale",
	"var/log",
}

// trimKeep survive trimming: glibc reads locale.alias, and apt expects its
// lists/partial and archives/partial directories to exist.
var trimKeep = map[string]bool{
	"usr/share/locale/locale.alias": true,
	"var/lib/apt/lists/partial":     true,
	"var/cache/apt/archives":        true,
}

func trimTree(root string) error {
	for _, p := range trimPaths {
		entries, err := os.ReadDir(filepath.Join(root, p))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			rel := p + "/" + e.Name()
			full := filepath.Join(root, rel)
			switch {
			case trimKeep[rel] && e.IsDir():
				if err := emptyDir(full); err != nil {
					return err
				}
			case trimKeep[rel]:
			case p == "var/log" && e.IsDir():
				// Packages expect their log directories; empty them instead.
				if err := emptyDir(full); err != nil {
					return err
				}
			default:
				if err := os.RemoveAll(full); err != nil {
					return err
				}
			}
		}
	}
	// Host-specific files mmdebstrap may copy in: the guest gets its name
	// and network identity from the host after every restore.
	for _, name := range []string{"etc/resolv.conf", "etc/hostname"} {
		if err := os.Remove(filepath.Join(root, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// writeIdentity writes template.json, the guest's hostname and hosts
// files, and the directories every template has: /job for the job's files
// and a world-writable /tmp.
func writeIdentity(root string, info TemplateInfo) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, d := range []struct {
		name string
		mode fs.FileMode
	}{{"job", 0o755}, {"tmp", 0o777 | fs.ModeSticky}, {"etc/airlock", 0o755}} {
		if err := r.MkdirAll(d.name, 0o755); err != nil {
			return err
		}
		if err := r.Chmod(d.name, d.mode); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{strings.TrimPrefix(templateInfoPath, "/"), append(js, '\n')},
		{"etc/hostname", []byte("airlock\n")},
		{"etc/hosts", []byte("127.0.0.1\tlocalhost airlock\n::1\tlocalhost ip6-localhost ip6-loopback\n")},
	}
	for _, f := range files {
		if err := r.Remove(f.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := r.WriteFile(f.name, f.data, 0o644); err != nil {
			return err
		}
		if err := r.Chmod(f.name, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// treeUsage is like du: the bytes of disk blocks used under root (each
// hard-linked inode once) and the number of inodes.
func treeUsage(root string) (used int64, inodes int64, err error) {
	seen := map[uint64]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sys, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			used += fi.Size()
			inodes++
			return nil
		}
		if seen[sys.Ino] {
			return nil
		}
		seen[sys.Ino] = true
		used += sys.Blocks * 512
		inodes++
		return nil
	})
	return used, inodes, err
}

// imageSize is the spec's rootfs_size_mib, or content * 1.2 + 64 MiB; big
// enough for the inode count either way (mkfs.ext4 allots one inode per
// 16 KiB on images of 512 MiB and more, one per 4 KiB below).
func imageSize(s *Spec, used, inodes int64) (int64, error) {
	size := used + used/5 + headroomBytes
	const inodeBytes = 16 << 10
	if need := (inodes + inodes/4 + 4096) * inodeBytes; size >= 512*mib && size < need {
		size = need
	}
	size = (size + mib - 1) / mib * mib
	if s.RootfsSizeMiB > 0 {
		want := int64(s.RootfsSizeMiB) * mib
		if want < used+used/20+16*mib {
			return 0, s.errf("rootfs_size_mib", "%d MiB is too small for %d MiB of content (leave it unset to size automatically)",
				s.RootfsSizeMiB, (used+mib-1)/mib)
		}
		size = want
	}
	return size, nil
}

func sizeString(fi os.FileInfo) string {
	apparent := fi.Size() / mib
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d MiB, %d MiB allocated", apparent, sys.Blocks*512/mib)
	}
	return fmt.Sprintf("%d MiB", apparent)
}
