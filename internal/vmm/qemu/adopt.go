package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/vmm"
)

// Live reports whether pid is a QEMU process serving the machine whose
// state directory is stateDir. Pids are reused, so a stored pid alone is
// never trusted: the process's command line must name the directory.
func Live(pid int, stateDir string) bool {
	if pid <= 0 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return bytes.Contains(cmdline, []byte(filepath.Join(stateDir, qmpSock)))
}

// Live is the package's Live, as the driver's.
func (d *Driver) Live(pid int, stateDir string) bool { return Live(pid, stateDir) }

var _ vmm.Driver = (*Driver)(nil)

// ReadPID returns the pid QEMU wrote into a state directory, or 0.
func ReadPID(stateDir string) int {
	b, err := os.ReadFile(filepath.Join(stateDir, pidFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Adopt takes over a machine started by an earlier airlock process (the
// daemon restarted while its VMs ran). Its exit is noticed through a
// pidfd, since it is not our child.
func (d *Driver) Adopt(id, stateDir string, pid int) (vmm.Machine, error) {
	if !Live(pid, stateDir) {
		return nil, errdefs.NotFound("VM %s: no QEMU process %d serving %s", id, pid, stateDir)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("VM %s: pidfd: %w", id, err)
	}
	m := &Machine{id: id, stateDir: stateDir, pid: pid, exited: make(chan struct{})}
	if d.jail != nil {
		m.jail = d.jail.Adopt(id, stateDir)
		m.jailed, m.uid, m.gid = true, m.jail.UID, m.jail.UID
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == syscall.EINTR {
				continue
			}
			if n > 0 || err != nil {
				break
			}
		}
		m.ended("noticed through its pidfd")
	}()
	return m, nil
}

// KillOrphan ends the VMM of machine id left behind by an earlier airlock
// process and removes everything it had on the host: process, state
// directory, jail cgroups.
func (d *Driver) KillOrphan(ctx context.Context, id, stateDir string) error {
	err := KillOrphan(ctx, stateDir)
	if d.jail != nil {
		err = errors.Join(err, d.jail.ReleaseOrphan(id))
	}
	return err
}

// Close removes what the driver made for its jails that no VMM uses.
func (d *Driver) Close() error {
	if d.jail == nil {
		return nil
	}
	return d.jail.Close()
}

// JailCgroups counts the jail cgroups of this driver's instance (0 when
// unjailed).
func (d *Driver) JailCgroups() int {
	if d.jail == nil {
		return 0
	}
	return d.jail.Count()
}

// SweepJails removes the jail cgroups of this instance's machines that
// live does not name (a daemon died and they were reaped without it).
func (d *Driver) SweepJails(live func(id string) bool) error {
	if d.jail == nil {
		return nil
	}
	return d.jail.Sweep(live)
}

// KillOrphan ends a QEMU process left behind by an earlier airlock process
// and removes its state directory. A pid that no longer serves stateDir is
// left alone.
func KillOrphan(ctx context.Context, stateDir string) error {
	pid := ReadPID(stateDir)
	if Live(pid, stateDir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for Live(pid, stateDir) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("orphan QEMU %d did not exit: %w", pid, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return os.RemoveAll(stateDir)
}
