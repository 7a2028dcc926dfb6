//go:build linux

package template

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// entry is one tar entry of a test layer.
type entry struct {
	name, body, link string
	typ              byte // tar.TypeReg when 0
	mode             int64
	uid              int
}

func layerOf(t *testing.T, entries ...entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Uid: e.uid, Gid: e.uid, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		must(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write([]byte(e.body))
			must(t, err)
		}
	}
	must(t, tw.Close())
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	must(t, err)
	return l
}

// imageOf stacks layers (bottom first) into a linux image with env and
// working directory in its config.
func imageOf(t *testing.T, env []string, workdir string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	must(t, err)
	cfg, err := img.ConfigFile()
	must(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Env, cfg.Config.WorkingDir = env, workdir
	img, err = mutate.ConfigFile(img, cfg)
	must(t, err)
	return img
}

func dockerArchive(t *testing.T, img v1.Image) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "app.tar")
	must(t, tarball.WriteToFile(p, name.MustParseReference("airlock.test/app:1"), img))
	return p
}

func extractTo(t *testing.T, ref ImageRef) (string, error) {
	t.Helper()
	si, err := openImage(ref)
	if err != nil {
		return "", err
	}
	root := filepath.Join(t.TempDir(), "root")
	return root, extractImage(context.Background(), si, root, newSteps(nil, "rootfs", imageRootfsSteps...))
}

func requireRootForChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("extracting layers sets owners: needs root")
	}
}

// TestExtractImageFlattens: layers apply bottom to top; a whiteout
// removes a lower file, an opaque directory hides the lower layers'
// content, a changed file has its top content; owners, modes, symlinks and
// hard links are kept.
func TestExtractImageFlattens(t *testing.T) {
	requireRootForChown(t)
	lower := layerOf(t,
		entry{name: "etc/", typ: tar.TypeDir},
		entry{name: "etc/keep", body: "lower keep"},
		entry{name: "etc/gone", body: "to be whited out"},
		entry{name: "etc/changed", body: "old"},
		entry{name: "opt/", typ: tar.TypeDir},
		entry{name: "opt/app/", typ: tar.TypeDir},
		entry{name: "opt/app/old", body: "hidden by the opaque dir"},
		entry{name: "usr/bin/tool", body: "#!/bin/sh\n", mode: 0o4755, uid: 1000},
	)
	upper := layerOf(t,
		entry{name: "etc/.wh.gone"},
		entry{name: "etc/changed", body: "new"},
		entry{name: "opt/app/.wh..wh..opq"},
		entry{name: "opt/app/new", body: "upper"},
		entry{name: "usr/bin/abs", typ: tar.TypeSymlink, link: "/etc/keep"},
		entry{name: "usr/bin/hard", typ: tar.TypeLink, link: "usr/bin/tool"},
	)
	ref := ImageRef{Transport: TransportDockerArchive, Path: dockerArchive(t, imageOf(t, nil, "", lower, upper))}
	root, err := extractTo(t, ref)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	for p, want := range map[string]string{"etc/keep": "lower keep", "etc/changed": "new", "opt/app/new": "upper"} {
		if got := read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"etc/gone", "etc/.wh.gone", "opt/app/old", "opt/app/.wh..wh..opq"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v); whiteouts not honoured", p, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(root, "usr/bin/abs")); err != nil || l != "/etc/keep" {
		t.Errorf("symlink = %q %v", l, err)
	}
	fi, err := os.Stat(filepath.Join(root, "usr/bin/tool"))
	must(t, err)
	if fi.Mode()&os.ModeSetuid == 0 || fi.Mode().Perm() != 0o755 || uidOf(fi) != 1000 {
		t.Errorf("tool: mode %v uid %d, want setuid 0755 owned by 1000", fi.Mode(), uidOf(fi))
	}
	hard, err := os.Stat(filepath.Join(root, "usr/bin/hard"))
	must(t, err)
	if !os.SameFile(fi, hard) {
		t.Error("hard link is not the same file as its target")
	}
}

// TestExtractImageRefuses: entries that escape the root, device nodes,
// writes through a symlink leading out of the root, a layer that does not
// match its digest and an image over the size bound are all refused as
// invalid_argument, and nothing is written outside the root.
func TestExtractImageRefuses(t *testing.T) {
	requireRootForChown(t)
	outside := t.TempDir()
	cases := []struct {
		name   string
		layers [][]entry
		want   string
	}{
		{"dot-dot", [][]entry{{{name: "../../escape", body: "x"}}}, "unsafe"},
		{"char device", [][]entry{{{name: "dev/null", typ: tar.TypeChar}}}, "device nodes are refused"},
		{"block device", [][]entry{{{name: "dev/sda", typ: tar.TypeBlock}}}, "device nodes are refused"},
		{"fifo", [][]entry{{{name: "run/pipe", typ: tar.TypeFifo}}}, "FIFOs are refused"},
		{"hard link out", [][]entry{{{name: "x", typ: tar.TypeLink, link: "/" + strings.Repeat("../", 8) + "etc/passwd"}}}, "hard link"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ls []v1.Layer
			for _, es := range tc.layers {
				ls = append(ls, layerOf(t, es...))
			}
			ref := ImageRef{Transport: TransportDockerArchive, Path: dockerArchive(t, imageOf(t, nil, "", ls...))}
			_, err := extractTo(t, ref)
			if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want invalid_argument containing %q", err, tc.want)
			}
			if left, _ := os.ReadDir(outside); len(left) > 0 {
				t.Fatalf("wrote outside the root: %v", left)
			}
		})
	}

	// A write under a symlink never leaves the root: mutate.Extract drops
	// entries under a symlink of the same or a lower layer (and links
	// whose relative target escapes), and an upper layer's directory
	// wins over a lower symlink. Whatever gets through, nothing lands
	// outside.
	for _, layers := range [][][]entry{
		{{{name: "evil", typ: tar.TypeSymlink, link: outside}, {name: "evil/pwned", body: "x"}}},
		{{{name: "evil", typ: tar.TypeSymlink, link: outside}}, {{name: "evil/pwned", body: "x"}}},
		{{{name: "a/", typ: tar.TypeDir}, {name: "a/up", typ: tar.TypeSymlink, link: "../../../../../.." + outside}, {name: "a/up/pwned", body: "x"}}},
	} {
		var ls []v1.Layer
		for _, es := range layers {
			ls = append(ls, layerOf(t, es...))
		}
		_, err := extractTo(t, ImageRef{Transport: TransportDockerArchive, Path: dockerArchive(t, imageOf(t, nil, "", ls...))})
		if err != nil && !errdefs.IsInvalidArgument(err) {
			t.Errorf("symlink case: %v", err)
		}
		if left, _ := os.ReadDir(outside); len(left) > 0 {
			t.Fatalf("wrote outside the root through a symlink: %v", left)
		}
	}
	// And the backstop itself: a write under a symlink that leaves the
	// root is refused by the os.Root every entry is written through.
	root := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(root, "evil")))
	r, err := os.OpenRoot(root)
	must(t, err)
	defer r.Close()
	err = writeEntry(r, &tar.Header{Name: "evil/pwned", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, strings.NewReader("x"))
	var ee *entryError
	if !errors.As(err, &ee) {
		t.Fatalf("write through a symlink out of the root: %v, want refused", err)
	}
	if left, _ := os.ReadDir(outside); len(left) > 0 {
		t.Fatalf("wrote outside the root: %v", left)
	}

	t.Run("layer does not match its diff_id", func(t *testing.T) {
		img := imageOf(t, nil, "", layerOf(t, entry{name: "a", body: "real"}))
		cfg, err := img.ConfigFile()
		must(t, err)
		cfg = cfg.DeepCopy()
		other, err := layerOf(t, entry{name: "a", body: "claimed"}).DiffID()
		must(t, err)
		cfg.RootFS.DiffIDs = []v1.Hash{other}
		img, err = mutate.ConfigFile(img, cfg)
		must(t, err)
		dir := filepath.Join(t.TempDir(), "layout")
		p, err := layout.Write(dir, empty.Index)
		must(t, err)
		must(t, p.AppendImage(img))
		_, err = extractTo(t, ImageRef{Transport: TransportOCI, Path: dir})
		if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "does not match") {
			t.Fatalf("err = %v, want the digest mismatch", err)
		}
	})

	t.Run("over the size bound", func(t *testing.T) {
		old := maxImageContentBytes
		maxImageContentBytes = 64 << 10
		t.Cleanup(func() { maxImageContentBytes = old })
		big := entry{name: "big", body: strings.Repeat("x", 128<<10)}
		ref := ImageRef{Transport: TransportDockerArchive, Path: dockerArchive(t, imageOf(t, nil, "", layerOf(t, big)))}
		_, err := extractTo(t, ref)
		if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "more than") {
			t.Fatalf("err = %v, want the size bound", err)
		}
	})
}

func uidOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
