package agent

import (
	"runtime"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// Under emulation a VMM restored from a snapshot starts with an empty
// translation cache: the guest's memory is warm, but every code path the
// first exec takes (the agent's exec code, clone and execve in the
// kernel, the dynamic loader, libc's start-up and exit) is translated
// again before it runs, and that costs the first exec after a restore
// about five times a warm one. Translated code is shared by all of a
// VMM's vCPUs, so on a guest with a spare vCPU the agent runs `true`
// through its own exec path the moment a host session starts: the spare
// vCPU translates those paths while the host is still in its handshake
// and identity push, and the host's first exec finds them done.
//
// The prewarm is the template's own `true`, in an exec cgroup of its
// own, with no input and its output discarded; it ends within
// prewarmTimeout or is killed. It never runs while a sync token is
// answered: the host syncs before every snapshot (Quiesce), so a
// snapshot never holds one in flight.

// prewarmTimeout bounds one prewarm; `true` takes milliseconds.
const prewarmTimeout = 5 * time.Second

// prewarmer runs one prewarm at a time.
type prewarmer struct {
	run func() // the work; immutable

	mu   sync.Mutex
	done chan struct{} // guarded by mu; closed when the latest run ended, nil before the first
}

// start begins a run unless one is in flight.
func (p *prewarmer) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		select {
		case <-p.done:
		default:
			return
		}
	}
	done := make(chan struct{})
	p.done = done
	go func() {
		defer close(done)
		p.run()
	}()
}

// wait returns once no run is in flight.
func (p *prewarmer) wait() {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

// prewarmWanted reports whether prewarming can help: only a spare vCPU
// makes the translation overlap with the session.
func prewarmWanted() bool { return runtime.NumCPU() > 1 }

// prewarm runs `true` the way Exec runs a command, with nobody to report
// to. A template without a `true` on the default PATH gets no prewarm.
func (s *Server) prewarm() {
	cmd := newExecCommand(&agentpb.ExecStart{Argv: []string{"true"}}, nil)
	path, err := cmd.resolve()
	if err != nil {
		return
	}
	pipes, err := openExecPipes(false, nil)
	if err != nil {
		return
	}
	cg := newExecCgroup()
	defer cg.release()
	pid, exited, err := s.startExec(path, cmd, pipes, cg)
	if err != nil {
		pipes.closeAgentEnds()
		return
	}
	run := &execRun{pid: pid, cg: cg, pipes: pipes, maxOut: cmd.maxOut}
	out := make(chan *agentpb.ExecResponse)
	go func() {
		for range out {
		}
	}()
	defer close(out)
	run.startPumps(out)
	ws, timedOut := run.wait(nil, prewarmTimeout, exited, nil)
	run.drain()
	if timedOut || !ws.Exited() || ws.ExitStatus() != 0 {
		s.log.Debug("prewarm did not exit cleanly", "wait_status", int(ws), "timed_out", timedOut)
	}
}
