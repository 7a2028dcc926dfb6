package main

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
)

// cpEnv is a fake daemon with one sandbox, and a CLI pointed at it.
type cpEnv struct {
	t   *testing.T
	env map[string]string
	id  string
}

func newCPEnv(t *testing.T) *cpEnv {
	fake := apitest.StartLocal(t, api.Config{})
	e := &cpEnv{t: t, env: map[string]string{"AIRLOCK_URL": "unix://" + fake.Socket, "AIRLOCK_API_KEY": fake.Key(t, "acme")}}
	out, stderr, code := runCLI(t, e.env, "sandbox", "create", "-t", "base")
	if code != 0 {
		t.Fatalf("create: %s", stderr)
	}
	e.id = strings.TrimSpace(out)
	return e
}

func (e *cpEnv) run(args ...string) string {
	e.t.Helper()
	out, stderr, code := runCLI(e.t, e.env, args...)
	if code != 0 {
		e.t.Fatalf("airlock %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// remote is the content of a file in the sandbox, "" when missing.
func (e *cpEnv) remote(p string) string {
	e.t.Helper()
	out, _, code := runCLI(e.t, e.env, "sandbox", "cp", e.id+":"+p, "-")
	if code != 0 {
		return ""
	}
	tr := tar.NewReader(strings.NewReader(out))
	if _, err := tr.Next(); err != nil {
		return ""
	}
	b, _ := io.ReadAll(tr)
	return string(b)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readLocal(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
	}
	return string(b)
}

// TestCopySemantics walks README's cp table, in and out.
func TestCopySemantics(t *testing.T) {
	e := newCPEnv(t)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"f.txt": "file", "dir/a.txt": "a", "dir/sub/b.txt": "b"})
	f, dir := filepath.Join(local, "f.txt"), filepath.Join(local, "dir")

	// In: a file.
	e.run("sandbox", "cp", f, e.id+":/job/")
	e.run("sandbox", "cp", f, e.id+":/job/renamed.txt")
	e.run("sandbox", "cp", f, e.id+":/job") // an existing directory: into it
	// In: a directory.
	e.run("sandbox", "cp", dir, e.id+":/job/new")       // missing: created, the contents in it
	e.run("sandbox", "cp", dir, e.id+":/job")           // existing: the directory inside it
	e.run("sandbox", "cp", dir+"/.", e.id+":/job/flat") // SRC/.: the contents
	for p, want := range map[string]string{
		"/job/f.txt": "file", "/job/renamed.txt": "file",
		"/job/new/a.txt": "a", "/job/new/sub/b.txt": "b",
		"/job/dir/a.txt": "a", "/job/dir/sub/b.txt": "b",
		"/job/flat/a.txt": "a",
	} {
		if got := e.remote(p); got != want {
			t.Errorf("%s in the sandbox: %q, want %q", p, got, want)
		}
	}

	// Out.
	back := t.TempDir()
	e.run("sandbox", "cp", e.id+":/job/f.txt", back+"/")
	e.run("sandbox", "cp", e.id+":/job/f.txt", filepath.Join(back, "g.txt"))
	e.run("sandbox", "cp", e.id+":/job/dir", filepath.Join(back, "named")) // missing: created
	e.run("sandbox", "cp", e.id+":/job/dir", back)                         // existing: inside it
	e.run("sandbox", "cp", e.id+":/job/dir/.", filepath.Join(back, "named"))
	for p, want := range map[string]string{
		"f.txt": "file", "g.txt": "file",
		"named/a.txt": "a", "named/sub/b.txt": "b",
		"dir/a.txt": "a", "dir/sub/b.txt": "b",
	} {
		if got := readLocal(t, filepath.Join(back, p)); got != want {
			t.Errorf("%s copied out: %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(back, "named", "dir")); err == nil {
		t.Error("dir/. into an existing directory made a nested dir/")
	}

	// '-': a tar stream on stdin and stdout.
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	tw.WriteHeader(&tar.Header{Name: "s.txt", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
	tw.Write([]byte("stdin"))
	tw.Close()
	root := newRootCmd()
	root.SetIn(&in)
	root.SetOut(io.Discard)
	root.SetArgs([]string{"sandbox", "cp", "-", e.id + ":/job/streamed"})
	if _, err := root.ExecuteContextC(context.Background()); err != nil {
		t.Fatalf("cp - ID:DEST: %v", err)
	}
	if got := e.remote("/job/streamed/s.txt"); got != "stdin" {
		t.Errorf("tar from stdin unpacked to %q", got)
	}
	out := e.run("sandbox", "cp", e.id+":/job/dir", "-")
	tr := tar.NewReader(strings.NewReader(out))
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	if strings.Join(names, ",") != "dir/,dir/a.txt,dir/sub/,dir/sub/b.txt" {
		t.Errorf("cp ID:DIR - wrote entries %v", names)
	}
}

// Errors name one cause with its own code: a local problem is not the
// daemon's.
func TestCopyErrors(t *testing.T) {
	e := newCPEnv(t)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"f.txt": "file", "dir/a.txt": "a"})
	e.run("sandbox", "cp", filepath.Join(local, "f.txt"), e.id+":/job/file")
	for _, tc := range []struct {
		name   string
		args   []string
		exit   int
		suffix string
	}{
		{"missing local source", []string{filepath.Join(local, "none"), e.id + ":/job/"}, exitAirlock, "[not_found]\n"},
		{"directory onto a file", []string{filepath.Join(local, "dir"), e.id + ":/job/file"}, exitAirlock, "[failed_precondition]\n"},
		{"file as a directory", []string{filepath.Join(local, "f.txt") + "/.", e.id + ":/job/"}, exitUsage, "[invalid_argument]\n"},
		{"missing remote source", []string{e.id + ":/job/none", local}, exitAirlock, "[not_found]\n"},
		{"remote directory onto a local file", []string{e.id + ":/job", filepath.Join(local, "f.txt")}, exitAirlock, "[failed_precondition]\n"},
		{"two local operands", []string{"a", "b"}, exitUsage, "Run 'airlock sandbox cp --help'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, e.env, append([]string{"sandbox", "cp"}, tc.args...)...)
			if code != tc.exit || !strings.HasSuffix(strings.TrimSpace(stderr)+"\n", strings.TrimSpace(tc.suffix)+"\n") && !strings.Contains(stderr, tc.suffix) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.exit, tc.suffix)
			}
			if strings.Count(stderr, "airlock:") != 1 || strings.Contains(stderr, "unavailable") {
				t.Errorf("stderr %q: want one airlock: prefix and no unavailable", stderr)
			}
		})
	}
}
