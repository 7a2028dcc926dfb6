//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsAppendFL is FS_APPEND_FL from linux/fs.h (chattr +a).
const fsAppendFL = 0x00000020

// setAppendOnly sets FS_APPEND_FL on f where the filesystem and privileges
// allow it, and reports whether the flag is set.
func setAppendOnly(f *os.File) bool {
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return false
	}
	if flags&fsAppendFL != 0 {
		return true
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsAppendFL)) == nil
}

// lockFile takes an exclusive lock on f shared with every other process
// that locks the same file, and returns its release.
func lockFile(f *os.File) (func(), error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }, nil
}

// isAppendOnly reports whether f carries FS_APPEND_FL.
func isAppendOnly(f *os.File) bool {
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	return err == nil && flags&fsAppendFL != 0
}

// UnsealAuditAnchor clears the append-only flag of the audit anchor of the
// database at dbPath (if it has one), so its state directory can be
// removed: for uninstalling and for tests that made a daemon's.
func UnsealAuditAnchor(dbPath string) error {
	f, err := os.Open(dbPath + anchorSuffix)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsAppendFL == 0 {
		return nil
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags&^fsAppendFL))
}
