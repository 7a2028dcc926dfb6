//go:build linux

package vm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
