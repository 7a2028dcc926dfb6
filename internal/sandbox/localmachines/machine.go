package localmachines

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/tarfs"
)

// machine is one local machine: see the package doc.
type machine struct {
	id, stateDir, root string // immutable
	vmm                *vmm   // immutable

	mu        sync.Mutex
	destroyed bool               // guarded by mu
	execs     map[*exec.Cmd]bool // guarded by mu; commands running
}

func (m *machine) ID() string              { return m.id }
func (m *machine) PID() int                { return m.vmm.pid() }
func (m *machine) StateDir() string        { return m.stateDir }
func (m *machine) Exited() <-chan struct{} { return m.vmm.exited }

// ExitError says how the VMM ended; nil while it runs and after a Destroy.
func (m *machine) ExitError() error {
	m.mu.Lock()
	destroyed := m.destroyed
	m.mu.Unlock()
	if destroyed || !m.vmm.hasExited() {
		return nil
	}
	return fmt.Errorf("VMM %d ended: %v", m.vmm.pid(), m.vmm.err)
}

// ended reports whether calls into the machine must fail.
func (m *machine) ended() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.destroyed || m.vmm.hasExited()
}

func (m *machine) errEnded() error {
	return errdefs.Unavailable("machine %s has ended", m.id)
}

// Prepare records the machine's identity.
func (m *machine) Prepare(ctx context.Context, sandboxID string) error {
	if m.ended() {
		return m.errEnded()
	}
	return os.WriteFile(filepath.Join(m.stateDir, "identity"), []byte(sandboxID), 0o600)
}

// Destroy kills every command and the VMM, then removes the state
// directory. Calls in flight fail at once.
func (m *machine) Destroy(ctx context.Context) error {
	m.mu.Lock()
	m.destroyed = true
	cmds := make([]*exec.Cmd, 0, len(m.execs))
	for c := range m.execs {
		cmds = append(cmds, c)
	}
	m.mu.Unlock()
	for _, c := range cmds {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	if err := m.vmm.kill(ctx); err != nil {
		return err
	}
	return os.RemoveAll(m.stateDir)
}

// path maps a guest path into the machine's root.
func (m *machine) path(p string) (string, error) { return underRoot(m.root, p) }

// Exec runs the command on the host with the guest root as its working
// directory, in a process group of its own that Destroy kills.
func (m *machine) Exec(ctx context.Context, opts guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error) {
	argv := opts.Argv
	if opts.Shell != "" {
		argv = []string{"/bin/sh", "-c", opts.Shell}
	}
	if len(argv) == 0 {
		return guest.ExecResult{}, errdefs.InvalidArgument("exec needs argv or a shell command")
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd = "/"
	}
	dir, err := m.path(cwd)
	if err != nil {
		return guest.ExecResult{}, err
	}
	outc, errc := &counter{w: stdout, max: opts.MaxOutputBytes}, &counter{w: stderr, max: opts.MaxOutputBytes}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, opts.Stdin, outc, errc
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.root}, opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.asUser(cmd, opts.User); err != nil {
		return guest.ExecResult{}, err
	}
	var term *terminal
	if opts.Pty != nil {
		if term, err = openTerminal(cmd, opts, outc); err != nil {
			return guest.ExecResult{}, err
		}
	}
	began := time.Now()
	if err := m.startCmd(cmd); err != nil {
		term.close()
		return guest.ExecResult{}, err
	}
	term.started()
	stopSignals := forwardSignals(cmd.Process.Pid, opts.Signals)
	timedOut := m.waitCmd(ctx, cmd, opts.Timeout)
	stopSignals()
	term.wait()
	res := guest.ExecResult{TimedOut: timedOut, Duration: time.Since(began),
		StdoutBytes: outc.n, StderrBytes: errc.n, StdoutTruncated: outc.dropped, StderrTruncated: errc.dropped}
	if m.ended() {
		return res, m.errEnded() // the machine went under the call, as a VM's transport would
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited():
		res.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		res.ExitCode, res.Signal = 128+int(ws.Signal()), unix.SignalName(ws.Signal()) // as the agent names it
	}
	return res, nil
}

// forwardSignals delivers each signal on sigs to the process group of
// pid, as the agent does, until the returned stop is called.
func forwardSignals(pid int, sigs <-chan syscall.Signal) (stop func()) {
	if sigs == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				_ = syscall.Kill(-pid, sig)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startCmd starts cmd as one of the machine's commands, unless the
// machine has ended.
func (m *machine) startCmd(cmd *exec.Cmd) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.destroyed || m.vmm.hasExited() {
		return m.errEnded()
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	m.execs[cmd] = true
	return nil
}

// waitCmd waits for cmd, killing its group at the timeout (reported) or
// when ctx ends.
func (m *machine) waitCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (timedOut bool) {
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		select {
		case <-done:
			m.mu.Lock()
			delete(m.execs, cmd)
			m.mu.Unlock()
			return timedOut
		case <-expire:
			timedOut, expire = true, nil
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			ctx = context.Background()
		}
	}
}

// counter counts what a command writes and passes on up to max bytes (0:
// no cap).
type counter struct {
	w       io.Writer
	max     int64
	n       int64
	dropped bool
}

func (c *counter) Write(p []byte) (int, error) {
	keep := p
	if c.max > 0 && c.n+int64(len(p)) > c.max {
		keep = p[:max(c.max-c.n, 0)]
		c.dropped = true
	}
	c.n += int64(len(p))
	if c.w != nil && len(keep) > 0 {
		if _, err := c.w.Write(keep); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// WriteFile writes r to path, creating parents if asked.
func (m *machine) WriteFile(ctx context.Context, path string, r io.Reader, mode uint32, makeParents bool) (int64, error) {
	if m.ended() {
		return 0, m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return 0, err
	}
	if makeParents {
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			return 0, fsError(path, err)
		}
	}
	perm := fs.FileMode(mode & 0o7777)
	if perm == 0 {
		perm = 0o644 // as the agent does
	}
	f, err := os.OpenFile(hp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return 0, fsError(path, err)
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

// ReadFile copies a regular file of at most maxBytes (0: any size) to w.
func (m *machine) ReadFile(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	if m.ended() {
		return 0, m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(hp)
	if err != nil {
		return 0, fsError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return 0, fsError(path, err)
	case !fi.Mode().IsRegular():
		return 0, errdefs.InvalidArgument("%s is not a regular file", path)
	case maxBytes > 0 && fi.Size() > maxBytes:
		return 0, errdefs.ResourceExhausted("%s is larger than %d bytes", path, maxBytes)
	}
	return io.Copy(w, f)
}

// Stat describes path (a symlink itself, not its target).
func (m *machine) Stat(ctx context.Context, path string) (*agentpb.FileInfo, error) {
	if m.ended() {
		return nil, m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(hp)
	if err != nil {
		return nil, fsError(path, err)
	}
	return fileInfo(path, hp, fi), nil
}

// List describes the entries of directory path, by name.
func (m *machine) List(ctx context.Context, path string) ([]*agentpb.FileInfo, error) {
	if m.ended() {
		return nil, m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(hp)
	if err != nil {
		return nil, fsError(path, err)
	}
	out := make([]*agentpb.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		p := filepath.Join(path, e.Name())
		out = append(out, fileInfo(p, filepath.Join(hp, e.Name()), fi))
	}
	return out, nil
}

func fileInfo(path, hostPath string, fi fs.FileInfo) *agentpb.FileInfo {
	out := &agentpb.FileInfo{Path: path, Name: fi.Name(), Size: fi.Size(), Mode: uint32(fi.Mode()),
		IsDir: fi.IsDir(), ModUnixNanos: fi.ModTime().UnixNano()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		out.SymlinkTarget, _ = os.Readlink(hostPath)
	}
	return out
}

// Remove deletes path (a non-empty directory only if recursive).
func (m *machine) Remove(ctx context.Context, path string, recursive bool) error {
	if m.ended() {
		return m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(hp); err != nil {
		return fsError(path, err)
	}
	if recursive {
		return os.RemoveAll(hp)
	}
	return fsError(path, os.Remove(hp))
}

// Mkdir creates directory path (and its parents if asked).
func (m *machine) Mkdir(ctx context.Context, path string, mode uint32, parents bool) error {
	if m.ended() {
		return m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return err
	}
	perm := fs.FileMode(mode & 0o7777)
	if perm == 0 {
		perm = 0o755
	}
	if parents {
		return fsError(path, os.MkdirAll(hp, perm))
	}
	return fsError(path, os.Mkdir(hp, perm))
}

// EgressCheck: a local machine has no network, so every attempt fails
// inside the machine, as it would in a guest without a route.
func (m *machine) EgressCheck(ctx context.Context, targets []guest.EgressTarget, timeout time.Duration) ([]guest.EgressResult, error) {
	if m.ended() {
		return nil, m.errEnded()
	}
	out := make([]guest.EgressResult, len(targets))
	for i := range out {
		out[i] = guest.EgressResult{Outcome: agentpb.EgressOutcome_EGRESS_LOCAL_ERROR, Detail: "no network"}
	}
	return out, nil
}

// fsError classes a filesystem error with the agent's own mapping
// (errdefs.FSClass), so a local machine fails exactly as a guest does.
func fsError(path string, err error) error {
	if err == nil {
		return nil
	}
	var perr *fs.PathError
	if errors.As(err, &perr) {
		err = perr.Err
	}
	return errdefs.New(errdefs.FSClass(err), "%s: %v", path, err)
}

// WriteArchive unpacks the tar stream into directory dir with the same
// confined extraction the guest agent uses (internal/tarfs).
func (m *machine) WriteArchive(ctx context.Context, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error) {
	if m.ended() {
		return guest.ArchiveStats{}, m.errEnded()
	}
	hp, err := m.path(dir)
	if err != nil {
		return guest.ArchiveStats{}, err
	}
	if err := os.MkdirAll(hp, 0o755); err != nil {
		return guest.ArchiveStats{}, fsError(dir, err)
	}
	st, err := tarfs.Extract(r, hp, tarfs.Options{Limits: tarfs.Limits{MaxBytes: maxBytes}})
	return guest.ArchiveStats{Entries: st.Entries, Bytes: st.Bytes}, err
}

// ReadArchive packs path as the guest agent does; nothing reaches w
// before the first chunk is ready, so early errors leave w untouched.
func (m *machine) ReadArchive(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	if m.ended() {
		return 0, m.errEnded()
	}
	hp, err := m.path(path)
	if err != nil {
		return 0, err
	}
	if path == "/" {
		return 0, errdefs.InvalidArgument("read archive /: name a directory below /")
	}
	bw := bufio.NewWriterSize(w, guest.ChunkSize)
	st, err := tarfs.Pack(bw, hp, tarfs.PackOptions{Prefix: filepath.Base(hp), MaxBytes: maxBytes})
	if err == nil {
		err = bw.Flush()
	}
	return st.Bytes, err
}
