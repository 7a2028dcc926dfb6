package template

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/templates"
)

// TestShippedAlwaysOnPath: the shipped templates are found with no
// directory on the path and from a directory that has no ./templates.
func TestShippedAlwaysOnPath(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(PathEnv, "")
	p := DefaultSearchPath(nil)
	if len(p.Dirs()) != 0 {
		t.Fatalf("dirs = %v, want none (no flag, no env, no ./templates)", p.Dirs())
	}
	s, err := p.Load("base")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source() != "builtin:base.yaml" || !contains(s.Packages, "python3") {
		t.Fatalf("base: source %q packages %v, want the shipped spec", s.Source(), s.Packages)
	}
}

// TestShippedSpecsMatchTheRepo: the embedded specs are the repository's
// templates/*.yaml, byte for byte, and all of them parse and resolve.
func TestShippedSpecsMatchTheRepo(t *testing.T) {
	tool := filepath.Join(t.TempDir(), "airlock-docs")
	must(t, os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("AIRLOCK_DOCS", tool)
	files, err := filepath.Glob(filepath.Join("..", "..", "templates", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("glob: %v %v", files, err)
	}
	avail, err := NewSearchPath().List()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) != len(files) {
		t.Fatalf("%d shipped specs, %d in templates/", len(avail), len(files))
	}
	for _, a := range avail {
		disk, err := os.ReadFile(filepath.Join("..", "..", "templates", a.Name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		emb, err := fs.ReadFile(templates.Shipped, a.Name+".yaml")
		if err != nil || string(emb) != string(disk) || a.Source != "builtin:"+a.Name+".yaml" {
			t.Errorf("%s: the embedded spec (%s) differs from templates/%s.yaml: %v", a.Name, a.Source, a.Name, err)
		}
		if _, err := NewSearchPath().Load(a.Name); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
}

// TestSearchPathPrecedence: --template-path entries (colon-separated, in
// order) before $AIRLOCK_TEMPLATE_PATH before ./templates before the
// shipped specs; the first place with the name wins.
func TestSearchPathPrecedence(t *testing.T) {
	top := t.TempDir()
	mk := func(dir, name, warmup string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Join(top, dir), 0o755))
		writeSpec(t, filepath.Join(top, dir), name, "name: "+name+"\nwarmup: "+warmup+"\n")
	}
	mk("flag1", "a", "flag1")
	mk("flag2", "a", "flag2")
	mk("flag2", "b", "flag2")
	mk("env", "b", "env")
	mk("env", "c", "env")
	mk("templates", "c", "cwd")
	mk("templates", "base", "cwd")
	mk("templates", "d", "cwd")
	t.Chdir(top)
	t.Setenv(PathEnv, filepath.Join(top, "env")+":")
	p := DefaultSearchPath([]string{filepath.Join(top, "flag1") + ":" + filepath.Join(top, "flag2")})
	for name, want := range map[string]string{"a": "flag1", "b": "flag2", "c": "env", "d": "cwd", "base": "cwd"} {
		s, err := p.Find(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Warmup != want {
			t.Errorf("%s came from %s (%s), want %s", name, s.Warmup, s.Path, want)
		}
	}
	avail, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range avail {
		if a.Name == "a" || a.Name == "base" {
			got = append(got, filepath.Base(filepath.Dir(a.Source))+map[bool]string{true: "(shadowed)"}[a.Shadowed])
		}
	}
	// a: flag1, then flag2 shadowed; base: ./templates, then the shipped
	// one ("builtin:base.yaml", whose Dir is ".") shadowed.
	if want := "flag1 flag2(shadowed) templates .(shadowed)"; strings.Join(got, " ") != want {
		t.Errorf("List: %v, want %s", got, want)
	}
}

// TestFromAcrossDirs: `from:` resolves along the whole path, into another
// directory and into the shipped specs; a spec given by path finds its
// parent beside it first.
func TestFromAcrossDirs(t *testing.T) {
	top := t.TempDir()
	kids, parents, beside := filepath.Join(top, "kids"), filepath.Join(top, "parents"), filepath.Join(top, "beside")
	for _, d := range []string{kids, parents, beside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	writeSpec(t, kids, "kid", "name: kid\nfrom: mid\nenv:\n  K: kid\n")
	writeSpec(t, parents, "mid", "name: mid\nfrom: base\npackages: [jq]\n")
	p := NewSearchPath(kids, parents)
	s, err := p.Load("kid")
	if err != nil {
		t.Fatal(err)
	}
	if !contains(s.Packages, "jq") || !contains(s.Packages, "python3") || s.Env["K"] != "kid" || s.Env["LANG"] != "C.UTF-8" {
		t.Fatalf("kid resolved to packages %v env %v; want mid's jq and the shipped base's python3 and LANG", s.Packages, s.Env)
	}

	// By path: beside/base.yaml wins over the shipped base for beside/kid.yaml.
	writeSpec(t, beside, "base", "name: base\npackages: [file]\n")
	writeSpec(t, beside, "kid2", "name: kid2\nfrom: base\n")
	s, err = NewSearchPath().Load(filepath.Join(beside, "kid2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !contains(s.Packages, "file") || contains(s.Packages, "python3") {
		t.Fatalf("kid2's base: packages %v, want the one beside it", s.Packages)
	}

	// A directory template: DIR/NAME/template.yaml, found by name and by path.
	app := filepath.Join(top, "dirs", "app")
	must(t, os.MkdirAll(app, 0o755))
	must(t, os.WriteFile(filepath.Join(app, "template.yaml"), []byte("name: app\nfrom: sib\n"), 0o644))
	writeSpec(t, filepath.Join(top, "dirs"), "sib", "name: sib\nwarmup: sib\n")
	for _, arg := range []string{"app", app, app + "/template.yaml"} {
		s, err := NewSearchPath(filepath.Join(top, "dirs")).Load(arg)
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if s.Name != "app" || s.Warmup != "sib" {
			t.Errorf("%s: %s warmup %q", arg, s.Name, s.Warmup)
		}
	}
	// By path, the directory's parent is searched even when not on the path.
	if s, err := NewSearchPath().Load(app); err != nil || s.Warmup != "sib" {
		t.Errorf("app by path without the path: %v %v", s, err)
	}
}

// TestSearchPathNotFound: a name found nowhere is not_found and names
// every place searched; so is an unknown `from:`.
func TestSearchPathNotFound(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	p := NewSearchPath(a, b)
	_, err := p.Load("nosuch")
	if !errdefs.IsNotFound(err) {
		t.Fatalf("Load(nosuch) = %v, want not_found", err)
	}
	for _, w := range []string{`"nosuch"`, "nosuch.yaml", "nosuch/template.yaml", a, b, "built into airlock"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	writeSpec(t, b, "orphan", "name: orphan\nfrom: ghost\n")
	_, err = p.Load("orphan")
	if !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), "orphan.yaml:2: from:") || !strings.Contains(err.Error(), a) {
		t.Fatalf("unknown from: %v, want not_found at orphan.yaml:2 naming the path", err)
	}
	// Both layouts for one name in one directory is ambiguous.
	writeSpec(t, a, "twice", "name: twice\n")
	must(t, os.MkdirAll(filepath.Join(a, "twice"), 0o755))
	must(t, os.WriteFile(filepath.Join(a, "twice", "template.yaml"), []byte("name: twice\n"), 0o644))
	if _, err := p.Load("twice"); !errdefs.IsInvalidArgument(err) {
		t.Errorf("two layouts: %v, want invalid_argument", err)
	}
	// A file found by name must be named for it.
	writeSpec(t, b, "liar", "name: honest\n")
	if _, err := p.Load("liar"); !errdefs.IsInvalidArgument(err) {
		t.Errorf("misnamed spec: %v, want invalid_argument", err)
	}
}

// TestShippedSpecCannotCopyFiles: a spec built into airlock has no
// directory, so only airlock's own tools can be copied.
func TestShippedSpecCannotCopyFiles(t *testing.T) {
	_, err := parseShipped([]byte("name: x\nfiles:\n  - src: tool.sh\n    dst: /usr/bin/tool\n"), "builtin:x.yaml")
	if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "built into airlock") {
		t.Fatalf("shipped spec with a file: %v", err)
	}
	_, err = parseShipped([]byte("name: x\nimage: oci:relative/dir\n"), "builtin:x.yaml")
	if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "absolute path") {
		t.Fatalf("shipped spec with a relative image: %v", err)
	}
}
