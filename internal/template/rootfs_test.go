//go:build linux

package template

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// requireAptCache skips unless the host's apt lists can answer package
// questions (they are what both the pre-flight and mmdebstrap use).
func requireAptCache(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("apt-cache"); err != nil {
		t.Skip("apt-cache not installed")
	}
	if out, err := exec.Command("apt-cache", "show", "--no-all-versions", "procps").Output(); err != nil || !strings.Contains(string(out), "Package: procps") {
		t.Skip("host apt lists are empty (apt-get update)")
	}
}

// requireBuilder skips real root filesystem builds in -short mode, when
// not root, and when mmdebstrap or debugfs is missing.
func requireBuilder(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("real rootfs build (downloads ~40 MB); skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("building a rootfs needs root (mmdebstrap --mode=root)")
	}
	for _, tool := range []string{"mmdebstrap", "debugfs", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	requireAptCache(t)
}

// recorder is an image.Progress that keeps every line.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) progress(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

func debugfs(t *testing.T, img, request string) string {
	t.Helper()
	cmd := exec.Command("debugfs", "-R", request, img)
	var stderr strings.Builder
	cmd.Stderr = &stderr // the version banner and "not found" messages
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("debugfs -R %q: %v\n%s%s", request, err, out, stderr.String())
	}
	if len(out) == 0 && strings.Contains(stderr.String(), "not found") {
		t.Fatalf("debugfs -R %q: %s", request, stderr.String())
	}
	return string(out)
}

var debugfsMode = regexp.MustCompile(`Mode:\s+(\d+)`)

func debugfsStatMode(t *testing.T, img, p string) string {
	t.Helper()
	out := debugfs(t, img, "stat "+p)
	m := debugfsMode.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("debugfs stat %s: no mode in\n%s", p, out)
	}
	return m[1]
}

// assertEmptyCache fails if dir holds anything at all (no temporary
// directories, no image, not even the rootfs subdirectory).
func assertEmptyCache(t *testing.T, dir string) {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("cache dir is not empty after a failed build: %v", found)
	}
}

func TestBuildRootfsUnresolved(t *testing.T) {
	dir := specDir(t)
	writeSpec(t, dir, "p", "name: p\n")
	writeSpec(t, dir, "c", "name: c\nfrom: p\n")
	s, err := Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if _, err := BuildRootfs(t.Context(), s, cache, nil); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("BuildRootfs of an unresolved spec: %v, want failed_precondition", err)
	}
	assertEmptyCache(t, cache)
}

// An unknown package fails in the pre-flight, before any download, names
// the package and where it was declared, and leaves the cache untouched.
func TestBuildRootfsUnknownPackage(t *testing.T) {
	requireAptCache(t)
	dir := specDir(t)
	writeSpec(t, dir, "parent", "name: parent\npackages:\n  - curl\n  - airlock-no-such-package\n")
	writeSpec(t, dir, "child", "name: child\nfrom: parent\npackages: [python3]\n")
	s, err := LoadResolved(dir, "child")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	start := time.Now()
	_, err = BuildRootfs(t.Context(), s, cache, nil)
	if err == nil {
		t.Fatal("built a template with an unknown package")
	}
	if !errdefs.IsInvalidArgument(err) {
		t.Errorf("class = %s, want invalid_argument: %v", errdefs.Code(err), err)
	}
	// The package is declared in the parent: the error must point there.
	for _, w := range []string{"parent.yaml:4: packages[1]:", `"airlock-no-such-package"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("unknown package took %s to report; want a fast pre-flight", d)
	}
	assertEmptyCache(t, cache)
}

// The shipped templates' packages all exist in the host's apt sources.
func TestShippedTemplatePackagesExist(t *testing.T) {
	if testing.Short() {
		t.Skip("asks apt-cache about every shipped package; skipped in -short mode")
	}
	requireAptCache(t)
	// The document templates copy airlock's own tool; only its existence
	// matters to loading them.
	tool := filepath.Join(t.TempDir(), "airlock-docs")
	if err := os.WriteFile(tool, []byte("stand-in"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIRLOCK_DOCS", tool)
	dir := filepath.Join("..", "..", "templates")
	for _, name := range []string{"base", "docs-base", "legal-doc-review", "invoice-ocr", "pii-redact"} {
		s, err := LoadResolved(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPackages(t.Context(), s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBuildRootfsTiny(t *testing.T) {
	requireBuilder(t)
	dir := specDir(t)
	p := writeSpec(t, dir, "tiny", `name: tiny
files:
  - src: tool.sh
    dst: /usr/local/bin/airlock-tool
    mode: "0750"
  - src: data/cfg.txt
    dst: /etc/tool/cfg.txt
`)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := s.ImageHash()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	rec := &recorder{}
	start := time.Now()
	img, err := BuildRootfs(t.Context(), s, cache, rec.progress)
	if err != nil {
		t.Fatalf("BuildRootfs: %v\nprogress:\n%s", err, rec.text())
	}
	t.Logf("tiny rootfs built in %s:\n%s", time.Since(start).Round(100*time.Millisecond), rec.text())
	fi, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := RootfsPath(cache, s); img != want {
		t.Errorf("image at %s, RootfsPath says %s", img, want)
	}
	if !strings.HasPrefix(filepath.Base(img), "template-") || filepath.Dir(img) != filepath.Join(cache, "rootfs") {
		t.Errorf("unexpected image path %s", img)
	}
	for _, step := range rootfsSteps {
		if !strings.Contains(rec.text(), "rootfs: step") || !strings.Contains(rec.text(), ": "+step) {
			t.Errorf("progress never reported step %q", step)
		}
	}
	if !strings.Contains(rec.text(), "downloading packages") {
		t.Errorf("progress did not pass mmdebstrap's phases through")
	}

	var info TemplateInfo
	if err := json.Unmarshal([]byte(debugfs(t, img, "cat "+TemplateInfoPath)), &info); err != nil {
		t.Fatalf("template.json: %v", err)
	}
	if info.ImageHash != hash || info.Suite != "bookworm" {
		t.Errorf("template.json = %+v, want name tiny hash %s", info, hash)
	}
	if m := debugfsStatMode(t, img, "/usr/local/bin/airlock-tool"); m != "0750" {
		t.Errorf("copied tool mode = %s, want 0750", m)
	}
	if m := debugfsStatMode(t, img, "/etc/tool/cfg.txt"); m != "0644" {
		t.Errorf("copied cfg mode = %s, want 0644", m)
	}
	if got := debugfs(t, img, "cat /usr/local/bin/airlock-tool"); !strings.Contains(got, "echo hi") {
		t.Errorf("copied tool content = %q", got)
	}
	if m := debugfsStatMode(t, img, "/job"); m != "0755" {
		t.Errorf("/job mode = %s, want 0755", m)
	}
	if m := debugfsStatMode(t, img, "/tmp"); m != "01777" {
		t.Errorf("/tmp mode = %s, want 01777", m)
	}
	// procps is in every template; docs and apt lists are trimmed.
	debugfsStatMode(t, img, "/usr/bin/ps")
	if out := debugfs(t, img, "ls /usr/share/doc"); strings.Contains(out, "procps") {
		t.Errorf("/usr/share/doc was not trimmed:\n%s", out)
	}
	if out := debugfs(t, img, "ls /var/lib/apt/lists"); strings.Contains(out, "Packages") {
		t.Errorf("apt lists were not trimmed:\n%s", out)
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "rootfs", ".build-*")); len(entries) > 0 {
		t.Errorf("temporary build directories left behind: %v", entries)
	}
	t.Logf("image %s: %d MiB apparent", filepath.Base(img), fi.Size()>>20)
	if keep := os.Getenv("AIRLOCK_TEST_KEEP_IMAGE"); keep != "" {
		exec.Command("cp", "--sparse=always", img, keep).Run()
	}

	// Second call: from cache, at once, the same file untouched.
	rec2 := &recorder{}
	img2, err := BuildRootfs(t.Context(), s, cache, rec2.progress)
	if err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(img2)
	if err != nil {
		t.Fatal(err)
	}
	if img2 != img || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("cached call returned %s (mtime %v), want %s (mtime %v)", img2, fi2.ModTime(), img, fi.ModTime())
	}
	if strings.Contains(rec2.text(), "bootstrap") || !strings.Contains(rec2.text(), "cached") {
		t.Errorf("cached call's progress:\n%s", rec2.text())
	}

	// Editing a copied file makes a different image path.
	must(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho changed\n"), 0o644))
	if p2, err := RootfsPath(cache, s); err != nil || p2 == img {
		t.Errorf("RootfsPath after editing a copied file = %s, %v; want a new path", p2, err)
	}

	// A root that adds a package to this one's starts from its cached
	// bootstrap and installs only the package, in a chroot that leaves
	// nothing mounted or behind.
	p3 := writeSpec(t, dir, "tiny-jq", "name: tiny-jq\npackages: [jq]\n")
	s3, err := Load(p3)
	if err != nil {
		t.Fatal(err)
	}
	rec3 := &recorder{}
	img3, err := BuildRootfs(t.Context(), s3, cache, rec3.progress)
	if err != nil {
		t.Fatalf("BuildRootfs with one more package: %v\nprogress:\n%s", err, rec3.text())
	}
	if !strings.Contains(rec3.text(), "plus jq") || strings.Contains(rec3.text(), "downloading packages") {
		t.Errorf("the extra package was not added to the cached bootstrap:\n%s", rec3.text())
	}
	debugfsStatMode(t, img3, "/usr/bin/jq")
	debugfsStatMode(t, img3, "/usr/bin/ps")
	for _, gone := range []string{"/etc/resolv.conf", "/usr/sbin/policy-rc.d"} {
		out, _ := exec.Command("debugfs", "-R", "stat "+gone, img3).CombinedOutput()
		if !strings.Contains(string(out), "File not found") {
			t.Errorf("%s left in the image:\n%s", gone, out)
		}
	}
	if out := debugfs(t, img3, "ls /var/lib/apt/lists"); strings.Contains(out, "Packages") {
		t.Errorf("apt lists were not trimmed:\n%s", out)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), cache) {
		t.Errorf("mounts left under %s:\n%s", cache, mounts)
	}
}

func TestNearestBootstrap(t *testing.T) {
	cache := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(cache, "rootfs"), 0o755))
	put := func(key, suite string, pkgs ...string) string {
		a := filepath.Join(cache, "rootfs", "bootstrap-"+key+".tar")
		must(t, os.WriteFile(a, nil, 0o644))
		must(t, writeManifest(a, suite, pkgs))
		return a
	}
	small := put("a", "bookworm", "procps")
	big := put("b", "bookworm", "iproute2", "procps")
	put("c", "trixie", "iproute2", "jq", "procps")           // another suite
	put("d", "bookworm", "curl", "iproute2", "jq", "procps") // wants more than asked
	if a, extra := nearestBootstrap(cache, "bookworm", []string{"iproute2", "jq", "procps"}); a != big || strings.Join(extra, ",") != "jq" {
		t.Errorf("got %s + %v, want %s + jq", a, extra, big)
	}
	if a, extra := nearestBootstrap(cache, "bookworm", []string{"jq", "procps"}); a != small || strings.Join(extra, ",") != "jq" {
		t.Errorf("got %s + %v, want %s + jq", a, extra, small)
	}
	if a, _ := nearestBootstrap(cache, "bookworm", []string{"jq"}); a != "" {
		t.Errorf("no subset cached, got %s", a)
	}
}

// A build cancelled in the middle of mmdebstrap leaves no temporary
// directory, no image, and no mount behind.
func TestBuildRootfsCancelled(t *testing.T) {
	requireBuilder(t)
	dir := specDir(t)
	s, err := Parse([]byte("name: cancelled\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &recorder{}
	progress := func(format string, args ...any) {
		rec.progress(format, args...)
		// Cancel once mmdebstrap has mounted and started downloading.
		if strings.Contains(fmt.Sprintf(format, args...), "downloading packages") {
			cancel()
		}
	}
	_, err = BuildRootfs(ctx, s, cache, progress)
	if err == nil {
		t.Fatal("cancelled build succeeded")
	}
	t.Logf("cancelled build: %v", err)
	if entries, _ := os.ReadDir(filepath.Join(cache, "rootfs")); len(entries) > 0 {
		t.Errorf("cancelled build left %v", entries)
	}
	if mounts, err := mountsUnder(cache); err != nil || len(mounts) > 0 {
		t.Errorf("cancelled build left mounts %v (%v)", mounts, err)
	}
}

// TestBuildRootfsBase builds the shipped base template when
// AIRLOCK_TEST_BASE_ROOTFS=1 (it takes a while); AIRLOCK_TEST_CACHE keeps
// the image for later runs.
func TestBuildRootfsBase(t *testing.T) {
	if os.Getenv("AIRLOCK_TEST_BASE_ROOTFS") != "1" {
		t.Skip("set AIRLOCK_TEST_BASE_ROOTFS=1 to build templates/base.yaml")
	}
	requireBuilder(t)
	s, err := LoadResolved(filepath.Join("..", "..", "templates"), "base")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("AIRLOCK_TEST_CACHE")
	if cache == "" {
		cache = t.TempDir()
	}
	start := time.Now()
	img, err := BuildRootfs(t.Context(), s, cache, func(format string, args ...any) {
		t.Logf("%6.1fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/bin/python3", "/usr/bin/curl", "/etc/ssl/certs/ca-certificates.crt", "/usr/bin/ps"} {
		debugfsStatMode(t, img, p)
	}
}

func TestImageSize(t *testing.T) {
	s := &Spec{Name: "x"}
	size, err := imageSize(s, 100*mib, 5000)
	if err != nil || size != 184*mib {
		t.Errorf("imageSize(100 MiB) = %d MiB, %v; want 184 MiB", size/mib, err)
	}
	// Many small files on a big image: enough inodes at one per 16 KiB.
	size, err = imageSize(s, 600*mib, 100000)
	if err != nil || size < (100000+25000)*16<<10 {
		t.Errorf("imageSize with 100k inodes = %d MiB, %v", size/mib, err)
	}
	s.RootfsSizeMiB = 100
	if _, err := imageSize(s, 200*mib, 10); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "rootfs_size_mib") {
		t.Errorf("too small rootfs_size_mib: %v", err)
	}
	if size, err := imageSize(s, 50*mib, 10); err != nil || size != 100*mib {
		t.Errorf("rootfs_size_mib 100 = %d MiB, %v", size/mib, err)
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		`/a/b`:            "/a/b",
		`/a\040b`:         "/a b",
		`/x\134y`:         `/x\y`,
		`/trailing\04`:    `/trailing\04`,
		`/tab\011and\012`: "/tab\tand\n",
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRemoveBuildDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".build-x")
	must(t, os.MkdirAll(filepath.Join(dir, "root", "etc"), 0o755))
	must(t, removeBuildDir(dir))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("build dir still there: %v", err)
	}
	must(t, removeBuildDir(dir)) // already gone is fine
}
