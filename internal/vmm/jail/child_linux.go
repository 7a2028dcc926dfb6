//go:build linux

package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExitSetup is the helper's exit status when the jail could not be built;
// the VMM never ran.
const ExitSetup = 125

// Run is the helper's whole life: it is started by the host side in new
// mount, pid, ipc and uts namespaces (as PID 1 of the new pid namespace),
// builds the root, joins the cgroups, drops every privilege and execs the
// VMM, which inherits PID 1. It returns only on failure.
func Run(arg string) error {
	// Capabilities, no_new_privs and the bounding set are per thread: the
	// thread that sets them must be the one that execs.
	runtime.LockOSThread()
	s, err := Decode(arg)
	if err != nil {
		return err
	}
	capLast := lastCap() // read while the host's /proc is in view
	steps := []struct {
		name string
		do   func(Spec) error
	}{
		{"make mounts private", func(Spec) error {
			return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		}},
		{"build root", buildRoot},
		{"join cgroups", joinCgroups},
		{"enter root", enterRoot},
		{"hostname", func(s Spec) error { return unix.Sethostname([]byte(s.ID)) }},
		{"rlimits", setRlimits},
		{"no transparent huge pages", func(Spec) error { return DisableHugePages() }},
		{"drop privileges", func(s Spec) error { return dropPrivileges(s, capLast) }},
		{"close descriptors", func(s Spec) error {
			return unix.CloseRange(uint(3+s.KeepFDs), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
		}},
	}
	for _, st := range steps {
		if err := st.do(s); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	// No environment: the daemon's (which may hold API keys or proxy
	// credentials) must not reach the VMM.
	argv := append([]string{s.Program}, s.Args...)
	return fmt.Errorf("exec %s: %w", s.Program, syscall.Exec(s.Program, argv, []string{}))
}

// buildRoot mounts a tmpfs on s.Root and shows in it, at their host
// paths, only what the VMM needs.
func buildRoot(s Spec) error {
	r := s.Root
	if err := unix.Mount("tmpfs", r, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=1m,nr_inodes=4k"); err != nil {
		return fmt.Errorf("tmpfs on %s: %w", r, err)
	}
	// The system's own files: the VMM binary and its libraries under /usr,
	// and the top-level links a merged-/usr system has (/lib -> usr/lib).
	if err := bindInto(r, Bind{Path: "/usr", Exec: true}); err != nil {
		return err
	}
	for _, top := range []string{"/lib", "/lib64", "/bin", "/sbin"} {
		fi, err := os.Lstat(top)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(top)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(r, top)); err != nil {
				return err
			}
		default:
			if err := bindInto(r, Bind{Path: top, Exec: true}); err != nil {
				return err
			}
		}
	}
	for _, f := range []string{"/etc/ld.so.cache"} {
		if _, err := os.Stat(f); err == nil {
			if err := bindInto(r, Bind{Path: f}); err != nil {
				return err
			}
		}
	}
	for _, b := range s.Binds {
		if err := bindInto(r, b); err != nil {
			return err
		}
	}
	dev := filepath.Join(r, "dev")
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return fmt.Errorf("tmpfs on /dev: %w", err)
	}
	for _, d := range append([]string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"}, s.Devices...) {
		if err := bindDevice(r, d); err != nil {
			return err
		}
	}
	// A proc of the new pid namespace: it shows the VMM and nothing else
	// (QEMU finds its memory descriptor through /proc/self/fd).
	proc := filepath.Join(r, "proc")
	if err := os.Mkdir(proc, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "hidepid=2"); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	return nil
}

// bindInto shows host path b.Path at the same path under root,
// read-only unless b.Writable, never setuid or device-bearing.
func bindInto(root string, b Bind) error {
	fi, err := os.Stat(b.Path)
	if err != nil {
		return err
	}
	target := filepath.Join(root, b.Path)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if fi.IsDir() {
		err = os.Mkdir(target, 0o755)
	} else {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("mount point for %s: %w", b.Path, err)
	}
	flags := uintptr(unix.MS_BIND)
	if fi.IsDir() {
		flags |= unix.MS_REC
	}
	if err := unix.Mount(b.Path, target, "", flags, ""); err != nil {
		return fmt.Errorf("bind %s: %w", b.Path, err)
	}
	re := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV)
	if !b.Writable {
		re |= unix.MS_RDONLY
	}
	if !b.Exec {
		re |= unix.MS_NOEXEC
	}
	if err := unix.Mount("", target, "", re, ""); err != nil {
		return fmt.Errorf("restrict %s: %w", b.Path, err)
	}
	return nil
}

// bindDevice shows one host device node under root's /dev.
func bindDevice(root, dev string) error {
	target := filepath.Join(root, dev)
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("mount point for %s: %w", dev, err)
	}
	f.Close()
	if err := unix.Mount(dev, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dev, err)
	}
	if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("restrict %s: %w", dev, err)
	}
	return nil
}

// joinCgroups moves this process (0: the writer) into each cgroup, while
// the host's cgroup filesystems are still visible.
func joinCgroups(s Spec) error {
	for _, c := range s.Cgroups {
		if err := os.WriteFile(filepath.Join(c, "cgroup.procs"), []byte("0"), 0); err != nil {
			return err
		}
	}
	return nil
}

// enterRoot makes the built root the process's / and detaches the host's,
// then makes the root's own tmpfs read-only.
func enterRoot(s Spec) error {
	old := filepath.Join(s.Root, ".host")
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(s.Root, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount("/.host", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	if err := os.Remove("/.host"); err != nil {
		return err
	}
	return unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

func setRlimits(s Spec) error {
	for _, l := range []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_NOFILE, s.Rlimits.NoFile},
		{unix.RLIMIT_NPROC, s.Rlimits.NProc},
		{unix.RLIMIT_FSIZE, s.Rlimits.FSize},
		{unix.RLIMIT_CORE, 0},
	} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.v, Max: l.v}); err != nil {
			return fmt.Errorf("rlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// dropPrivileges empties the bounding set, becomes s.UID/s.GID (which
// clears every capability), and sets no_new_privs, so nothing the VMM
// execs or maps can give any of it back.
func dropPrivileges(s Spec, capLast int) error {
	for c := 0; c <= capLast; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	// syscall's set*id apply to every thread of the process (x/sys/unix's
	// would change only this one).
	if err := syscall.Setgroups(s.Groups); err != nil {
		return err
	}
	if err := syscall.Setresgid(s.GID, s.GID, s.GID); err != nil {
		return err
	}
	if err := syscall.Setresuid(s.UID, s.UID, s.UID); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// lastCap is the highest capability this kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &n); err != nil {
		return 63
	}
	return n
}

// DisableHugePages turns transparent huge pages off for this process and
// everything it execs (the flag survives execve). QEMU asks for huge pages
// for its TCG translation cache, so an idle clone held its translated code
// in whole 2 MiB pages, and its heap and thread arenas got some too: with
// them off, an idle clone's PSS fell from 33.3 to 29.4 MiB (airlock bench,
// idle memory). Guest RAM is a memfd, which never used them.
func DisableHugePages() error {
	if err := unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_THP_DISABLE: %w", err)
	}
	return nil
}
