//go:build linux

package agent

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/airlock-dev/airlock/internal/pty"
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
	if strings.ContainsRune(st.User, 0) || len(st.User) > 256 {
		return status.Error(codes.InvalidArgument, "user name has a NUL byte or is longer than 256 bytes")
	}
	if st.Pty != nil {
		if err := pty.CheckSize(st.Pty.Rows, st.Pty.Cols); err != nil {
			return status.Errorf(codes.InvalidArgument, "pty: %v", err)
		}
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
		// As a shell: a path that is not there is "not found" (127).
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: No such file or directory", file)
		}
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

// noExecCgroups is set by tests that run the agent's handlers on a host,
// where exec cgroups would go into the host's own hierarchy.
var noExecCgroups bool

func newExecCgroup() *execCgroup {
	if noExecCgroups {
		return nil
	}
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

// Exec implements agentpb.AgentServer: it runs one command in a cgroup
// of its own, streams its output, forwards stdin and signals, and reports
// how it ended. A command that cannot be found or started fails like a
// shell would (exit 127 or 126, the reason on stderr); a failure of the
// agent itself is a gRPC error.
func (s *Server) Exec(stream agentpb.Agent_ExecServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	st := first.GetStart()
	if err := validateStart(st); err != nil {
		return err
	}
	var usr *execUser
	if st.User != "" {
		if usr, err = lookupUser(st.User); err != nil {
			return err
		}
	}
	cmd := newExecCommand(st, usr)
	snd := newExecSender(stream)
	began := time.Now()
	path, err := cmd.resolve()
	if err != nil {
		return snd.refuse(127, err.Error(), began)
	}
	pipes, err := openExecPipes(st.Stdin, st.Pty)
	if err != nil {
		snd.abandon()
		return err
	}
	cg := newExecCgroup()
	defer cg.release()
	pid, exited, err := s.startExec(path, cmd, pipes, cg)
	if err != nil {
		pipes.closeAgentEnds()
		return snd.refuse(126, startFailure(path, cmd.argv[0], err), began)
	}
	snd.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_StartedPid{StartedPid: int32(pid)}}
	run := &execRun{pid: pid, cg: cg, pipes: pipes, maxOut: cmd.maxOut}
	run.startPumps(snd.out)
	hostGone := run.serveHost(stream)
	ws, timedOut := run.wait(stream.Context().Done(), time.Duration(st.TimeoutMs)*time.Millisecond, exited, hostGone)
	run.drain()
	if cg != nil && st.TimeoutMs > 0 && !timedOut && populated(cg.path) {
		cg.lingering = true
		cg.killAtDeadline(began.Add(time.Duration(st.TimeoutMs) * time.Millisecond))
	}
	return snd.finish(run.exit(ws, timedOut, began))
}

// execCommand is what an ExecStart resolves to: argv (a shell command
// runs under /bin/sh -c), the merged environment, the working directory
// (default /), the per-stream output cap (default DefaultMaxOutput), the
// user it runs as (nil: root) and whether it runs on a terminal.
type execCommand struct {
	argv   []string
	env    []string
	cwd    string
	maxOut int64
	user   *execUser // nil: root, the agent's own user
	pty    bool
}

func newExecCommand(st *agentpb.ExecStart, usr *execUser) execCommand {
	base := defaultEnv
	if st.Pty != nil {
		base = mergeEnv(base, []string{"TERM=xterm-256color"})
	}
	if usr != nil {
		base = mergeEnv(base, usr.env())
	}
	c := execCommand{argv: st.Argv, env: mergeEnv(base, st.Env), cwd: st.Cwd, maxOut: st.MaxOutputBytes,
		pty: st.Pty != nil}
	if usr != nil && usr.cred.Uid != 0 {
		c.user = usr
	}
	if st.Shell != "" {
		c.argv = []string{"/bin/sh", "-c", st.Shell}
	}
	if c.cwd == "" {
		c.cwd = "/"
	}
	if c.maxOut == 0 {
		c.maxOut = DefaultMaxOutput
	}
	return c
}

// resolve finds the executable on the command's PATH and checks that its
// working directory is one.
func (c execCommand) resolve() (string, error) {
	path, err := lookPath(c.argv[0], c.env)
	if err != nil {
		return "", err
	}
	if fi, serr := os.Stat(c.cwd); serr != nil || !fi.IsDir() {
		return "", fmt.Errorf("cwd %s: not a directory", c.cwd)
	}
	return path, nil
}

// startFailure says why path could not be started. execve's ENOENT for a
// file that exists means its interpreter is missing: the #! line's
// program, or an ELF's dynamic loader. A template without /bin/sh runs
// binaries but no shell scripts, and "no such file or directory" for a
// file that is there sends people looking in the wrong place.
func startFailure(path, name string, err error) string {
	if errors.Is(err, syscall.ENOENT) {
		if interp := interpreterOf(path); interp != "" {
			if _, serr := os.Stat(interp); serr != nil {
				return fmt.Sprintf("start %s: its interpreter %s is not in this sandbox's template (bad interpreter)", name, interp)
			}
		}
	}
	return fmt.Sprintf("start %s: %v", name, err)
}

// interpreterOf is the program a #! script names, or an ELF's dynamic
// loader (PT_INTERP); "" when path is neither or cannot be read.
func interpreterOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if line, ok := bytes.CutPrefix(head, []byte("#!")); ok {
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if fields := strings.Fields(string(line)); len(fields) > 0 {
			return fields[0]
		}
		return ""
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return ""
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, min(p.Filesz, 4096))
			if _, err := p.ReadAt(b, 0); err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}

// execSender is the one goroutine that owns stream.Send; everything else
// hands it messages on out. After a failed send it drains out without
// sending, so no producer ever blocks.
type execSender struct {
	out  chan *agentpb.ExecResponse
	done chan error
}

func newExecSender(stream agentpb.Agent_ExecServer) *execSender {
	s := &execSender{out: make(chan *agentpb.ExecResponse, 16), done: make(chan error, 1)}
	go func() {
		var serr error
		for m := range s.out {
			if serr == nil {
				serr = stream.Send(m)
			}
		}
		s.done <- serr
	}()
	return s
}

// finish sends the exit message, the stream's last, and returns the first
// send error.
func (s *execSender) finish(exit *agentpb.ExecExit) error {
	s.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Exit{Exit: exit}}
	close(s.out)
	return <-s.done
}

// refuse ends a call whose command never ran, the way a shell would: the
// reason on stderr and exit code.
func (s *execSender) refuse(code int32, reason string, began time.Time) error {
	msg := []byte("airlock: " + reason + "\n")
	s.out <- &agentpb.ExecResponse{Msg: &agentpb.ExecResponse_Stderr{Stderr: msg}}
	return s.finish(&agentpb.ExecExit{ExitCode: code, StderrBytes: int64(len(msg)), DurationMs: time.Since(began).Milliseconds()})
}

// abandon stops the sender without an exit message: the call fails with
// an error of the agent's own.
func (s *execSender) abandon() { close(s.out) }

// startExec forks and execs the command in its own process group (and
// cgroup, when there is one), registered with the reaper so its exit
// status comes on exited. The child's pipe ends are closed either way.
func (s *Server) startExec(path string, cmd execCommand, pipes *execPipes, cg *execCgroup) (int, <-chan syscall.WaitStatus, error) {
	defer pipes.closeChildEnds()
	sys := &syscall.SysProcAttr{Setpgid: true}
	if cmd.pty {
		// A session of its own with the terminal as its controlling one
		// (fd 0 in the child): its process group is its pid, as with
		// Setpgid, so killTree reaches it the same way.
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	if cg != nil {
		sys.UseCgroupFD = true
		sys.CgroupFD = cg.fd
	}
	fork := func() (int, error) {
		return syscall.ForkExec(path, cmd.argv, &syscall.ProcAttr{
			Dir:   cmd.cwd,
			Env:   cmd.env,
			Files: []uintptr{pipes.stdinR.Fd(), pipes.stdoutW.Fd(), pipes.stderrW.Fd()},
			Sys:   sys,
		})
	}
	if cmd.user != nil {
		sys.Credential = cmd.user.cred
		return s.reaper.start(func() (int, error) { return forkNoNewPrivs(fork) })
	}
	return s.reaper.start(fork)
}

// execRun is one started command: its process tree, output pumps and
// pipes.
type execRun struct {
	pid    int
	cg     *execCgroup
	pipes  *execPipes
	maxOut int64

	outWG                  sync.WaitGroup
	stdoutPump, stderrPump *pump
}

// killTree signals the command's process group; SIGKILL also kills its
// cgroup, which catches children that left the group.
func (r *execRun) killTree(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		r.cg.kill()
	}
	_ = syscall.Kill(-r.pid, sig)
}

// startPumps starts copying stdout and stderr into out.
func (r *execRun) startPumps(out chan<- *agentpb.ExecResponse) {
	r.stdoutPump = &pump{r: r.pipes.stdoutR, max: r.maxOut, out: out, stdout: true}
	r.stderrPump = &pump{r: r.pipes.stderrR, max: r.maxOut, out: out}
	r.outWG.Add(2)
	go func() { defer r.outWG.Done(); r.stdoutPump.run() }()
	go func() { defer r.outWG.Done(); r.stderrPump.run() }()
}

// serveHost handles the host's messages (stdin, signals) until the host
// half-closes the request stream. The returned channel is closed when the
// stream breaks (host gone or call cancelled): nobody is left to read the
// output, so the caller kills the tree.
func (r *execRun) serveHost(stream agentpb.Agent_ExecServer) <-chan struct{} {
	hostGone := make(chan struct{})
	go func() {
		stdinW := r.pipes.stdinW
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
				switch {
				case stdinW != nil && r.pipes.term != nil:
					// Closing a terminal's master would hang it up:
					// end-of-file on a terminal is its EOF character.
					_, _ = stdinW.Write([]byte{pty.EOF})
				case stdinW != nil:
					stdinW.Close()
					stdinW = nil
				}
			case *agentpb.ExecRequest_Signal:
				r.killTree(syscall.Signal(m.Signal))
			case *agentpb.ExecRequest_Resize:
				if r.pipes.term != nil && m.Resize != nil {
					_ = pty.SetSize(r.pipes.term, m.Resize.Rows, m.Resize.Cols) // a bad size is ignored, as a terminal would
				}
			}
		}
	}()
	return hostGone
}

// wait waits for the command to exit, killing its tree at the timeout
// (0: none), when the host goes away, or when the call ends (the host
// cancelled it: its half-close of the request stream is not that, it
// only ends stdin). After a timeout nothing the command started outlives
// its deadline.
func (r *execRun) wait(callDone <-chan struct{}, timeoutAfter time.Duration, exited <-chan syscall.WaitStatus, hostGone <-chan struct{}) (ws syscall.WaitStatus, timedOut bool) {
	var timeout <-chan time.Time
	if timeoutAfter > 0 {
		t := time.NewTimer(timeoutAfter)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case ws = <-exited:
			if timedOut {
				r.killTree(syscall.SIGKILL)
			}
			return ws, timedOut
		case <-timeout:
			timedOut = true
			timeout = nil
			r.killTree(syscall.SIGKILL)
		case <-hostGone:
			hostGone = nil
			r.killTree(syscall.SIGKILL)
		case <-callDone:
			callDone = nil
			r.killTree(syscall.SIGKILL)
		}
	}
}

// drain waits for the output pumps. Background children may hold the
// pipes open: delivery goes on while output flows, and once both pipes
// have been idle for pipeGrace they are closed.
func (r *execRun) drain() {
	pumpsDone := make(chan struct{})
	go func() { r.outWG.Wait(); close(pumpsDone) }()
	tick := time.NewTicker(pipeGrace / 5)
	defer tick.Stop()
	for {
		select {
		case <-pumpsDone:
			return
		case <-tick.C:
			if r.stdoutPump.idleFor() > pipeGrace && r.stderrPump.idleFor() > pipeGrace {
				r.pipes.stdoutR.Close()
				r.pipes.stderrR.Close()
				<-pumpsDone
				return
			}
		}
	}
}

// exit is the stream's last message: how the command ended and what it
// wrote.
func (r *execRun) exit(ws syscall.WaitStatus, timedOut bool, began time.Time) *agentpb.ExecExit {
	exit := &agentpb.ExecExit{
		TimedOut:        timedOut,
		StdoutTruncated: r.stdoutPump.total > r.maxOut,
		StderrTruncated: r.stderrPump.total > r.maxOut,
		StdoutBytes:     r.stdoutPump.total,
		StderrBytes:     r.stderrPump.total,
		DurationMs:      time.Since(began).Milliseconds(),
	}
	switch {
	case ws.Exited():
		exit.ExitCode = int32(ws.ExitStatus())
	case ws.Signaled():
		exit.ExitCode = 128 + int32(ws.Signal())
		exit.Signal = unix.SignalName(ws.Signal())
	}
	return exit
}
