//go:build linux

package vm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Guest RAM a VMM maps privately (a clone's copy-on-write base) is never
// the file on disk: QEMU 7.2 can only open a memory file read-write, and a
// VMM that escaped its guest could then rewrite what every later clone
// starts from. Instead each base is copied once into a sealed memfd (no
// writes, no resizing, by anyone, ever: the kernel refuses them), and
// VMMs map that privately through /proc/self/fd. Clones share its pages
// exactly as they shared the file's page cache.

// NewMemory returns an empty memfd of size bytes for guest RAM that this
// process writes (a fork's children's base), to be sealed with Seal
// before any clone maps it.
func NewMemory(name string, size int64) (*os.File, error) {
	fd, err := unix.MemfdCreate("airlock-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "memfd:airlock-"+name)
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("memfd: size %d: %w", size, err)
	}
	return f, nil
}

// Seal makes a memfd immutable: no write, no shared writable mapping, no
// resizing, and no way to undo that.
func Seal(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS,
		unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	if err != nil {
		return fmt.Errorf("seal memfd: %w", err)
	}
	return nil
}

// SealedCopy copies the file at path into a sealed memfd and returns it
// with the hex sha256 of the content it copied (holes count as zeros), so
// a caller can check what clones will map, not what a file held earlier.
// Only the file's data extents are read and copied; holes stay holes.
func SealedCopy(path string) (_ *os.File, sum string, err error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return nil, "", err
	}
	dst, err := NewMemory("base", fi.Size())
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			dst.Close()
		}
	}()
	h := sha256.New()
	if err := copyHashing(dst, src, path, fi.Size(), h); err != nil {
		return nil, "", err
	}
	if st, err := src.Stat(); err != nil || st.Size() != fi.Size() || !st.ModTime().Equal(fi.ModTime()) {
		return nil, "", fmt.Errorf("%s changed while it was copied", path)
	}
	if err := Seal(dst); err != nil {
		return nil, "", err
	}
	return dst, hex.EncodeToString(h.Sum(nil)), nil
}

// copyHashing copies src's first size bytes (at path) into dst through
// this process, hashing them into h: data extents are read and copied,
// holes are hashed as zeros and stay holes.
func copyHashing(dst, src *os.File, path string, size int64, h hash.Hash) error {
	zeros := make([]byte, 1<<20)
	buf := make([]byte, 1<<20)
	hashZeros := func(n int64) {
		for n > 0 {
			k := min(n, int64(len(zeros)))
			h.Write(zeros[:k])
			n -= k
		}
	}
	off := int64(0) // everything before off is hashed (and copied)
	err := dataExtents(src, size, func(data, end int64) error {
		hashZeros(data - off)
		for p := data; p < end; {
			n, err := src.ReadAt(buf[:min(int64(len(buf)), end-p)], p)
			if n > 0 {
				h.Write(buf[:n])
				if _, werr := dst.WriteAt(buf[:n], p); werr != nil {
					return fmt.Errorf("copy %s: %w", path, werr)
				}
				p += int64(n)
			}
			if err == io.EOF && p < end {
				return fmt.Errorf("%s: shrank while it was copied", path)
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("read %s: %w", path, err)
			}
		}
		off = end
		return nil
	})
	if err != nil {
		return err
	}
	hashZeros(size - off)
	return nil
}

// dataExtents calls fn for each data extent [data, end) of f's first size
// bytes, in order; the holes between them are skipped.
func dataExtents(f *os.File, size int64, fn func(data, end int64) error) error {
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, syscall.ENXIO) || err == nil && data >= size {
			return nil // only a hole from here to the end
		}
		if err != nil {
			return fmt.Errorf("%s: seek data: %w", f.Name(), err)
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return fmt.Errorf("%s: seek hole: %w", f.Name(), err)
		}
		off = min(hole, size)
		if err := fn(data, off); err != nil {
			return err
		}
	}
	return nil
}

// base is a clone base's sealed copy and the identity of the file it was
// copied from.
type base struct {
	f   *os.File
	sum string
	id  FileIdentity // of the file copied
}

// Base returns the sealed copy of the memory file at path that clones
// restored from it map, with the sha256 of its content, copying it the
// first time a path is asked for. A file that is no longer the one copied
// (inode, size, mtime, ctime) is refused until DropBase. Copies live as
// long as the Host: one per template in use.
func (h *Host) Base(path string) (*os.File, string, error) {
	id, err := IdentityOf(path)
	if err != nil {
		return nil, "", fmt.Errorf("memory file: %w", err)
	}
	h.basesMu.Lock()
	defer h.basesMu.Unlock()
	if b := h.bases[path]; b != nil {
		if b.id == id {
			return b.f, b.sum, nil
		}
		// Never a silent re-copy: what clones map must be what was
		// verified. The template registry drops the copy and verifies the
		// file again before it is used next.
		return nil, "", errdefs.FailedPrecondition("memory file %s changed since it was copied and verified: refusing to restore from it", path)
	}
	f, sum, err := SealedCopy(path)
	if err != nil {
		return nil, "", err
	}
	h.bases[path] = &base{f: f, sum: sum, id: id}
	return f, sum, nil
}

// BaseVerified is Base for a memory file whose content a caller has
// verified already (in an earlier process: see the template registry's
// stamps) as sum, while it still has the identity id names: the copy is
// made without hashing, and refused if the file's identity is not id
// before and after it.
func (h *Host) BaseVerified(path, sum string, id FileIdentity) (*os.File, error) {
	h.basesMu.Lock()
	defer h.basesMu.Unlock()
	if b := h.bases[path]; b != nil {
		if b.sum == sum && b.id == id {
			return b.f, nil
		}
		return nil, errdefs.FailedPrecondition("memory file %s changed since it was copied and verified: refusing to restore from it", path)
	}
	if got, err := IdentityOf(path); err != nil || got != id {
		return nil, errdefs.FailedPrecondition("memory file %s is not the file that was verified: refusing to restore from it", path)
	}
	f, err := NewMemory("base", id.Size)
	if err != nil {
		return nil, err
	}
	// Filled and sealed before any VMM maps it. (Starting VMMs during
	// the copy saved nothing measurable on two cores, both being CPU
	// work, and sealing a memfd that starting VMMs mapped failed once
	// with EBUSY.)
	if err := fillVerified(f, path, id); err != nil {
		f.Close()
		return nil, err
	}
	h.bases[path] = &base{f: f, sum: sum, id: id}
	return f, nil
}

// fillVerified copies the file at path, which must have identity id
// throughout, into dst and seals it.
func fillVerified(dst *os.File, path string, id FileIdentity) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(src.Fd()), &st); err != nil {
		return err
	}
	if identityOfStat(&st) != id {
		return errdefs.FailedPrecondition("memory file %s is not the file that was verified: refusing to restore from it", path)
	}
	if _, err := copyData(dst, src, id.Size); err != nil {
		return fmt.Errorf("copy %s: %w", path, err)
	}
	if got, err := IdentityOf(path); err != nil || got != id {
		return errdefs.FailedPrecondition("memory file %s changed while it was copied: refusing to restore from it", path)
	}
	return Seal(dst)
}

// FileIdentity is what identifies a file's content without reading it:
// a new device, inode, size, mtime or ctime means it may have changed
// (ctime cannot be set back from userspace).
type FileIdentity struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime syscall.Timespec
}

// IdentityOf stats path.
func IdentityOf(path string) (FileIdentity, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return FileIdentity{}, err
	}
	return identityOfStat(&st), nil
}

func identityOfStat(st *syscall.Stat_t) FileIdentity {
	return FileIdentity{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim, Ctime: st.Ctim}
}

// DropBase forgets path's sealed copy (a template that was rebuilt or
// removed); machines already started keep their mappings.
func (h *Host) DropBase(path string) {
	h.basesMu.Lock()
	defer h.basesMu.Unlock()
	h.dropLocked(path)
}

// dropLocked closes and forgets path's base, if any.
func (h *Host) dropLocked(path string) {
	if b := h.bases[path]; b != nil {
		b.f.Close()
		delete(h.bases, path)
	}
}

// Close releases the host's sealed copies and the driver's jail parents.
// Machines still running keep their own mappings and cgroups.
func (h *Host) Close() error {
	h.closeBases()
	return h.Driver.Close()
}

// closeBases closes every base.
func (h *Host) closeBases() {
	h.basesMu.Lock()
	defer h.basesMu.Unlock()
	for p := range h.bases {
		h.dropLocked(p)
	}
}

// PunchZeroPages turns every all-zero page of the file at path into a
// hole, and returns how many bytes that freed. The file reads the same
// (a hole reads as zeros, and checksums count holes as zeros), but every
// copy of it made with copyData (a clone base, a one-shot run's memory)
// moves less: a guest's RAM holds many zero pages its kernel has freed or
// never used since it was zeroed. The file must not be in use.
func PunchZeroPages(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	const page = 4096
	buf := make([]byte, 1<<20)
	var punched int64
	runStart, runEnd := int64(-1), int64(-1) // the zero run being gathered
	flush := func() error {
		if runStart >= 0 && runEnd > runStart {
			if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, runStart, runEnd-runStart); err != nil {
				return fmt.Errorf("punch %s: %w", path, err)
			}
			punched += runEnd - runStart
		}
		runStart, runEnd = -1, -1
		return nil
	}
	err = dataExtents(f, fi.Size(), func(data, end int64) error {
		if err := flush(); err != nil { // runs never span a hole
			return err
		}
		for p := data; p < end; {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), end-p)], p)
			if n == 0 && err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			for i := 0; i+page <= n; i += page {
				if !allZero(buf[i : i+page]) {
					if err := flush(); err != nil {
						return err
					}
					continue
				}
				if runStart < 0 {
					runStart = p + int64(i)
				}
				runEnd = p + int64(i) + page
			}
			if n%page != 0 { // a partial last page: left as it is
				return flush()
			}
			p += int64(n)
		}
		return nil
	})
	if err != nil {
		return punched, err
	}
	return punched, flush()
}

var zeroPage = make([]byte, 4096)

func allZero(b []byte) bool { return bytes.Equal(b, zeroPage) }

// copyData copies the data extents of src's first size bytes into dst at
// the same offsets (holes stay holes), in the kernel, and returns how many
// bytes that was.
func copyData(dst, src *os.File, size int64) (int64, error) {
	var copied int64
	err := dataExtents(src, size, func(data, end int64) error {
		// sendfile, unlike copy_file_range, copies across filesystems (a
		// template's file into a memfd); both end in the same in-kernel
		// splice. It writes at dst's file offset.
		if _, err := dst.Seek(data, io.SeekStart); err != nil {
			return err
		}
		for off := data; off < end; {
			n, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &off, int(min(end-off, 1<<30)))
			if err != nil {
				return err
			}
			if n == 0 {
				return io.ErrUnexpectedEOF
			}
			copied += int64(n)
		}
		return nil
	})
	return copied, err
}
