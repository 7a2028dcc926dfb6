//go:build linux

package agent

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// reaper is the only code in the agent that waits for children. As PID 1
// the agent inherits every orphan in the guest, so it must reap with
// wait4(-1); any other waiter (os/exec's Wait) would race it for exit
// statuses. Processes the agent starts register their pid under mu before
// the reaper can dispatch their status, so no status is ever lost.
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus // guarded by mu
}

func newReaper() *reaper {
	r := &reaper{waiters: make(map[int]chan syscall.WaitStatus)}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() {
		for range sigs {
			r.reapAll()
		}
	}()
	return r
}

// start forks a process via fn (which must return its pid) and returns a
// channel that receives its wait status exactly once.
func (r *reaper) start(fn func() (int, error)) (int, <-chan syscall.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := fn()
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiters[pid] = ch
	return pid, ch, nil
}

func (r *reaper) reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		r.mu.Lock()
		ch, ok := r.waiters[pid]
		delete(r.waiters, pid)
		r.mu.Unlock()
		if ok {
			ch <- ws
		}
	}
}
