package template

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// specDir makes a spec directory holding tool.sh and data/cfg.txt, and a
// file outside it (../secret) for escape attempts.
func specDir(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "templates")
	must(t, os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho hi\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "data", "cfg.txt"), []byte("x=1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(top, "secret"), []byte("shadow\n"), 0o600))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeSpec(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name+".yaml")
	must(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestLoadRejectsBadFields(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		setup func(t *testing.T, dir string)
		want  []string // substrings the error must contain (besides the file name)
	}{
		{name: "empty", body: "", want: []string{"empty spec"}},
		{name: "not a mapping", body: "- a\n- b\n", want: []string{"t.yaml:1:", "mapping"}},
		{name: "syntax", body: "name: a\npackages: [a\n", want: []string{"t.yaml"}},
		{name: "missing name", body: "packages: [curl]\n", want: []string{"name: is required"}},
		{name: "bad name", body: "name: Bad_Name\n", want: []string{"t.yaml:1: name:", `"Bad_Name"`}},
		{name: "name too long", body: "name: " + strings.Repeat("a", 64) + "\n", want: []string{"name:"}},
		{name: "unknown field", body: "name: a\npakages: [curl]\n", want: []string{"t.yaml:2: pakages:", `unknown field "pakages"`}},
		{name: "unknown nested field", body: "name: a\nfiles:\n  - src: tool.sh\n    dst: /x\n    owner: root\n", want: []string{"t.yaml:5: files[0].owner:", `unknown field "owner"`}},
		{name: "duplicate key", body: "name: a\nname: b\n", want: []string{"t.yaml:2", "already defined"}},
		{name: "two documents", body: "name: a\n---\nname: b\n", want: []string{"one YAML document"}},
		{name: "bad suite", body: "name: a\nsuite: sid\n", want: []string{"t.yaml:2: suite:", `"sid"`}},
		{name: "bad package", body: "name: a\npackages:\n  - curl\n  - python3\n  - Curl!\n", want: []string{`t.yaml:5: packages[2]: "Curl!" is not a valid Debian package name`}},
		{name: "one-letter package", body: "name: a\npackages: [c]\n", want: []string{"packages[0]"}},
		{name: "duplicate package", body: "name: a\npackages: [curl, curl]\n", want: []string{"packages[1]", "twice"}},
		{name: "packages not a list", body: "name: a\npackages: curl\n", want: []string{"t.yaml:2: packages:"}},
		{name: "memory too small", body: "name: a\nmemory_mib: 64\n", want: []string{"t.yaml:2: memory_mib: 64 is out of range"}},
		{name: "memory too big", body: "name: a\nmemory_mib: 9000\n", want: []string{"memory_mib:"}},
		{name: "memory zero", body: "name: a\nmemory_mib: 0\n", want: []string{"memory_mib:"}},
		{name: "memory not a number", body: "name: a\nmemory_mib: lots\n", want: []string{"t.yaml:2: memory_mib:", "lots"}},
		{name: "vcpus zero", body: "name: a\nvcpus: 0\n", want: []string{"vcpus:"}},
		{name: "vcpus nine", body: "name: a\nvcpus: 9\n", want: []string{"vcpus:"}},
		{name: "ttl zero", body: "name: a\ndefault_ttl_seconds: 0\n", want: []string{"default_ttl_seconds:"}},
		{name: "ttl over a day", body: "name: a\ndefault_ttl_seconds: 86401\n", want: []string{"default_ttl_seconds:"}},
		{name: "rootfs size tiny", body: "name: a\nrootfs_size_mib: 10\n", want: []string{"rootfs_size_mib:"}},
		{name: "mode not octal", body: "name: a\nfiles:\n  - src: tool.sh\n    dst: /x\n    mode: \"0999\"\n", want: []string{"t.yaml:5: files[0].mode:", `"0999"`}},
		{name: "mode words", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /x, mode: rwx}\n", want: []string{"files[0].mode:"}},
		{name: "mode too long", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /x, mode: \"12345\"}\n", want: []string{"files[0].mode:"}},
		{name: "dst relative", body: "name: a\nfiles:\n  - src: tool.sh\n    dst: usr/bin/tool\n", want: []string{"t.yaml:4: files[0].dst:", "absolute"}},
		{name: "dst not clean", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /usr/../etc/x}\n", want: []string{"files[0].dst:", "clean"}},
		{name: "dst trailing slash", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /usr/bin/}\n", want: []string{"files[0].dst:"}},
		{name: "dst root", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /}\n", want: []string{"files[0].dst:"}},
		{name: "dst in proc", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /proc/x}\n", want: []string{"files[0].dst:", "/proc"}},
		{name: "dst template.json", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /etc/airlock/template.json}\n", want: []string{"files[0].dst:"}},
		{name: "dst missing", body: "name: a\nfiles:\n  - {src: tool.sh}\n", want: []string{"files[0].dst: is required"}},
		{name: "dst twice", body: "name: a\nfiles:\n  - {src: tool.sh, dst: /x}\n  - {src: data/cfg.txt, dst: /x}\n", want: []string{"files[1].dst:", "files[0]"}},
		{name: "src missing", body: "name: a\nfiles:\n  - {dst: /x}\n", want: []string{"files[0].src: is required"}},
		{name: "src absent", body: "name: a\nfiles:\n  - {src: nope.sh, dst: /x}\n", want: []string{"files[0].src:", "does not exist"}},
		{name: "src absolute", body: "name: a\nfiles:\n  - {src: /etc/passwd, dst: /x}\n", want: []string{"files[0].src:", "relative"}},
		{name: "src dotdot", body: "name: a\nfiles:\n  - {src: ../secret, dst: /x}\n", want: []string{"t.yaml:3: files[0].src:", "escapes"}},
		{name: "src sneaky dotdot", body: "name: a\nfiles:\n  - {src: data/../../secret, dst: /x}\n", want: []string{"files[0].src:", "escapes"}},
		{
			name: "src symlink escape",
			body: "name: a\nfiles:\n  - {src: data/link, dst: /x}\n",
			setup: func(t *testing.T, dir string) {
				must(t, os.Symlink("../../secret", filepath.Join(dir, "data", "link")))
			},
			want: []string{"files[0].src:", "symlink"},
		},
		{
			name: "src symlinked dir escape",
			body: "name: a\nfiles:\n  - {src: up/secret, dst: /x}\n",
			setup: func(t *testing.T, dir string) {
				must(t, os.Symlink("..", filepath.Join(dir, "up")))
			},
			want: []string{"files[0].src:", "symlink"},
		},
		{name: "src directory", body: "name: a\nfiles:\n  - {src: data, dst: /x}\n", want: []string{"files[0].src:", "regular file"}},
		{name: "env bad key", body: "name: a\nenv:\n  1X: y\n", want: []string{"env.1X:"}},
		{name: "kernel arg with space", body: "name: a\nkernel_args: [\"quiet loglevel=3\"]\n", want: []string{"kernel_args[0]:"}},
		{name: "empty build step", body: "name: a\nbuild:\n  - echo ok\n  - \"  \"\n", want: []string{"t.yaml:4: build[1]: is empty"}},
		{name: "from bad name", body: "name: a\nfrom: Base!\n", want: []string{"from:"}},
		{name: "from self", body: "name: a\nfrom: a\n", want: []string{"from:", "itself"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := specDir(t)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			p := writeSpec(t, dir, "t", tc.body)
			s, err := Load(p)
			if err == nil {
				t.Fatalf("Load accepted a bad spec: %+v", s)
			}
			if !errdefs.IsInvalidArgument(err) {
				t.Errorf("error class = %v, want invalid_argument: %v", errdefs.Code(err), err)
			}
			msg := err.Error()
			t.Log(strings.ReplaceAll(msg, dir, "DIR"))
			if !strings.Contains(msg, p) {
				t.Errorf("error does not name the file %s: %v", p, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestParseAppliesDefaults(t *testing.T) {
	dir := specDir(t)
	s, err := Parse([]byte("name: tiny\nfiles:\n  - {src: tool.sh, dst: /usr/local/bin/tool}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Suite != "bookworm" || s.MemoryMiB != 256 || s.VCPUs != 1 || s.DefaultTTLSeconds != 300 || s.RootfsSizeMiB != 0 {
		t.Errorf("defaults not applied: %+v", s)
	}
	if s.Files[0].Mode != 0o644 {
		t.Errorf("default mode = %v, want 0644", s.Files[0].Mode)
	}
	if !s.Resolved() {
		t.Error("a spec without from should count as resolved")
	}
	if _, err := s.Hash(); err != nil {
		t.Errorf("Hash: %v", err)
	}
}

func TestParseAcceptsGoodFields(t *testing.T) {
	dir := specDir(t)
	must(t, os.Symlink("cfg.txt", filepath.Join(dir, "data", "inner-link")))
	must(t, os.Symlink("../tool.sh", filepath.Join(dir, "data", "inner-link2")))
	body := `name: full-0
suite: bookworm
packages: [curl, python3, libc6-dev, g++, libstdc++6]
files:
  - {src: tool.sh, dst: /usr/local/bin/tool, mode: "0755"}
  - {src: data/cfg.txt, dst: /etc/tool/cfg, mode: 0600}
  - {src: data/inner-link2, dst: /opt/t, mode: "4755"}
  - {src: ./data/../tool.sh, dst: /opt/t2, mode: "755"}
build:
  - echo one
  - echo two
warmup: tool --version
env: {A: "1", B_2: two}
memory_mib: 1024
vcpus: 2
kernel_args: [quiet, loglevel=3]
default_ttl_seconds: 60
rootfs_size_mib: 512
`
	s, err := Parse([]byte(body), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := []fs.FileMode{s.Files[0].Mode, s.Files[1].Mode, s.Files[2].Mode, s.Files[3].Mode}; !reflect.DeepEqual(got,
		[]fs.FileMode{0o755, 0o600, 0o755 | fs.ModeSetuid, 0o755}) {
		t.Errorf("modes = %v", got)
	}
	if s.MemoryMiB != 1024 || s.VCPUs != 2 || s.DefaultTTLSeconds != 60 || s.RootfsSizeMiB != 512 ||
		s.Warmup != "tool --version" || len(s.Build) != 2 || s.Env["B_2"] != "two" ||
		!reflect.DeepEqual(s.KernelArgs, []string{"quiet", "loglevel=3"}) || len(s.Packages) != 5 {
		t.Errorf("fields not read: %+v", s)
	}
	// A symlink that stays inside the spec directory is fine.
	if _, err := Parse([]byte("name: a\nfiles: [{src: data/inner-link, dst: /x}]\n"), dir); err != nil {
		t.Errorf("inner symlink rejected: %v", err)
	}
}

func TestResolve(t *testing.T) {
	dir := specDir(t)
	writeSpec(t, dir, "root", `name: root
packages: [curl]
files: [{src: tool.sh, dst: /usr/local/bin/tool, mode: "0755"}, {src: data/cfg.txt, dst: /etc/cfg}]
build: [echo root]
env: {A: root, B: root}
warmup: echo root-warm
memory_mib: 512
kernel_args: [quiet]
`)
	writeSpec(t, dir, "mid", "name: mid\nfrom: root\npackages: [python3, curl]\nbuild: [echo mid]\nenv: {B: mid}\nvcpus: 2\n")
	writeSpec(t, dir, "leaf", `name: leaf
from: mid
packages: [qpdf]
files: [{src: tool.sh, dst: /etc/cfg, mode: "0600"}, {src: data/cfg.txt, dst: /etc/leaf}]
build: [echo leaf]
warmup: echo leaf-warm
memory_mib: 1024
kernel_args: [loglevel=3]
`)
	s, err := LoadResolved(dir, "leaf")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Packages, []string{"curl", "python3", "qpdf"}) {
		t.Errorf("packages = %v", s.Packages)
	}
	if !reflect.DeepEqual(s.Build, []string{"echo root", "echo mid", "echo leaf"}) {
		t.Errorf("build = %v", s.Build)
	}
	var dsts []string
	for _, f := range s.Files {
		dsts = append(dsts, f.Dst+":"+f.Src+":"+f.Mode.String())
	}
	// The leaf's /etc/cfg replaces the root's in place.
	want := []string{"/usr/local/bin/tool:tool.sh:-rwxr-xr-x", "/etc/cfg:tool.sh:-rw-------", "/etc/leaf:data/cfg.txt:-rw-r--r--"}
	if !reflect.DeepEqual(dsts, want) {
		t.Errorf("files = %v, want %v", dsts, want)
	}
	if !reflect.DeepEqual(s.Env, map[string]string{"A": "root", "B": "mid"}) {
		t.Errorf("env = %v", s.Env)
	}
	if s.MemoryMiB != 1024 || s.VCPUs != 2 || s.Warmup != "echo leaf-warm" || s.DefaultTTLSeconds != 300 {
		t.Errorf("scalars: memory %d vcpus %d warmup %q ttl %d", s.MemoryMiB, s.VCPUs, s.Warmup, s.DefaultTTLSeconds)
	}
	if !reflect.DeepEqual(s.KernelArgs, []string{"quiet", "loglevel=3"}) {
		t.Errorf("kernel_args = %v", s.KernelArgs)
	}
	mid, err := LoadResolved(dir, "mid")
	if err != nil {
		t.Fatal(err)
	}
	if mid.Warmup != "echo root-warm" || mid.MemoryMiB != 512 {
		t.Errorf("mid did not inherit scalars: %+v", mid)
	}

	// Hash needs the flattened spec.
	raw, err := Load(filepath.Join(dir, "leaf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Hash(); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("Hash of an unresolved spec: %v, want failed_precondition", err)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		name  string
		specs map[string]string
		start string
		want  []string
		code  string // default invalid_argument
	}{
		{
			name:  "unknown parent",
			specs: map[string]string{"a": "name: a\nfrom: nosuch\n"},
			start: "a",
			want:  []string{"a.yaml:2: from:", `unknown template "nosuch"`},
			code:  "not_found",
		},
		{
			name:  "cycle of two",
			specs: map[string]string{"a": "name: a\nfrom: b\n", "b": "name: b\nfrom: a\n"},
			start: "a",
			want:  []string{"from:", "cycle", "a -> b -> a"},
		},
		{
			name:  "cycle of three",
			specs: map[string]string{"a": "name: a\nfrom: b\n", "b": "name: b\nfrom: c\n", "c": "name: c\nfrom: b\n"},
			start: "a",
			want:  []string{"from:", "cycle", "b -> c -> b"},
		},
		{
			name:  "name does not match file",
			specs: map[string]string{"a": "name: a\nfrom: b\n", "b": "name: bee\n"},
			start: "a",
			want:  []string{"b.yaml", "name:", "bee"},
		},
		{
			name:  "bad field in parent",
			specs: map[string]string{"a": "name: a\nfrom: b\n", "b": "name: b\nvcpus: 99\n"},
			start: "a",
			want:  []string{"b.yaml:2: vcpus:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := specDir(t)
			for n, body := range tc.specs {
				writeSpec(t, dir, n, body)
			}
			_, err := LoadResolved(dir, tc.start)
			if err == nil {
				t.Fatal("resolved a bad chain")
			}
			if want := map[bool]string{true: "invalid_argument", false: tc.code}[tc.code == ""]; errdefs.Code(err) != want {
				t.Errorf("class = %s, want %s: %v", errdefs.Code(err), want, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := LoadResolved(t.TempDir(), "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("missing spec file: %v, want not_found", err)
	}
}

func TestHash(t *testing.T) {
	dir := specDir(t)
	base := "name: h\npackages: [curl, python3]\nfiles:\n  - {src: tool.sh, dst: /usr/local/bin/tool, mode: \"0755\"}\nmemory_mib: 256\n"
	hashOf := func(body string) string {
		t.Helper()
		s, err := Parse([]byte(body), dir)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := hashOf(base)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("hash %q is not hex sha256", h)
	}
	if hashOf(base) != h {
		t.Error("hash is not stable")
	}
	// Same meaning, different text: same hash.
	same := []string{
		"# a comment\n" + base,
		strings.Replace(base, "[curl, python3]", "[python3, curl]", 1),
		strings.Replace(base, "memory_mib: 256\n", "", 1), // the default
		strings.Replace(base, `mode: "0755"`, "mode: 0755", 1),
	}
	for i, b := range same {
		if hashOf(b) != h {
			t.Errorf("equivalent spec %d changed the hash", i)
		}
	}
	differ := map[string]string{
		"package":  strings.Replace(base, "python3", "qpdf", 1),
		"mode":     strings.Replace(base, "0755", "0750", 1),
		"dst":      strings.Replace(base, "/usr/local/bin/tool", "/usr/bin/tool", 1),
		"memory":   strings.Replace(base, "256", "512", 1),
		"name":     strings.Replace(base, "name: h", "name: h2", 1),
		"build":    base + "build: [echo hi]\n",
		"warmup":   base + "warmup: echo hi\n",
		"env":      base + "env: {A: b}\n",
		"kernel":   base + "kernel_args: [quiet]\n",
		"ttl":      base + "default_ttl_seconds: 60\n",
		"rootfs":   base + "rootfs_size_mib: 999\n",
		"vcpus":    base + "vcpus: 2\n",
		"file src": strings.Replace(base, "tool.sh", "data/cfg.txt", 1),
	}
	seen := map[string]string{h: "base"}
	for what, b := range differ {
		got := hashOf(b)
		if prev, dup := seen[got]; dup {
			t.Errorf("changing %s gave the same hash as %s", what, prev)
		}
		seen[got] = what
	}

	// Editing a copied file's bytes changes the hash; restoring them restores it.
	must(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho bye\n"), 0o644))
	if hashOf(base) == h {
		t.Error("editing a copied file did not change the hash")
	}
	must(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\necho hi\n"), 0o644))
	if hashOf(base) != h {
		t.Error("restoring a copied file did not restore the hash")
	}
}

func TestHashFollowsParent(t *testing.T) {
	dir := specDir(t)
	writeSpec(t, dir, "p", "name: p\nfiles: [{src: tool.sh, dst: /t}]\n")
	writeSpec(t, dir, "c", "name: c\nfrom: p\n")
	hash := func() string {
		s, err := LoadResolved(dir, "c")
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h1 := hash()
	writeSpec(t, dir, "p", "name: p\nfiles: [{src: tool.sh, dst: /t}]\npackages: [curl]\n")
	h2 := hash()
	must(t, os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("changed"), 0o644))
	h3 := hash()
	if h1 == h2 || h2 == h3 {
		t.Errorf("child hash ignores its parent: %s %s %s", h1, h2, h3)
	}
}

// The templates shipped in the repository must load and resolve.
func TestShippedTemplates(t *testing.T) {
	dir := filepath.Join("..", "..", "templates")
	tool := filepath.Join(t.TempDir(), "airlock-docs")
	must(t, os.WriteFile(tool, []byte("a stand-in for the document tool"), 0o755))
	t.Setenv("AIRLOCK_DOCS", tool)
	docs := []string{"poppler-utils", "tesseract-ocr", "tesseract-ocr-eng",
		"tesseract-ocr-deu", "tesseract-ocr-fra", "tesseract-ocr-nld", "ghostscript", "qpdf"}
	want := map[string][]string{
		"base":             {"ca-certificates", "curl", "python3"},
		"docs-tools":       append([]string{"ca-certificates", "curl", "python3"}, docs...),
		"docs-base":        docs,
		"legal-doc-review": docs,
		"invoice-ocr":      docs,
		"pii-redact":       docs,
	}
	images := map[string]bool{}
	entries, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(entries) < len(want) {
		t.Fatalf("templates: %v %v", entries, err)
	}
	hashes := map[string]string{}
	for _, p := range entries {
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		s, err := LoadResolved(dir, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if w, ok := want[name]; ok && !reflect.DeepEqual(s.Packages, w) {
			t.Errorf("%s packages = %v, want %v", name, s.Packages, w)
		}
		if s.Warmup == "" && len(s.WarmupExec) == 0 {
			t.Errorf("%s has no warmup", name)
		}
		h, err := s.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := hashes[h]; dup {
			t.Errorf("%s and %s hash the same", name, other)
		}
		hashes[h] = name
		if _, isDocs := want[name]; isDocs && name != "base" && name != "docs-tools" {
			// The job templates are minimal roots: no shell to run anything
			// but their tools.
			if len(s.Keep) == 0 || s.Warmup != "" || len(s.Build) > 0 {
				t.Errorf("%s: keep %v, shell warmup %q, build %v; want a minimal root warmed by argv", name, s.Keep, s.Warmup, s.Build)
			}
			ih, err := s.ImageHash()
			if err != nil {
				t.Fatal(err)
			}
			images[ih] = true
			if len(s.Files) != 1 || s.Files[0].Dst != "/usr/local/bin/airlock-docs" {
				t.Errorf("%s files = %+v, want the document tool", name, s.Files)
			}
		}
	}
	if len(images) != 1 {
		t.Errorf("the document templates have %d root images, want one shared image", len(images))
	}
}

// TestToolFiles: files[].src "airlock:airlock-docs" copies airlock's own
// document tool (found through AIRLOCK_DOCS here), hashed like any file.
func TestToolFiles(t *testing.T) {
	dir := specDir(t)
	tool := filepath.Join(t.TempDir(), "airlock-docs")
	must(t, os.WriteFile(tool, []byte("tool v1"), 0o755))
	t.Setenv("AIRLOCK_DOCS", tool)
	body := "name: d\nfiles:\n  - {src: \"airlock:airlock-docs\", dst: /usr/local/bin/airlock-docs, mode: \"0755\"}\n"
	imageHash := func() string {
		t.Helper()
		s, err := Parse([]byte(body), dir)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.ImageHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h1 := imageHash()
	must(t, os.WriteFile(tool, []byte("tool v2"), 0o755))
	if imageHash() == h1 {
		t.Error("a changed tool did not change the image hash")
	}
	for _, tc := range []struct{ body, want string }{
		{strings.Replace(body, "airlock:airlock-docs", "airlock:rm", 1), `files[0].src: "airlock:rm": airlock has no tool "rm"`},
		{strings.Replace(body, "/usr/local/bin/airlock-docs", "/job/tool", 1), "files[0].dst"},
	} {
		if _, err := Parse([]byte(tc.body), dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
	t.Setenv("AIRLOCK_DOCS", filepath.Join(t.TempDir(), "missing"))
	if _, err := Parse([]byte(body), dir); err == nil || !strings.Contains(err.Error(), "files[0].src") {
		t.Errorf("Parse with the tool missing = %v, want an error naming files[0].src", err)
	}
}

func TestEventString(t *testing.T) {
	cases := map[string]Event{
		"rootfs: step 2/6: bootstrap":                       {Stage: "rootfs", Step: 2, Steps: 6, Name: "bootstrap"},
		"rootfs: step 2/6: bootstrap: downloading packages": {Stage: "rootfs", Step: 2, Steps: 6, Name: "bootstrap", Detail: "downloading packages"},
		"rootfs: built x":                                   {Stage: "rootfs", Detail: "built x"},
	}
	for want, ev := range cases {
		if got := ev.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestConsolePlainWhenNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewConsole(f)
	st := newSteps(c.Progress, "rootfs", "one", "two")
	st.next("one")
	st.detail("I: %s", "phase")
	st.next("two")
	c.Progress("a plain %s", "message")
	st.done("built")
	c.Close()
	c.Progress("after close")
	f.Close()
	got, _ := os.ReadFile(f.Name())
	want := "rootfs: step 1/2: one\nrootfs: step 1/2: one: I: phase\nrootfs: step 2/2: two\na plain message\nrootfs: built\nafter close\n"
	if string(got) != want {
		t.Errorf("console wrote\n%s\nwant\n%s", got, want)
	}
}

func TestStepsOutOfOrderPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a step out of order did not panic")
		}
	}()
	st := newSteps(nil, "x", "a", "b")
	st.next("b")
}
