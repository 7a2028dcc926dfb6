//go:build linux

package agent

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const (
	modulesDir = "/lib/modules"
	loadOrder  = "/lib/modules/load.order"
	lowerDir   = "/mnt/lower"
	rwDir      = "/mnt/rw"
	newRoot    = "/mnt/root"
)

// BootConfig is what the kernel command line tells the agent.
type BootConfig struct {
	RootDevice string // airlock.root=/dev/vda; "" = stay in the initramfs
	RootFSType string // airlock.rootfstype=, default ext4
}

// ParseCmdline reads airlock.* parameters from /proc/cmdline content.
func ParseCmdline(cmdline string) BootConfig {
	cfg := BootConfig{RootFSType: "ext4"}
	for _, f := range strings.Fields(cmdline) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "airlock.root":
			cfg.RootDevice = v
		case "airlock.rootfstype":
			cfg.RootFSType = v
		}
	}
	return cfg
}

// Boot brings the guest up as PID 1: early mounts, console on stdio,
// modules, then (if asked) the read-only root under a tmpfs overlay, made
// the process's root. After Boot the agent runs inside the final root and
// everything a job writes lives in guest memory only.
func Boot() (BootConfig, error) {
	for _, m := range []struct{ src, dst, fstype string }{
		{"devtmpfs", "/dev", "devtmpfs"},
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
	} {
		if err := mount(m.src, m.dst, m.fstype, 0, ""); err != nil {
			return BootConfig{}, err
		}
	}
	attachConsole()
	cmdline, _ := os.ReadFile("/proc/cmdline")
	cfg := ParseCmdline(string(cmdline))
	if err := loadModules(); err != nil {
		return cfg, err
	}
	if cfg.RootDevice != "" {
		if err := switchRoot(cfg); err != nil {
			return cfg, err
		}
	}
	const nosuidNodev = unix.MS_NOSUID | unix.MS_NODEV
	for _, m := range []struct {
		src, dst, fstype string
		flags            uintptr
		data             string
	}{
		// devpts holds the terminals' device nodes: nodev would make every
		// /dev/pts/N refuse to open (EACCES), so it is noexec instead.
		{"devpts", "/dev/pts", "devpts", unix.MS_NOSUID | unix.MS_NOEXEC, "newinstance,ptmxmode=0666"},
		{"tmpfs", "/dev/shm", "tmpfs", nosuidNodev, "mode=1777"},
		{"tmpfs", "/run", "tmpfs", nosuidNodev, "mode=0755"},
		{"tmpfs", "/tmp", "tmpfs", nosuidNodev, "mode=1777"},
		{"cgroup2", "/sys/fs/cgroup", "cgroup2", nosuidNodev, ""},
	} {
		if err := mount(m.src, m.dst, m.fstype, m.flags, m.data); err != nil {
			// Non-fatal: a job may still run without them; say so.
			fmt.Fprintf(os.Stderr, "airlock-agent: %v\n", err)
		}
	}
	_ = os.Symlink("/proc/self/fd", "/dev/fd")
	os.Setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	os.Setenv("HOME", "/root")
	return cfg, nil
}

func mount(src, dst, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", dst, err)
	}
	if err := unix.Mount(src, dst, fstype, flags, data); err != nil && !errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("mount %s on %s: %w", fstype, dst, err)
	}
	return nil
}

// attachConsole points stdio at /dev/console: the initramfs has no device
// nodes, so the kernel could not open one for init.
func attachConsole() {
	f, err := os.OpenFile("/dev/console", os.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup2(int(f.Fd()), fd)
	}
	f.Close()
}

func loadModules() error {
	f, err := os.Open(loadOrder)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			continue
		}
		if err := loadModule(filepath.Join(modulesDir, name)); err != nil {
			return err
		}
	}
	return sc.Err()
}

func loadModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("module %s: %w", path, err)
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load module %s: %w", filepath.Base(path), err)
	}
	return nil
}

// switchRoot mounts the read-only root device with a tmpfs overlay on top
// and makes it the root of this process, like switch_root(8).
func switchRoot(cfg BootConfig) error {
	if err := waitFor(cfg.RootDevice, 10*time.Second); err != nil {
		return err
	}
	if err := mount(cfg.RootDevice, lowerDir, cfg.RootFSType, unix.MS_RDONLY, ""); err != nil {
		return err
	}
	if err := mount("tmpfs", rwDir, "tmpfs", 0, "mode=0755"); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.MkdirAll(filepath.Join(rwDir, d), 0o755); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s/upper,workdir=%s/work", lowerDir, rwDir, rwDir)
	if err := mount("overlay", newRoot, "overlay", 0, opts); err != nil {
		return err
	}
	for _, d := range []string{"/dev", "/proc", "/sys"} {
		target := filepath.Join(newRoot, d)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(d, target, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("move %s: %w", d, err)
		}
	}
	if err := unix.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	return unix.Chdir("/")
}

func waitFor(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %s", path, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
