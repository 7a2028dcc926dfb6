package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/airlock-dev/airlock/internal/image"
)

// tarEntry is one entry of a layer built by the test.
type tarEntry struct {
	name, link string
	body       []byte
	typ        byte
	mode       int64
}

func testLayer(t *testing.T, entries ...tarEntry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, Size: int64(len(e.body)), Format: tar.FormatPAX}
		if h.Mode == 0 {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// busyboxImage writes a docker-save archive of a two-layer image: the
// host's static busybox with its applets, a marker file only the image
// has, and a file the upper layer whites out; Env and WorkingDir set.
func busyboxImage(t *testing.T, path, marker string) {
	t.Helper()
	bb, err := os.ReadFile(image.BusyboxPath)
	if err != nil {
		t.Skipf("busybox-static is needed for this test: %v", err)
	}
	base := []tarEntry{
		{name: "bin/", typ: tar.TypeDir}, {name: "bin/busybox", typ: tar.TypeReg, body: bb},
		{name: "opt/", typ: tar.TypeDir}, {name: "opt/app/", typ: tar.TypeDir},
		{name: "opt/app/deleted", typ: tar.TypeReg, body: []byte("whited out above\n"), mode: 0o644},
	}
	for _, a := range []string{"sh", "cat", "pwd", "test", "echo", "mkdir", "ls", "true"} {
		base = append(base, tarEntry{name: "bin/" + a, typ: tar.TypeSymlink, link: "busybox"})
	}
	upper := []tarEntry{
		{name: "opt/app/.wh.deleted", typ: tar.TypeReg, mode: 0o644},
		{name: "opt/app/marker", typ: tar.TypeReg, body: []byte(marker), mode: 0o644},
	}
	img, err := mutate.AppendLayers(empty.Image, testLayer(t, base...), testLayer(t, upper...))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Env = []string{"PATH=/bin", "IMAGE_GREETING=from the image config"}
	cfg.Config.WorkingDir = "/opt/app"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(path, name.MustParseReference("airlock.test/busybox:e2e"), img); err != nil {
		t.Fatal(err)
	}
}

// TestImageTemplate: a template whose root is a docker-save archive,
// found by name along --template-path from a directory that has no
// ./templates, bakes and boots; a sandbox of it reads the file only the
// image has, from the image's working directory and with its Env, and
// does not see the file the upper layer whited out. Building it again is
// a cache hit.
func TestImageTemplate(t *testing.T) {
	e := getEnv(t)
	tmpl := uniq("img")
	top := t.TempDir()
	dir := filepath.Join(top, "tmpl", tmpl)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := "only in the image " + tmpl + "\n"
	busyboxImage(t, filepath.Join(dir, "busybox.tar"), marker)
	spec := "name: " + tmpl + "\nimage: docker-archive:busybox.tar\nenv:\n  SPEC_VAR: from-the-spec\nbuild:\n  - echo baked > /opt/app/baked\n"
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cli(t, "template", "rm", "--state-dir", e.stateDir, tmpl) })

	build := func() string {
		t.Helper()
		runDir, err := os.MkdirTemp("/run", "alk-e2e-bake-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(runDir)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.bin, "template", "build", "--state-dir", e.stateDir, "--run-dir", runDir,
			"--template-path", filepath.Join(top, "tmpl"), tmpl)
		cmd.Dir = t.TempDir() // no ./templates here
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("template build %s: %v\n%s", tmpl, err, out)
		}
		return string(out)
	}
	out := build()
	if !strings.Contains(out, "extract layers") || !strings.Contains(out, "layer 2/2") {
		t.Errorf("build progress did not report the image steps:\n%s", out)
	}
	if again := build(); !strings.Contains(again, "up to date") {
		t.Errorf("rebuilding the unchanged image was not a cache hit:\n%s", again)
	}
	ls, stderr, code := e.cli(t, "template", "ls", "--state-dir", e.stateDir, "--json")
	if code != 0 {
		t.Fatalf("template ls: %s", stderr)
	}
	var ts []struct {
		Name, Source string
		Workdir      string
		Image        *struct{ Ref, ID string }
	}
	if err := json.Unmarshal([]byte(ls), &ts); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tt := range ts {
		if tt.Name == tmpl {
			found = true
			if tt.Source != filepath.Join(dir, "template.yaml") || tt.Workdir != "/opt/app" || tt.Image == nil || !strings.HasPrefix(tt.Image.ID, "sha256:") {
				t.Errorf("manifest: %+v", tt)
			}
		}
	}
	if !found {
		t.Fatalf("template ls does not list %s:\n%s", tmpl, ls)
	}

	// One-shot: airlock run uses the template's env and working directory too.
	runDir, err := os.MkdirTemp("/run", "alk-e2e-run-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(runDir)
	out, stderr, code = e.cli(t, "run", "--state-dir", e.stateDir, "--run-dir", runDir, "--template", tmpl, "--", "cat", "marker")
	if code != 0 || out != marker {
		t.Fatalf("airlock run --template %s -- cat marker: exit %d, stdout %q, stderr %s", tmpl, code, out, stderr)
	}

	d := startDaemon(t, e)
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := d.cli(t, tenantA, args...)
		if code != 0 {
			t.Fatalf("airlock %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	var info struct{ ID string }
	if err := json.Unmarshal([]byte(run("sandbox", "create", "--template", tmpl, "--ttl", "2m", "--json")), &info); err != nil || info.ID == "" {
		t.Fatalf("sandbox create: %v", err)
	}
	t.Cleanup(func() { d.cli(t, tenantA, "sandbox", "kill", info.ID) })
	got := run("sandbox", "exec", info.ID, "--shell", "--",
		`pwd; cat marker; echo "$IMAGE_GREETING|$SPEC_VAR"; cat baked; test -e deleted && echo deleted-is-there || echo deleted-is-gone`)
	want := "/opt/app\n" + marker + "from the image config|from-the-spec\nbaked\ndeleted-is-gone\n"
	if got != want {
		t.Fatalf("exec in the image sandbox printed %q, want %q", got, want)
	}
}
