package localmachines

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// vmm is a machine's stand-in VMM: a process that runs as long as the
// machine does, in a process group of its own.
type vmm struct {
	pidN   int           // the process's pid; immutable
	exited chan struct{} // closed when the process has ended
	err    error         // how it ended; written before exited closes
}

// startVMM starts a stand-in VMM for the machine of stateDir and records
// its pid there.
func (l *Layer) startVMM(stateDir string) (*vmm, error) {
	inheritedOnce.Do(closeInheritedOnExec)
	cmd := exec.Command("sleep", "2147483647")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start VMM: %w", err)
	}
	v := &vmm{pidN: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		v.err = cmd.Wait()
		close(v.exited)
	}()
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(stateDir, "pid"), []byte(strconv.Itoa(pid)), 0o600); err != nil {
		v.kill(context.Background())
		return nil, err
	}
	l.mu.Lock()
	l.vmms[pid] = v
	l.mu.Unlock()
	return v, nil
}

func (v *vmm) pid() int { return v.pidN }

var inheritedOnce sync.Once

// closeInheritedOnExec marks every descriptor this process inherited
// (3 and up; Go opens its own close-on-exec) close-on-exec, so a stand-in
// VMM, which outlives this process on purpose, holds none of them. A Go
// fuzz worker inherits its coordinator's pipes: a `sleep` holding them
// kept the coordinator waiting for their end forever.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// foreignVMM takes over the stand-in VMM pid that another process (the
// previous daemon, killed) started for stateDir: nil unless pid is a
// live, non-zombie `sleep` whose pid stateDir records. Its end is
// watched through a pidfd, since it is not this process's child.
func foreignVMM(pid int, stateDir string) *vmm {
	b, err := os.ReadFile(filepath.Join(stateDir, "pid"))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) || pid <= 0 {
		return nil
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || strings.TrimSpace(string(comm)) != "sleep" || zombie(pid) {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	v := &vmm{pidN: pid, exited: make(chan struct{})}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		close(v.exited)
	}()
	return v
}

// zombie reports whether pid has exited but not been reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

func (v *vmm) hasExited() bool {
	select {
	case <-v.exited:
		return true
	default:
		return false
	}
}

// kill ends the VMM's process group and waits until it has gone.
func (v *vmm) kill(ctx context.Context) error {
	_ = syscall.Kill(-v.pid(), syscall.SIGKILL)
	select {
	case <-v.exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("VMM %d did not exit: %w", v.pid(), ctx.Err())
	}
}
