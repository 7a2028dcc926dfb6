//go:build linux

package vm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/errdefs"
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
	assertUnchangeable(t, m)
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

// assertUnchangeable checks that no way of changing a sealed memfd's
// content or size is open, to anyone holding it.
func assertUnchangeable(t *testing.T, m *os.File) {
	t.Helper()
	if _, err := m.WriteAt([]byte("x"), 0); err == nil {
		t.Error("the sealed memfd took a write")
	}
	if err := unix.Fallocate(int(m.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 4096); err == nil {
		t.Error("the sealed memfd let a hole be punched")
	}
	if err := m.Truncate(4096); err == nil {
		t.Error("the sealed memfd shrank")
	}
	if shared, err := unix.Mmap(int(m.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		unix.Munmap(shared)
		t.Error("the sealed memfd took a shared writable mapping")
	}
	ro, err := unix.Mmap(int(m.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatalf("read-only shared mapping: %v", err)
	}
	defer unix.Munmap(ro)
	if err := unix.Mprotect(ro, unix.PROT_READ|unix.PROT_WRITE); err == nil {
		t.Error("a read-only shared mapping of the sealed memfd became writable")
	}
	// Reopening by path (as a VMM does through /proc/self/fd) gives a
	// file description the seals hold for too.
	re, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", m.Fd()), os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer re.Close()
	if _, err := re.WriteAt([]byte("x"), 0); err == nil {
		t.Error("the sealed memfd, reopened, took a write")
	}
	if _, err := unix.FcntlInt(m.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_EXEC); err == nil {
		t.Error("seals can still be added: F_SEAL_SEAL missing")
	}
}

// TestBaseVerified: the base is the file's bytes, sealed, and is kept for
// its path; a file whose identity is not the verified one is refused, as
// is a second call naming another sum; Close releases it.
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
	if b := h.bases[path]; b == nil || b.f != f {
		t.Fatal("the base is not kept for its path")
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("base differs from the file (%v)", err)
	}
	assertUnchangeable(t, f)
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

// TestChangedFileIsRefused: once a memory file is copied, a file at its
// path that is no longer the one copied (rewritten: new mtime and ctime)
// is refused by Base and BaseVerified alike, never silently copied again,
// until DropBase; a copy whose source is not the verified file fails and
// is not kept.
func TestChangedFileIsRefused(t *testing.T) {
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
	defer m.Close()
	other := id
	other.Ino++
	if err := fillVerified(m, path, other); err == nil {
		t.Fatal("a fill from a file with another identity worked")
	}
	h := &Host{bases: map[string]*base{}}
	defer h.closeBases()
	if _, _, err := h.Base(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a later mtime on coarse clocks
	if err := os.WriteFile(path, bytes.Repeat([]byte("y"), 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Base(path); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("Base of a rewritten file: %v, want a failed precondition", err)
	}
	newID, err := IdentityOf(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.BaseVerified(path, "sum", newID); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("BaseVerified of a rewritten file: %v, want a failed precondition", err)
	}
	h.DropBase(path)
	f, _, err := h.Base(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1)
	if _, err := f.ReadAt(got, 0); err != nil || got[0] != 'y' {
		t.Fatalf("the copy after DropBase is not the new file: %q (%v)", got, err)
	}
}
