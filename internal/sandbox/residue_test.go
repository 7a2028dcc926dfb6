package sandbox_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// guestRAMHas reports whether the guest RAM of the VMM with this pid
// holds needle, read from the host through /proc/PID/mem over the VMM's
// guest-RAM mapping (a memfd), so the search itself puts nothing into the
// guest.
func guestRAMHas(t *testing.T, pid int, needle []byte) bool {
	t.Helper()
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer maps.Close()
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	found, ram := false, 0
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "/memfd:airlock-") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		ram++
		if readHas(io.NewSectionReader(mem, int64(start), int64(end-start)), needle) {
			found = true
		}
	}
	if ram == 0 {
		t.Fatalf("no guest RAM mapping in /proc/%d/maps", pid)
	}
	return found
}

// readHas scans r for needle, a chunk at a time, keeping the last
// len(needle)-1 bytes of each chunk so a match across chunks is found.
func readHas(r io.Reader, needle []byte) bool {
	chunk := make([]byte, 4<<20)
	var tail []byte
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			window := append(tail, chunk[:n]...)
			if bytes.Contains(window, needle) {
				return true
			}
			k := min(len(needle)-1, len(window))
			tail = append([]byte(nil), window[len(window)-k:]...)
		}
		if err != nil {
			return false
		}
	}
}

// treeHas reports the files under dir that hold needle.
func treeHas(dir string, needle []byte) []string {
	var hits []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if f, err := os.Open(p); err == nil {
			if readHas(f, needle) {
				hits = append(hits, p)
			}
			f.Close()
		}
		return nil
	})
	return hits
}

// TestNoResidue: a canary written into one sandbox's files (its disk is
// its memory) and processes is in its guest RAM while it runs (the
// positive control), and once it is destroyed it is in no later
// sandbox's guest RAM, nor in the template's sealed base, the run
// directory, the store, its WAL or the audit anchor.
func TestNoResidue(t *testing.T) {
	m, st := newManager(t, sandbox.Config{WarmPool: 1})
	ctx := vmtest.Context(t)
	b := make([]byte, 16)
	rand.Read(b)
	canary := []byte("airlock-residue-" + hex.EncodeToString(b))

	a := create(t, m, "acme", map[string]string{"doc": "residue"})
	sh(t, m, "acme", a.ID, fmt.Sprintf("printf %%s %s > /job/canary.txt; printf %%s %s > /dev/shm/canary; cat /job/canary.txt > /dev/null", canary, canary))
	asb, err := st.GetSandbox(ctx, "acme", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !guestRAMHas(t, asb.PID, canary) {
		t.Fatal("positive control: the canary is not in the guest RAM of the sandbox that wrote it")
	}
	if err := m.Kill(ctx, "acme", a.ID); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < 3; i++ {
		later := create(t, m, "acme", nil)
		sb, err := st.GetSandbox(ctx, "acme", later.ID)
		if err != nil {
			t.Fatal(err)
		}
		if guestRAMHas(t, sb.PID, canary) {
			t.Errorf("sandbox %s (created after %s was destroyed) holds its canary in guest RAM", later.ID, a.ID)
		}
	}
	tmpl, err := vmtest.Registry(t).Get(vmtest.TemplateName)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := vmtest.Host(t).Base(tmpl.MemPath())
	if err != nil {
		t.Fatal(err)
	}
	if readHas(io.NewSectionReader(base, 0, 1<<40), canary) {
		t.Error("the template's sealed base holds a clone's canary")
	}
	if hits := treeHas(filepath.Join(vmtest.Host(t).RunDir, a.ID), canary); len(hits) > 0 {
		t.Errorf("the destroyed sandbox's state directory: %v", hits)
	}
	if _, err := os.Stat(filepath.Join(vmtest.Host(t).RunDir, a.ID)); !os.IsNotExist(err) {
		t.Errorf("state directory of %s remains: %v", a.ID, err)
	}
	if hits := treeHas(filepath.Dir(storePath(t, st)), canary); len(hits) > 0 {
		t.Errorf("host state holds the canary: %v", hits)
	}
}

// storePath is the store's database file (the test store is alone in its
// own temp dir, with its WAL and anchor).
func storePath(t *testing.T, st *store.Store) string {
	t.Helper()
	return st.Path()
}

// TestReadHas: the scanner finds a needle across a chunk boundary.
func TestReadHas(t *testing.T) {
	data := bytes.Repeat([]byte{'x'}, 4<<20-3)
	data = append(data, []byte("needle")...)
	if !readHas(bytes.NewReader(data), []byte("needle")) {
		t.Fatal("needle across a chunk boundary not found")
	}
	if readHas(bytes.NewReader(data[:len(data)-1]), []byte("needle")) {
		t.Fatal("found a needle that is not there")
	}
}
