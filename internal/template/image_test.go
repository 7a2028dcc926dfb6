//go:build linux

package template

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// TestImageSpecFields: image: parses both transports relative to the
// spec, excludes suite and packages, and a child keeps its parent's base.
func TestImageSpecFields(t *testing.T) {
	dir := specDir(t)
	img := imageOf(t, []string{"PATH=/opt/bin:/bin", "APP=img"}, "/srv", layerOf(t, entry{name: "a", body: "a"}))
	archive := dockerArchive(t, img)
	must(t, os.Rename(archive, filepath.Join(dir, "app.tar")))
	oci := filepath.Join(dir, "oci")
	p, err := layout.Write(oci, empty.Index)
	must(t, err)
	must(t, p.AppendImage(img))

	writeSpec(t, dir, "app", "name: app\nimage: docker-archive:app.tar\nenv:\n  APP: spec\n")
	writeSpec(t, dir, "app-oci", "name: app-oci\nimage: oci:oci\n")
	writeSpec(t, dir, "kid", "name: kid\nfrom: app\nworkdir: /work\nbuild: [\"true\"]\n")
	s, err := LoadResolved(dir, "kid")
	if err != nil {
		t.Fatal(err)
	}
	if s.Image.Transport != TransportDockerArchive || s.Image.Path != filepath.Join(dir, "app.tar") || s.Suite != "" || len(s.Packages) != 0 {
		t.Fatalf("kid: image %+v suite %q packages %v", s.Image, s.Suite, s.Packages)
	}
	viaOCI, err := LoadResolved(dir, "app-oci")
	if err != nil {
		t.Fatal(err)
	}
	// Keyed by the image id, not by where or how it is stored.
	h1, err := s.ImageHash()
	must(t, err)
	h2, err := viaOCI.ImageHash()
	must(t, err)
	if h1 != h2 {
		t.Errorf("the same image as docker-archive and oci: image hashes %s != %s", h1, h2)
	}
	other := dockerArchive(t, imageOf(t, nil, "", layerOf(t, entry{name: "a", body: "b"})))
	writeSpec(t, dir, "other", "name: other\nimage: docker-archive:"+other+"\n")
	o, err := LoadResolved(dir, "other")
	must(t, err)
	if h3, _ := o.ImageHash(); h3 == h1 {
		t.Error("a different image has the same image hash")
	}

	var m Manifest
	must(t, execDefaults(s, &m))
	if m.Env["APP"] != "spec" || m.Env["PATH"] != "/opt/bin:/bin" || m.Workdir != "/work" || m.Image == nil || !strings.HasPrefix(m.Image.ID, "sha256:") {
		t.Errorf("kid's exec defaults: env %v workdir %q image %+v", m.Env, m.Workdir, m.Image)
	}
	app, err := LoadResolved(dir, "app")
	must(t, err)
	m = Manifest{}
	must(t, execDefaults(app, &m))
	if m.Env["APP"] != "spec" || m.Workdir != "/srv" || m.Cwd() != "/srv" || m.Packages != nil {
		t.Errorf("app's exec defaults: env %v workdir %q packages %v; want the spec's env over the image's and the image's workdir", m.Env, m.Workdir, m.Packages)
	}

	bad := map[string]string{
		"with-suite":    "name: with-suite\nimage: oci:oci\nsuite: bookworm\n",
		"with-packages": "name: with-packages\nimage: oci:oci\npackages: [jq]\n",
		"bad-transport": "name: bad-transport\nimage: docker://debian\n",
		"no-path":       "name: no-path\nimage: oci:nosuch\n",
		"oci-file":      "name: oci-file\nimage: oci:app.tar\n",
		"bad-digest":    "name: bad-digest\nimage: oci:oci@sha256:abc\n",
		"kid-packages":  "name: kid-packages\nfrom: app\npackages: [jq]\n",
		"kid-suite":     "name: kid-suite\nfrom: app\nsuite: bookworm\n",
		"kid-other":     "name: kid-other\nfrom: app\nimage: oci:oci\n",
		"debian":        "name: debian\n",
		"kid-of-debian": "name: kid-of-debian\nfrom: debian\nimage: oci:oci\n",
		"rel-workdir":   "name: rel-workdir\nworkdir: srv\n",
	}
	for n, body := range bad {
		writeSpec(t, dir, n, body)
	}
	for n := range bad {
		if n == "debian" {
			continue
		}
		if _, err := LoadResolved(dir, n); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: %v, want invalid_argument", n, err)
		}
	}
}

// TestBuildRootfsFromImage: a root from a docker-archive holds the
// image's files and airlock's identity file, reports the image steps, and
// rebuilding the unchanged image, even from another path, is a cache hit.
func TestBuildRootfsFromImage(t *testing.T) {
	requireRootForChown(t)
	for _, tool := range []string{"mkfs.ext4", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := specDir(t)
	img := imageOf(t, nil, "", layerOf(t, entry{name: "opt/", typ: tar.TypeDir}, entry{name: "opt/only-in-image", body: "from the image\n"}))
	archive := dockerArchive(t, img)
	writeSpec(t, dir, "fromimg", "name: fromimg\nimage: docker-archive:"+archive+"\nfiles:\n  - src: tool.sh\n    dst: /usr/local/bin/tool\n    mode: \"0755\"\n")
	s, err := LoadResolved(dir, "fromimg")
	must(t, err)
	cache := t.TempDir()
	rec := &recorder{}
	out, err := BuildRootfs(t.Context(), s, cache, rec.progress)
	if err != nil {
		t.Fatalf("BuildRootfs: %v\n%s", err, rec.text())
	}
	for _, step := range imageRootfsSteps {
		if !strings.Contains(rec.text(), ": "+step) {
			t.Errorf("progress never reported step %q:\n%s", step, rec.text())
		}
	}
	if got := debugfs(t, out, "cat /opt/only-in-image"); got != "from the image\n" {
		t.Errorf("/opt/only-in-image = %q", got)
	}
	if got := debugfs(t, out, "cat /etc/airlock/template.json"); !strings.Contains(got, `"image": "sha256:`) {
		t.Errorf("template.json = %q", got)
	}
	if got := debugfs(t, out, "cat /usr/local/bin/tool"); !strings.Contains(got, "echo hi") {
		t.Errorf("copied file = %q", got)
	}

	moved := filepath.Join(t.TempDir(), "moved.tar")
	must(t, os.Rename(archive, moved))
	writeSpec(t, dir, "fromimg", "name: fromimg\nimage: docker-archive:"+moved+"\nfiles:\n  - src: tool.sh\n    dst: /usr/local/bin/tool\n    mode: \"0755\"\n")
	s, err = LoadResolved(dir, "fromimg")
	must(t, err)
	rec = &recorder{}
	again, err := BuildRootfs(t.Context(), s, cache, rec.progress)
	must(t, err)
	if again != out || !strings.Contains(rec.text(), "cached") {
		t.Errorf("rebuild of the unchanged image: %s (first %s), progress %q; want a cache hit", again, out, rec.text())
	}
}
