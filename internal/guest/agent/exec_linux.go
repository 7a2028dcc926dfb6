//go:build linux

package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

const (
	// DefaultMaxOutput is the per-stream output cap when the host sets none.
	DefaultMaxOutput = 4 << 20
	// MaxOutputLimit is the largest per-stream cap a host may ask for.
	MaxOutputLimit = 256 << 20
	// pipeGrace is how long output pipes may stay open after the process
	// exits (a background child holding them) before they are closed.
	pipeGrace = 500 * time.Millisecond
	outChunk  = 64 << 10
	cgroupDir = "/sys/fs/cgroup"
)

// defaultEnv is every exec's base environment; ExecStart.Env adds to it.
var defaultEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LANG=C.UTF-8",
	"TERM=dumb",
}

var execSeq atomic.Int64

func validateStart(st *agentpb.ExecStart) error {
	if st == nil {
		return status.Error(codes.InvalidArgument, "first exec message must be start")
	}
	if (len(st.Argv) == 0) == (st.Shell == "") {
		return status.Error(codes.InvalidArgument, "exec needs exactly one of argv or shell")
	}
	if len(st.Argv) > 0 && st.Argv[0] == "" {
		return status.Error(codes.InvalidArgument, "argv[0] is empty")
	}
	if st.Cwd != "" {
		if err := checkPath(st.Cwd); err != nil {
			return err
		}
	}
	for _, e := range st.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" || strings.ContainsRune(e, 0) {
			return status.Errorf(codes.InvalidArgument, "env entry %q is not KEY=VALUE", e)
		}
	}
	if st.TimeoutMs < 0 {
		return status.Error(codes.InvalidArgument, "timeout must not be negative")
	}
	if st.MaxOutputBytes < 0 || st.MaxOutputBytes > MaxOutputLimit {
		return status.Errorf(codes.InvalidArgument, "max output must be between 0 and %d", MaxOutputLimit)
	}
	return nil
}

// mergeEnv overlays extra on base, later keys winning.
func mergeEnv(base, extra []string) []string {
	idx := map[string]int{}
	out := make([]string, 0, len(base)+len(extra))
	for _, e := range append(append([]string{}, base...), extra...) {
		k, _, _ := strings.Cut(e, "=")
		if i, ok := idx[k]; ok {
			out[i] = e
			continue
		}
		idx[k] = len(out)
		out = append(out, e)
	}
	return out
}

func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found", file)
}

// execCgroup is a cgroup v2 holding one exec's process tree, so a timeout
// kills everything the command started, including children that left its
// process group. nil when cgroup v2 is unavailable (process-group kill only).
type execCgroup struct {
	path string
	fd   int
	// lingering is set when processes the exec left behind run on until
	// its deadline (killAtDeadline owns the cgroup from then on).
	lingering bool
}

// activeCgroups are the exec cgroups of calls in flight. The sweep of
// leftover cgroups must never remove one of these: a cgroup removed between
// its creation and the clone into it makes the exec fail with ENOENT.
var (
	cgMu          sync.Mutex
	activeCgroups = map[string]bool{} // guarded by cgMu
)

func newExecCgroup() *execCgroup {
	setupJobs()
	p := filepath.Join(jobsDir, fmt.Sprintf("exec-%d", execSeq.Add(1)))
	cgMu.Lock()
	activeCgroups[p] = true
	cgMu.Unlock()
	if err := os.Mkdir(p, 0o755); err != nil {
		cgMu.Lock()
		delete(activeCgroups, p)
		cgMu.Unlock()
		return nil
	}
	fd, err := unix.Open(p, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		cgMu.Lock()
		delete(activeCgroups, p)
		cgMu.Unlock()
		os.Remove(p)
		return nil
	}
	return &execCgroup{path: p, fd: fd}
}

func (c *execCgroup) kill() {
	if c != nil {
		_ = os.WriteFile(filepath.Join(c.path, "cgroup.kill"), []byte("1"), 0)
	}
}

// release closes the handle and removes the cgroup if it is empty, and
// sweeps cgroups of earlier execs whose background children have exited
// since; populated ones fail to remove, harmlessly.
func (c *execCgroup) release() {
	if c == nil {
		return
	}
	unix.Close(c.fd)
	if c.lingering {
		return
	}
	cgMu.Lock()
	defer cgMu.Unlock()
	delete(activeCgroups, c.path)
	os.Remove(c.path)
	old, _ := filepath.Glob(filepath.Join(jobsDir, "exec-*"))
	for _, o := range old {
		if !activeCgroups[o] {
			os.Remove(o)
		}
	}
}

// Exec implements agentpb.AgentServer.
func (s *Server) Exec(stream agentpb.Agent_ExecServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	st := first.GetStart()
	if err := validateStart(st); err != nil {
		return err
	}
	env := mergeEnv(defaultEnv, st.Env)
	argv := st.Argv
	if st.Shell != "" {
		argv = []string{"/bin/sh", "-c", st.Shell}
	}
	cwd := st.Cwd
	if cwd == "" {
		cwd = "/"
	}
	maxOut := st.MaxOutputBytes
	if maxOut == 0 {
		maxOut = DefaultMaxOutput
	}

	// One goroutine owns stream.Send; everything else hands it messages.
	out := make(chan *agentpb.ExecResponse, 16)
	sendDone := make(chan error, 1)
	go func() {
		var serr error
		for m := range out {
			if serr == nil {
				serr = stream.Send(m)
			}
		}
		sendDone <- serr
	}()
	finish := func(exit *agentpb.ExecExit) error {
		out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Exit{Exit: exit}}
		close(out)
		return <-sendDone
	}
	began := time.Now()

	path, err := lookPath(argv[0], env)
	if err == nil {
		if fi, serr := os.Stat(cwd); serr != nil || !fi.IsDir() {
			err = fmt.Errorf("cwd %s: not a directory", cwd)
		}
	}
	if err != nil {
		// Behave like a shell: the command fails with 127 and says why.
		msg := []byte("airlock: " + err.Error() + "\n")
		out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stderr{Stderr: msg}}
		return finish(&agentpb.ExecExit{ExitCode: 127, StderrBytes: int64(len(msg)), DurationMs: time.Since(began).Milliseconds()})
	}

	stdinR, stdinW, err := stdinPipe(st.Stdin)
	if err != nil {
		close(out)
		return status.Errorf(codes.Internal, "stdin: %v", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		close(out)
		return status.Errorf(codes.Internal, "stdout pipe: %v", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		close(out)
		return status.Errorf(codes.Internal, "stderr pipe: %v", err)
	}
	cg := newExecCgroup()
	defer cg.release()
	sys := &syscall.SysProcAttr{Setpgid: true}
	if cg != nil {
		sys.UseCgroupFD = true
		sys.CgroupFD = cg.fd
	}
	pid, exited, err := s.reaper.start(func() (int, error) {
		return syscall.ForkExec(path, argv, &syscall.ProcAttr{
			Dir:   cwd,
			Env:   env,
			Files: []uintptr{stdinR.Fd(), stdoutW.Fd(), stderrW.Fd()},
			Sys:   sys,
		})
	})
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		stdoutR.Close()
		stderrR.Close()
		if stdinW != nil {
			stdinW.Close()
		}
		msg := []byte(fmt.Sprintf("airlock: start %s: %v\n", argv[0], err))
		out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stderr{Stderr: msg}}
		return finish(&agentpb.ExecExit{ExitCode: 126, StderrBytes: int64(len(msg)), DurationMs: time.Since(began).Milliseconds()})
	}
	out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_StartedPid{StartedPid: int32(pid)}}

	killTree := func(sig syscall.Signal) {
		if sig == syscall.SIGKILL {
			cg.kill()
		}
		_ = syscall.Kill(-pid, sig)
	}

	var outWG sync.WaitGroup
	stdoutPump := &pump{r: stdoutR, max: maxOut, out: out, stdout: true}
	stderrPump := &pump{r: stderrR, max: maxOut, out: out}
	outWG.Add(2)
	go func() { defer outWG.Done(); stdoutPump.run() }()
	go func() { defer outWG.Done(); stderrPump.run() }()

	// Host-side messages: stdin, signals. A broken stream (host gone or
	// call cancelled) kills the tree: nobody is left to read its output.
	hostGone := make(chan struct{})
	go func() {
		defer func() {
			if stdinW != nil {
				stdinW.Close()
			}
		}()
		for {
			msg, err := stream.Recv()
			if err == io.EOF {
				return // host half-closed: no more stdin or signals
			}
			if err != nil {
				close(hostGone)
				return
			}
			switch m := msg.Msg.(type) {
			case *agentpb.ExecRequest_StdinData:
				if stdinW != nil {
					_, _ = stdinW.Write(m.StdinData)
				}
			case *agentpb.ExecRequest_StdinClose:
				if stdinW != nil {
					stdinW.Close()
					stdinW = nil
				}
			case *agentpb.ExecRequest_Signal:
				killTree(syscall.Signal(m.Signal))
			}
		}
	}()

	var timeout <-chan time.Time
	if st.TimeoutMs > 0 {
		t := time.NewTimer(time.Duration(st.TimeoutMs) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	timedOut := false
	callDone := stream.Context().Done()
	var ws syscall.WaitStatus
wait:
	for {
		select {
		case ws = <-exited:
			break wait
		case <-timeout:
			timedOut = true
			timeout = nil
			killTree(syscall.SIGKILL)
		case <-hostGone:
			hostGone = nil
			killTree(syscall.SIGKILL)
		case <-callDone:
			// The host cancelled the call or went away (its half-close
			// of the request stream is not that: it only ends stdin).
			// Nobody is left to read the output or the exit status.
			callDone = nil
			killTree(syscall.SIGKILL)
		}
	}
	if timedOut {
		// Make sure nothing the command started outlives its deadline.
		killTree(syscall.SIGKILL)
	}
	// Background children may hold the pipes open. Keep delivering while
	// output flows; once both pipes have been idle for pipeGrace, stop.
	pumpsDone := make(chan struct{})
	go func() { outWG.Wait(); close(pumpsDone) }()
	tick := time.NewTicker(pipeGrace / 5)
	defer tick.Stop()
drain:
	for {
		select {
		case <-pumpsDone:
			break drain
		case <-tick.C:
			if stdoutPump.idleFor() > pipeGrace && stderrPump.idleFor() > pipeGrace {
				stdoutR.Close()
				stderrR.Close()
				<-pumpsDone
				break drain
			}
		}
	}
	if cg != nil && st.TimeoutMs > 0 && !timedOut && populated(cg.path) {
		cg.lingering = true
		cg.killAtDeadline(began.Add(time.Duration(st.TimeoutMs) * time.Millisecond))
	}
	exit := &agentpb.ExecExit{
		TimedOut:        timedOut,
		StdoutTruncated: stdoutPump.total > maxOut,
		StderrTruncated: stderrPump.total > maxOut,
		StdoutBytes:     stdoutPump.total,
		StderrBytes:     stderrPump.total,
		DurationMs:      time.Since(began).Milliseconds(),
	}
	switch {
	case ws.Exited():
		exit.ExitCode = int32(ws.ExitStatus())
	case ws.Signaled():
		exit.ExitCode = 128 + int32(ws.Signal())
		exit.Signal = unix.SignalName(ws.Signal())
	}
	return finish(exit)
}

func stdinPipe(wanted bool) (r *os.File, w *os.File, err error) {
	if !wanted {
		r, err = os.Open(os.DevNull)
		return r, nil, err
	}
	return os.Pipe()
}

// pump copies one output pipe into exec responses, up to max bytes; the
// rest is read and counted but dropped, so the process never blocks on a
// full pipe and the host never receives more than it asked for.
type pump struct {
	r      *os.File
	max    int64
	out    chan<- *agentpb.ExecResponse
	stdout bool
	total  int64 // written only by run; read after run returns

	lastActive atomic.Int64 // unix nanos of the last read or delivery
	sending    atomic.Bool  // true while blocked handing a chunk to the sender
}

// idleFor is how long the pump has been waiting for input; zero while it
// is still delivering, so a slow host never loses buffered output.
func (p *pump) idleFor() time.Duration {
	if p.sending.Load() {
		return 0
	}
	return time.Since(time.Unix(0, p.lastActive.Load()))
}

func (p *pump) run() {
	defer p.r.Close()
	buf := make([]byte, outChunk)
	p.lastActive.Store(time.Now().UnixNano())
	for {
		n, err := p.r.Read(buf)
		p.lastActive.Store(time.Now().UnixNano())
		if n > 0 {
			keep := int64(n)
			if room := p.max - p.total; room < keep {
				keep = max(room, 0)
			}
			p.total += int64(n)
			if keep > 0 {
				data := append([]byte(nil), buf[:keep]...)
				p.sending.Store(true)
				if p.stdout {
					p.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stdout{Stdout: data}}
				} else {
					p.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stderr{Stderr: data}}
				}
				p.lastActive.Store(time.Now().UnixNano())
				p.sending.Store(false)
			}
		}
		if err != nil {
			return
		}
	}
}
