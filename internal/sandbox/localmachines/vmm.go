package localmachines

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// vmm is a machine's stand-in VMM: a process that runs as long as the
// machine does, in a process group of its own.
type vmm struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has ended
	err    error         // how it ended; written before exited closes
}

// startVMM starts a stand-in VMM for the machine of stateDir and records
// its pid there.
func (l *Layer) startVMM(stateDir string) (*vmm, error) {
	cmd := exec.Command("sleep", "2147483647")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start VMM: %w", err)
	}
	v := &vmm{cmd: cmd, exited: make(chan struct{})}
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

func (v *vmm) pid() int { return v.cmd.Process.Pid }

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
