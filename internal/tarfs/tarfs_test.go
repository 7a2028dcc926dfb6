package tarfs

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// entry is one tar entry a test writes.
type entry struct {
	name, link, body string
	typ              byte
	mode             int64
	size             int64 // declared size when no body is written (a bomb)
}

func archive(t *testing.T, ents ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.body)),
			ModTime: time.Unix(1_700_000_000, 0)}
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		if hdr.Typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if e.size > 0 {
			hdr.Size = e.size
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes() // the header alone: the body never comes
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sandboxDirs returns a directory to extract into and a sibling that must
// stay empty.
func sandboxDirs(t *testing.T) (dest, outside string) {
	base := t.TempDir()
	dest, outside = filepath.Join(base, "dest"), filepath.Join(base, "outside")
	for _, d := range []string{dest, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dest, outside
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Errorf("%s after the extraction: %v %v, want it empty", dir, ents, err)
	}
}

func TestExtractRefusesEscapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		ents []entry
		code string
	}{
		{"absolute name", []entry{{name: "/OUT/x", body: "x"}}, "invalid_argument"},
		{"dot-dot name", []entry{{name: "../outside/x", body: "x"}}, "invalid_argument"},
		{"dot-dot inside a name", []entry{{name: "a/../../outside/x", body: "x"}}, "invalid_argument"},
		{"absolute symlink", []entry{{name: "l", typ: tar.TypeSymlink, link: "/etc"}}, "invalid_argument"},
		{"symlink climbing out", []entry{{name: "d/l", typ: tar.TypeSymlink, link: "../../outside"}}, "invalid_argument"},
		{"symlink through a link then up", []entry{
			{name: "d/l1", typ: tar.TypeSymlink, link: "."},
			{name: "d/l2", typ: tar.TypeSymlink, link: "l1/../../outside"}}, "invalid_argument"},
		{"write through an inside symlink", []entry{
			{name: "sub/", typ: tar.TypeDir, mode: 0o755},
			{name: "l", typ: tar.TypeSymlink, link: "sub"},
			{name: "l/x", body: "x"}}, "invalid_argument"},
		{"hard link out", []entry{{name: "h", typ: tar.TypeLink, link: "../outside/secret"}}, "invalid_argument"},
		{"hard link absolute", []entry{{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}}, "invalid_argument"},
		{"hard link to a directory", []entry{{name: "d/", typ: tar.TypeDir, mode: 0o755}, {name: "h", typ: tar.TypeLink, link: "d"}}, "invalid_argument"},
		{"character device", []entry{{name: "null", typ: tar.TypeChar}}, "invalid_argument"},
		{"block device", []entry{{name: "sda", typ: tar.TypeBlock}}, "invalid_argument"},
		{"fifo", []entry{{name: "p", typ: tar.TypeFifo}}, "invalid_argument"},
		{"long name element", []entry{{name: strings.Repeat("n", 300), body: "x"}}, "invalid_argument"},
		{"long name", []entry{{name: strings.Repeat("d/", 2100) + "x", body: "x"}}, "invalid_argument"},
		{"file over the directory", []entry{{name: ".", body: "x"}}, "invalid_argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, outside := sandboxDirs(t)
			_, err := Extract(bytes.NewReader(archive(t, tc.ents...)), dest, Options{})
			if errdefs.Code(err) != tc.code {
				t.Fatalf("Extract: %v (%s), want %s", err, errdefs.Code(err), tc.code)
			}
			assertEmpty(t, outside)
		})
	}
}

func TestExtractNeverWritesThroughExistingLinks(t *testing.T) {
	dest, outside := sandboxDirs(t)
	secret := filepath.Join(filepath.Dir(outside), "secret")
	if err := os.WriteFile(secret, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link already in the directory, pointing out, as a parent: refused.
	if err := os.Symlink(outside, filepath.Join(dest, "out")); err != nil {
		t.Fatal(err)
	}
	_, err := Extract(bytes.NewReader(archive(t, entry{name: "out/x", body: "x"})), dest, Options{})
	if !errdefs.IsInvalidArgument(err) {
		t.Fatalf("write under an existing link out: %v, want invalid_argument", err)
	}
	assertEmpty(t, outside)
	// The same as the entry itself: replaced by a new file, not written through.
	if err := os.Symlink(secret, filepath.Join(dest, "s")); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(bytes.NewReader(archive(t, entry{name: "s", body: "new"})), dest, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "keep" {
		t.Errorf("the file the link pointed to now holds %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dest, "s")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("s after the extraction: %v %v, want a regular file", fi, err)
	}
}

func TestExtractLimits(t *testing.T) {
	mib := strings.Repeat("m", 1<<20)
	for _, tc := range []struct {
		name string
		lim  Limits
		ents []entry
	}{
		{"a header claiming a terabyte", Limits{}, []entry{{name: "bomb", size: 1 << 40}}},
		{"one file over the per-file limit", Limits{MaxEntrySize: 1 << 20}, []entry{{name: "big", body: mib + "x"}}},
		{"files over the total", Limits{MaxBytes: 3 << 20}, []entry{{name: "1", body: mib}, {name: "2", body: mib}, {name: "3", body: mib}, {name: "4", body: mib}}},
		{"too many entries", Limits{MaxEntries: 10}, func() []entry {
			var es []entry
			for i := range 11 {
				es = append(es, entry{name: "d" + strings.Repeat("x", i) + "/", typ: tar.TypeDir, mode: 0o755})
			}
			return es
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest, _ := sandboxDirs(t)
			st, err := Extract(bytes.NewReader(archive(t, tc.ents...)), dest, Options{Limits: tc.lim})
			if !errors.Is(err, errdefs.ErrResourceExhausted) {
				t.Fatalf("Extract: %v, want resource_exhausted", err)
			}
			lim := tc.lim.withDefaults()
			if st.Bytes > lim.MaxBytes || st.Entries > lim.MaxEntries {
				t.Errorf("wrote %+v past the limits %+v", st, lim)
			}
			if _, err := os.Stat(filepath.Join(dest, "bomb")); err == nil {
				t.Error("the bomb's file was created")
			}
		})
	}
}

func TestExtractTruncatedIsInvalid(t *testing.T) {
	dest, _ := sandboxDirs(t)
	b := archive(t, entry{name: "a", body: strings.Repeat("a", 4096)})
	if _, err := Extract(bytes.NewReader(b[:1500]), dest, Options{}); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("truncated archive: %v, want invalid_argument", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "a")); err == nil {
		t.Error("the truncated entry's partial file stayed")
	}
}

func TestExtractModes(t *testing.T) {
	dest, _ := sandboxDirs(t)
	_, err := Extract(bytes.NewReader(archive(t,
		entry{name: "suid", body: "#!", mode: 0o4755},
		entry{name: "ro/", typ: tar.TypeDir, mode: 0o555},
		entry{name: "ro/f", body: "f", mode: 0o640},
		entry{name: "ro/h", typ: tar.TypeLink, link: "ro/f"},
	)), dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"suid": 0o755, "ro": fs.ModeDir | 0o555, "ro/f": 0o640, "ro/h": 0o640} {
		fi, err := os.Lstat(filepath.Join(dest, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", name, fi.Mode(), err, want)
		}
	}
	os.Chmod(filepath.Join(dest, "ro"), 0o755) // for TempDir's cleanup
}

// TestExtractUmask: what a guest sends as world-writable is not kept so
// on the user's machine; the umask applies as docker cp applies it.
func TestExtractUmask(t *testing.T) {
	dest, _ := sandboxDirs(t)
	_, err := Extract(bytes.NewReader(archive(t,
		entry{name: "d/", typ: tar.TypeDir, mode: 0o777},
		entry{name: "d/all", body: "x", mode: 0o777},
		entry{name: "d/rw", body: "x", mode: 0o666},
	)), dest, Options{Umask: 0o027})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"d": fs.ModeDir | 0o750, "d/all": 0o750, "d/rw": 0o640} {
		fi, err := os.Lstat(filepath.Join(dest, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", name, fi.Mode(), err, want)
		}
	}
}

// TestProcessUmask reads the umask the kernel reports for this process.
func TestProcessUmask(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	old := syscall.Umask(0o037)
	defer syscall.Umask(old)
	if got := ProcessUmask(); got != 0o037 {
		t.Fatalf("ProcessUmask() = %o, want 037", got)
	}
}

// tree builds a directory with nested dirs, modes, a link and times.
func tree(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "secret"), []byte("s"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	must(os.Symlink("a/b/run.sh", filepath.Join(dir, "link")))
	must(os.Symlink("/etc", filepath.Join(dir, "etc-link")))
	old := time.Unix(1_600_000_000, 0)
	for _, p := range []string{"a/b/run.sh", "a/secret", "empty", "a/b", "a"} {
		must(os.Chtimes(filepath.Join(dir, p), old, old))
	}
}

// describe lists a tree: type, mode, content or target, and mtime.
func describe(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
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
			s += " " + string(b) + " " + fi.ModTime().UTC().String()
		default:
			s += " " + fi.ModTime().UTC().String()
		}
		out[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPackExtractRoundTrip(t *testing.T) {
	src := t.TempDir()
	tree(t, src)
	for _, prefix := range []string{"", "top"} {
		var buf bytes.Buffer
		st, err := Pack(&buf, src, PackOptions{Prefix: prefix, MaxBytes: 1 << 20})
		if err != nil || st.Bytes != int64(buf.Len()) {
			t.Fatalf("Pack: %+v, %v (stream %d bytes)", st, err, buf.Len())
		}
		dest := t.TempDir()
		if _, err := Extract(&buf, dest, Options{StripTop: prefix}); err == nil {
			t.Fatalf("prefix %q: the absolute link to /etc was accepted", prefix)
		}
		// Without that link, everything comes back as it was.
		os.Remove(filepath.Join(src, "etc-link"))
		buf.Reset()
		if _, err := Pack(&buf, src, PackOptions{Prefix: prefix}); err != nil {
			t.Fatal(err)
		}
		dest = t.TempDir()
		got, err := Extract(&buf, dest, Options{StripTop: prefix})
		if err != nil {
			t.Fatal(err)
		}
		if got.Entries != 6 || got.Bytes != int64(len("#!/bin/sh\necho hi\n")+1) {
			t.Errorf("prefix %q: extracted %+v, want 6 entries and 19 bytes", prefix, got)
		}
		if w, g := describe(t, src), describe(t, dest); !equal(w, g) {
			t.Errorf("prefix %q: round trip differs:\n got %v\nwant %v", prefix, g, w)
		}
		if err := os.Symlink("/etc", filepath.Join(src, "etc-link")); err != nil {
			t.Fatal(err)
		}
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestPackStoresLinksUnfollowed(t *testing.T) {
	src := t.TempDir()
	if err := os.Symlink("/", filepath.Join(src, "root")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Pack(&buf, src, PackOptions{Prefix: "x"}); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&buf)
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name+" "+hdr.Linkname)
	}
	if strings.Join(names, ",") != "x/ ,x/root /" {
		t.Errorf("packed %q, want the directory and the link alone", names)
	}
}

func TestPackLimit(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{src, filepath.Join(src, "f")} {
		var buf bytes.Buffer
		_, err := Pack(&buf, p, PackOptions{MaxBytes: 32 << 10})
		if !errors.Is(err, errdefs.ErrResourceExhausted) || buf.Len() != 0 {
			t.Errorf("Pack %s over the limit: %v, %d bytes written; want resource_exhausted before any byte", p, err, buf.Len())
		}
	}
	var buf bytes.Buffer
	st, err := Pack(&buf, filepath.Join(src, "f"), PackOptions{})
	if err != nil || st.Entries != 1 {
		t.Fatalf("Pack one file: %+v %v", st, err)
	}
	hdr, err := tar.NewReader(&buf).Next()
	if err != nil || hdr.Name != "f" || hdr.Size != 64<<10 {
		t.Errorf("one file packs as %+v (%v)", hdr, err)
	}
}
