//go:build linux

package vm

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A fork's children start from the parent's RAM as it is at the fork. A
// restored parent maps its base (a template's or an earlier fork's sealed
// memfd) privately, so that RAM is the base plus the pages the parent has
// written since its restore, which the kernel keeps as the VMM's private
// anonymous copies and /proc/PID/pagemap tells apart. forkMemory builds
// the children's base from exactly that: the base's data, then the
// written pages read out of the paused VMM. The base is copied in the
// kernel (sendfile) while the parent still runs; the pause costs
// only what the job wrote, not all of guest RAM (a migration scans every
// page and sends every one the bake touched, at ~100 MB/s under TCG).

// pageSize is the host page size pagemap entries describe.
var pageSize = int64(os.Getpagesize())

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63
	pmSwapped = 1 << 62
	pmFile    = 1 << 61 // file page or shared anonymous
)

// ramMapping is where a VMM maps guest RAM.
type ramMapping struct {
	start, end uint64
}

// ForkMemoryStats says what a fork's memory was made of.
type ForkMemoryStats struct {
	BaseBytes    int64 // data copied from the parent's base
	WrittenBytes int64 // pages the parent wrote since its restore
}

// forkMemory is fork children's base while it is being built.
type forkMemory struct {
	mem   *os.File
	pid   int
	ram   ramMapping
	stats ForkMemoryStats
}

// newForkMemory starts the children's base for the VMM process pid,
// which maps ramSize bytes of guest RAM privately from an airlock memfd
// (see memoryArgs in the QEMU driver): a new memfd holding that base's
// data. The VMM may still be running; finish needs it paused.
func newForkMemory(pid int, ramSize int64) (_ *forkMemory, err error) {
	ram, err := findRAMMapping(pid, ramSize)
	if err != nil {
		return nil, err
	}
	base, err := os.Open(fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, ram.start, ram.end))
	if err != nil {
		return nil, fmt.Errorf("fork: open the parent's memory base: %w", err)
	}
	defer base.Close()
	// What the VMM maps is its to choose (a VMM that escaped its guest
	// could map anything there): accept only a memfd's kind of file, long
	// enough. Reading it, and the VMM's pages, cannot block: a jailed VMM
	// has no way to make kernel reads of its memory wait (userfaultfd
	// without privilege handles user-mode faults only), and whatever it
	// puts there is only what its own fork children start from.
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(base.Fd()), &fs); err != nil || (fs.Type != unix.TMPFS_MAGIC && fs.Type != unix.HUGETLBFS_MAGIC) {
		return nil, fmt.Errorf("fork: the parent's memory base is not a memfd")
	}
	if fi, err := base.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() < ramSize {
		return nil, fmt.Errorf("fork: the parent's memory base is not a %d-byte memfd", ramSize)
	}
	mem, err := NewMemory("fork", ramSize)
	if err != nil {
		return nil, err
	}
	fm := &forkMemory{mem: mem, pid: pid, ram: ram}
	if fm.stats.BaseBytes, err = copyData(mem, base, ramSize); err != nil {
		mem.Close()
		return nil, fmt.Errorf("fork: copy the parent's base: %w", err)
	}
	return fm, nil
}

// finish copies in the pages the paused VMM has written since its
// restore and seals the result, which is the caller's to close.
func (fm *forkMemory) finish() (*os.File, error) {
	size := int64(fm.ram.end - fm.ram.start)
	buf, err := unix.Mmap(int(fm.mem.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("fork: map new memory: %w", err)
	}
	fm.stats.WrittenBytes, err = copyWrittenPages(buf, fm.pid, fm.ram)
	if uerr := unix.Munmap(buf); err == nil && uerr != nil {
		err = fmt.Errorf("unmap new memory: %w", uerr)
	}
	if err != nil {
		return nil, fmt.Errorf("fork: copy the parent's written pages: %w", err)
	}
	if err := Seal(fm.mem); err != nil {
		return nil, err
	}
	return fm.mem, nil
}

// findRAMMapping finds pid's one private mapping of an airlock memfd
// that is ramSize long.
func findRAMMapping(pid int, ramSize int64) (ramMapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return ramMapping{}, fmt.Errorf("fork: parent's mappings: %w", err)
	}
	defer f.Close()
	var found []ramMapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/memfd:airlock-") || fields[1] != "rw-p" || fields[2] != "00000000" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end-start != uint64(ramSize) {
			continue
		}
		found = append(found, ramMapping{start, end})
	}
	if err := sc.Err(); err != nil {
		return ramMapping{}, fmt.Errorf("fork: parent's mappings: %w", err)
	}
	if len(found) != 1 {
		return ramMapping{}, fmt.Errorf("fork: parent VMM %d has %d private %d-byte memory mappings, want 1", pid, len(found), ramSize)
	}
	return found[0], nil
}

// ownPage reports whether a pagemap entry is a page of the process's own
// (present or swapped, and not the file's): one it wrote.
func ownPage(e uint64) bool { return e&(pmPresent|pmSwapped) != 0 && e&pmFile == 0 }

// copyWrittenPages copies every page of pid's RAM mapping that is the
// process's own (present or swapped, and not the file's) into dst at the
// same offset, and returns how many bytes that was.
func copyWrittenPages(dst []byte, pid int, ram ramMapping) (int64, error) {
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return 0, err
	}
	defer pm.Close()
	pages := int64(ram.end-ram.start) / pageSize
	const chunk = 1 << 16 // pagemap entries read at a time (512 KiB)
	entries := make([]byte, 8*chunk)
	var (
		copied int64
		local  []unix.Iovec
		remote []unix.RemoteIovec
		batch  int64
	)
	flush := func() error {
		if len(local) == 0 {
			return nil
		}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return fmt.Errorf("read VMM memory: %w", err)
		}
		if int64(n) != batch {
			return fmt.Errorf("read VMM memory: %d of %d bytes", n, batch)
		}
		copied += batch
		local, remote, batch = local[:0], remote[:0], 0
		return nil
	}
	// add queues one run of written pages, merging it with the run before
	// when they touch.
	add := func(first, count int64) error {
		off, n := first*pageSize, count*pageSize
		if k := len(local); k > 0 && remote[k-1].Base+uintptr(remote[k-1].Len) == uintptr(ram.start)+uintptr(off) {
			local[k-1].SetLen(int(local[k-1].Len) + int(n))
			remote[k-1].Len += int(n)
		} else {
			if len(local) == 1024 { // IOV_MAX
				if err := flush(); err != nil {
					return err
				}
			}
			iov := unix.Iovec{Base: &dst[off]}
			iov.SetLen(int(n))
			local = append(local, iov)
			remote = append(remote, unix.RemoteIovec{Base: uintptr(ram.start) + uintptr(off), Len: int(n)})
		}
		batch += n
		return nil
	}
	for first := int64(0); first < pages; first += chunk {
		n := min(chunk, pages-first)
		if _, err := pm.ReadAt(entries[:8*n], int64(ram.start)/pageSize*8+first*8); err != nil {
			return copied, fmt.Errorf("pagemap: %w", err)
		}
		own := func(i int64) bool { return ownPage(binary.LittleEndian.Uint64(entries[8*i:])) }
		for i := int64(0); i < n; {
			if !own(i) {
				i++
				continue
			}
			j := i + 1
			for j < n && own(j) {
				j++
			}
			if err := add(first+i, j-i); err != nil {
				return copied, err
			}
			i = j
		}
	}
	return copied, flush()
}
