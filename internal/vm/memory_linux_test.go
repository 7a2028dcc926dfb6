//go:build linux

package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealedCopy: a sparse file's sealed copy has the same bytes and
// hash (holes as zeros), and nobody can write it, grow it, shrink it or
// map it shared-writable; a private mapping (a clone's) can be written
// without reaching the copy.
func TestSealedCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	f.Truncate(size)
	f.WriteAt(bytes.Repeat([]byte("guest"), 1000), 1<<20)
	f.WriteAt([]byte("tail"), size-4)
	f.Close()
	want, _ := os.ReadFile(path)
	wantSum := sha256.Sum256(want)

	m, sum, err := SealedCopy(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if sum != hex.EncodeToString(wantSum[:]) {
		t.Errorf("sum %s, want %x", sum, wantSum)
	}
	got := make([]byte, size)
	if _, err := m.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("copy differs from the file (%v)", err)
	}
	if _, err := m.WriteAt([]byte("x"), 0); err == nil {
		t.Error("a sealed copy took a write")
	}
	if err := m.Truncate(size * 2); err == nil {
		t.Error("a sealed copy grew")
	}
	if b, err := unix.Mmap(int(m.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		unix.Munmap(b)
		t.Error("a sealed copy mapped shared and writable")
	}
	b, err := unix.Mmap(int(m.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("private mapping: %v", err)
	}
	copy(b[1<<20:], "CLONE")
	unix.Munmap(b)
	if _, err := m.ReadAt(got[:5], 1<<20); err != nil || string(got[:5]) != "guest" {
		t.Errorf("a private write reached the copy: %q", got[:5])
	}
}

// TestBaseFilledBehindAPrivateMapping: what BaseVerified relies on to
// start VMMs before their base is filled. A private mapping of a memfd
// made while it is still empty (a VMM started on it) sees what is copied
// in afterwards, up to the pages the mapping itself writes; and the copy
// can be sealed with that mapping in place.
func TestBaseFilledBehindAPrivateMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	const size = 4 << 20
	want := bytes.Repeat([]byte("template"), size/8)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewMemory("test", size)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, err := unix.Mmap(int(m.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	_ = b[size/2] // a page read (faulted in) before the fill
	copy(b[size-8:], "OWNWRITE")
	id, err := IdentityOf(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fillVerified(m, path, id); err != nil {
		t.Fatalf("fill: %v", err)
	}
	if !bytes.Equal(b[:size-4096], want[:size-4096]) {
		t.Error("a mapping made before the fill does not see it")
	}
	if string(b[size-8:]) != "OWNWRITE" {
		t.Errorf("the mapping's own write was lost: %q", b[size-8:])
	}
	if _, err := m.WriteAt([]byte("x"), 0); err == nil {
		t.Error("the filled base took a write: not sealed")
	}
}

// TestBaseVerified: the base is handed out at once and is the file's
// bytes, sealed, once ready; a file whose identity is not the verified
// one is refused; Close waits for a fill in progress.
func TestBaseVerified(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	want := bytes.Repeat([]byte("verified"), 1<<18)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := IdentityOf(path)
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{bases: map[string]*base{}}
	stale := id
	stale.Mtime.Nsec++
	if _, err := h.BaseVerified(path, "sum", stale); err == nil {
		t.Fatal("a file with another identity than the verified one was taken")
	}
	f, err := h.BaseVerified(path, "sum", id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.base(path)
	if err != nil || b.f != f {
		t.Fatalf("base for the path: %v", err)
	}
	if err := b.wait(context.Background()); err != nil {
		t.Fatalf("fill: %v", err)
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("base differs from the file (%v)", err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Error("a filled base took a write: not sealed")
	}
	if f2, err := h.BaseVerified(path, "sum", id); err != nil || f2 != f {
		t.Errorf("a second BaseVerified made a new copy (%v)", err)
	}
	if _, err := h.BaseVerified(path, "other", id); err == nil {
		t.Error("a base verified as another sum was handed out")
	}
	h.DropBase(path)
	if _, err := h.BaseVerified(path, "sum", id); err != nil {
		t.Fatal(err)
	}
	h.closeBases()
	if len(h.bases) != 0 {
		t.Errorf("Close left %d bases", len(h.bases))
	}
}

// TestPunchZeroPages: zero pages become holes, everything else stays,
// and the file reads (and hashes) the same.
func TestPunchZeroPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	const page = 4096
	content := make([]byte, 64*page)
	copy(content[3*page:], "data")                           // page 3 has data
	content[10*page+page-1] = 1                              // page 10: its last byte
	copy(content[40*page:], bytes.Repeat([]byte{7}, 5*page)) // pages 40-44
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	punched, err := PunchZeroPages(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(64-1-1-5) * page; punched != want {
		t.Errorf("punched %d bytes, want %d", punched, want)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the file reads differently after punching (%v)", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 > 7*page+page { // allow one block of slack for metadata-less filesystems
		t.Errorf("%d bytes still allocated, want about %d", st.Blocks*512, 7*page)
	}
	if again, err := PunchZeroPages(path); err != nil || again != 0 {
		t.Errorf("second punch: %d bytes (%v), want 0", again, err)
	}
}

// TestFailedBaseIsReplaced: a fill that fails (the file is not the one
// verified) is reported to whoever waits on the base, and the next
// BaseVerified or Base makes a fresh copy instead of handing it out.
func TestFailedBaseIsReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := IdentityOf(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMemory("test", id.Size)
	if err != nil {
		t.Fatal(err)
	}
	other := id
	other.Ino++
	if err := fillVerified(m, path, other); err == nil {
		t.Fatal("a fill from a file with another identity worked")
	}
	h := &Host{bases: map[string]*base{}}
	defer h.closeBases()
	failed := &base{f: m, sum: "sum", id: id, ready: make(chan struct{}), err: errors.New("fill failed")}
	close(failed.ready)
	h.bases[path] = failed
	if err := failed.wait(context.Background()); err == nil {
		t.Fatal("waiting on a failed base reported no error")
	}
	f, err := h.BaseVerified(path, "sum", id)
	if err != nil {
		t.Fatal(err)
	}
	if f == m {
		t.Fatal("a failed base was handed out again")
	}
	b, err := h.base(path)
	if err != nil || b == failed {
		t.Fatalf("base after a failed fill: %v", err)
	}
	if err := b.wait(context.Background()); err != nil {
		t.Fatalf("the fresh copy: %v", err)
	}
}
