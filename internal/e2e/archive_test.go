package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/store"
)

// TestArchive: directories go into a real guest and come back as they
// were (nested directories, a symlink, modes, times), hostile streams are
// refused with stable codes and write nothing outside, a full guest disk
// is resource_exhausted, and `sandbox cp` follows its table.
func TestArchive(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	c := d.client(t, tenantA)
	tag := uniq("archive")
	sbx := createSandbox(t, c, 600, map[string]string{"archive": tag})
	t.Run("RoundTrip", func(t *testing.T) { testArchiveRoundTrip(t, sbx) })
	t.Run("Hostile", func(t *testing.T) { testArchiveHostile(t, d, sbx) })
	t.Run("FullDisk", func(t *testing.T) { testArchiveFullDisk(t, sbx) })
	t.Run("CLI", func(t *testing.T) { testArchiveCLI(t, d, sbx) })

	recs, err := c.Audit(ctx(t), client.AuditFilter{SandboxID: sbx.ID})
	if err != nil {
		t.Fatal(err)
	}
	var writes, reads int
	for _, r := range recs {
		switch r.Event {
		case store.EventArchiveWrite:
			writes++
			if r.Outcome == "ok" && (r.Detail["entries"] == "" || len(r.Detail["path_hmac"]) != 32) {
				t.Errorf("archive_write record without its counts: %+v", r)
			}
		case store.EventArchiveRead:
			reads++
		}
		for k, v := range r.Detail {
			if strings.Contains(v, "/job") || strings.Contains(v, "run.sh") {
				t.Errorf("%s record detail %s=%q names a path", r.Event, k, v)
			}
		}
	}
	if writes == 0 || reads == 0 {
		t.Errorf("audit has %d archive_write and %d archive_read records, want some of each", writes, reads)
	}
}

// localTree makes the tree the round trip carries.
func localTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755))
	must(os.Mkdir(filepath.Join(dir, "private"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "run.sh"), []byte("#!/bin/sh\necho ran\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "c", "data.bin"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 300<<10), 0o640))
	must(os.WriteFile(filepath.Join(dir, "private", "key"), []byte("k"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	must(os.Symlink("a/b/run.sh", filepath.Join(dir, "run")))
	old := time.Unix(1_650_000_000, 0)
	for _, p := range []string{"a/b/run.sh", "a/b/c/data.bin", "private/key", "empty", "a/b/c", "a/b", "a", "private"} {
		must(os.Chtimes(filepath.Join(dir, p), old, old))
	}
	return dir
}

// describeTree lists a tree: type and mode, content or link target, and
// the modification time of everything but links.
func describeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			s += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			s += " " + checksum(b) + " " + fi.ModTime().UTC().Format(time.RFC3339)
		default:
			s += " " + fi.ModTime().UTC().Format(time.RFC3339)
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func testArchiveRoundTrip(t *testing.T, sbx *client.Sandbox) {
	src := localTree(t)
	res, err := sbx.Files().UploadDir(ctx(t), src, "/job/tree")
	if err != nil {
		t.Fatalf("UploadDir: %v", err)
	}
	if res.Entries != 9 || res.Bytes != int64(len("#!/bin/sh\necho ran\n")+1+4*300<<10) {
		t.Errorf("UploadDir wrote %+v", res)
	}
	// The guest sees the modes and runs the script through the link.
	if out := mustExec(t, sbx, "cd /job/tree && stat -c '%A %n' private private/key a/b/run.sh && ./run"); out != "drwx------ private\n-rw------- private/key\n-rwxr-xr-x a/b/run.sh\nran\n" {
		t.Errorf("in the guest: %q", out)
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := sbx.Files().DownloadDir(ctx(t), "/job/tree", back); err != nil {
		t.Fatalf("DownloadDir: %v", err)
	}
	want, got := describeTree(t, src), describeTree(t, back)
	if len(want) != len(got) {
		t.Errorf("downloaded %d entries, uploaded %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s came back as %q, went up as %q", k, got[k], w)
		}
	}
}

// hostileTar is a stream a test writes by hand.
func hostileTar(t *testing.T, hdrs ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		h.Mode = 0o644
		body := []byte(nil)
		if h.Typeflag == tar.TypeReg {
			body = []byte("escaped")
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	return buf.Bytes()
}

func testArchiveHostile(t *testing.T, d *daemon, sbx *client.Sandbox) {
	mustExec(t, sbx, "mkdir -p /job/h && ln -sfn /etc /job/h/etc-link")
	route := "/v1/sandboxes/" + sbx.ID + "/archive?path=/job/h"
	for _, tc := range []struct {
		name string
		tar  []byte
		code string
	}{
		{"dot-dot", hostileTar(t, tar.Header{Name: "../../etc/airlock-escape", Typeflag: tar.TypeReg}), "invalid_argument"},
		{"absolute", hostileTar(t, tar.Header{Name: "/etc/airlock-escape", Typeflag: tar.TypeReg}), "invalid_argument"},
		{"link out then through it", hostileTar(t,
			tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../../etc"},
			tar.Header{Name: "l/airlock-escape", Typeflag: tar.TypeReg}), "invalid_argument"},
		{"through a link already there", hostileTar(t, tar.Header{Name: "etc-link/airlock-escape", Typeflag: tar.TypeReg}), "invalid_argument"},
		{"hard link out", hostileTar(t, tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}), "invalid_argument"},
		{"device", hostileTar(t, tar.Header{Name: "mem", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 1}), "invalid_argument"},
		{"truncated", hostileTar(t, tar.Header{Name: "x", Typeflag: tar.TypeReg})[:515], "invalid_argument"},
		{"a header claiming a terabyte", func() []byte {
			var buf bytes.Buffer
			tar.NewWriter(&buf).WriteHeader(&tar.Header{Name: "bomb", Mode: 0o644, Size: 1 << 40, Typeflag: tar.TypeReg})
			return buf.Bytes()
		}(), "resource_exhausted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := d.do(t, tenantA, "PUT", route, bytes.NewReader(tc.tar))
			if r.errCode() != tc.code {
				t.Errorf("PUT archive: %s, want %s", r, tc.code)
			}
		})
	}
	if out := mustExec(t, sbx, "ls /etc/airlock-escape /job/airlock-escape /job/h/bomb /job/h/mem 2>/dev/null; ls /job/h"); out != "etc-link\n" {
		t.Errorf("after the hostile uploads: %q, want only the link that was there", out)
	}
	if mode := mustExec(t, sbx, "stat -c %a /etc/passwd"); mode != "644\n" {
		t.Errorf("/etc/passwd mode %q", mode)
	}
	// Reads: missing paths and / are JSON errors.
	for p, code := range map[string]string{"/job/none": "not_found", "/": "invalid_argument", "/proc/self": "invalid_argument"} {
		if r := d.do(t, tenantA, "GET", "/v1/sandboxes/"+sbx.ID+"/archive?path="+p, nil); r.errCode() != code {
			t.Errorf("GET archive %s: %s, want %s", p, r, code)
		}
	}
}

// A guest filesystem that fills up ends the unpacking with
// resource_exhausted, and the guest goes on.
func testArchiveFullDisk(t *testing.T, sbx *client.Sandbox) {
	res, err := sbx.Exec(ctx(t), "mkdir -p /job/small && mount -t tmpfs -o size=1m tmpfs /job/small")
	if err != nil || res.ExitCode != 0 {
		t.Skipf("cannot mount a small tmpfs in the guest: %v %+v", err, res)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "big", Mode: 0o644, Size: 2 << 20, Typeflag: tar.TypeReg})
	tw.Write(make([]byte, 2<<20))
	tw.Close()
	_, err = sbx.Files().WriteArchive(ctx(t), "/job/small", &buf)
	if !errors.Is(err, client.ErrResourceExhausted) || !strings.Contains(err.Error(), "no space") {
		t.Errorf("unpacking onto a full disk: %v, want resource_exhausted naming the full disk", err)
	}
	mustExec(t, sbx, "umount /job/small && echo still-here")
}

func testArchiveCLI(t *testing.T, d *daemon, sbx *client.Sandbox) {
	run := func(args ...string) {
		t.Helper()
		if _, stderr, code := d.cli(t, tenantA, append([]string{"sandbox", "cp"}, args...)...); code != 0 {
			t.Fatalf("airlock sandbox cp %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	local := t.TempDir()
	os.MkdirAll(filepath.Join(local, "proj", "src"), 0o755)
	os.WriteFile(filepath.Join(local, "proj", "src", "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(local, "notes.txt"), []byte("notes\n"), 0o600)
	id := sbx.ID
	mustExec(t, sbx, "mkdir -p /job/cli")
	run(filepath.Join(local, "notes.txt"), id+":/job/cli/")       // a file into a directory, trailing slash
	run(filepath.Join(local, "proj"), id+":/job/cli/renamed")     // a directory to a new name
	run(filepath.Join(local, "proj"), id+":/job/cli")             // into an existing directory
	run(filepath.Join(local, "proj")+"/.", id+":/job/cli/merged") // the contents
	want := "/job/cli/merged/src/main.go\n/job/cli/notes.txt\n/job/cli/proj/src/main.go\n/job/cli/renamed/src/main.go\n"
	if out := mustExec(t, sbx, "ls /job/cli/notes.txt /job/cli/renamed/src/main.go /job/cli/proj/src/main.go /job/cli/merged/src/main.go"); out != want {
		t.Errorf("in the guest: %q, want %q", out, want)
	}
	back := t.TempDir()
	run(id+":/job/cli/proj", filepath.Join(back, "out")) // a directory out, to a new name
	run(id+":/job/cli/notes.txt", back+"/")
	if b, err := os.ReadFile(filepath.Join(back, "out", "src", "main.go")); err != nil || string(b) != "package main\n" {
		t.Errorf("directory copied out: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(back, "notes.txt")); err != nil || fi.Size() != 6 {
		t.Errorf("file copied out into a directory: %v, %v", fi, err)
	}
	// A local problem is a local error, once prefixed.
	_, stderr, code := d.cli(t, tenantA, "sandbox", "cp", filepath.Join(local, "missing"), id+":/job/")
	if code != 125 || !strings.HasSuffix(stderr, "[not_found]\n") || strings.Count(stderr, "airlock:") != 1 {
		t.Errorf("cp of a missing local file: exit %d, %q", code, stderr)
	}
}
