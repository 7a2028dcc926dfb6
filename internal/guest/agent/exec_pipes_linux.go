//go:build linux

package agent

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/pty"
)

// execPipes are one exec's standard streams: the child's ends, handed to
// it at fork and closed here right after, and the agent's.
type execPipes struct {
	stdinR, stdoutW, stderrW *os.File // the child's
	stdinW                   *os.File // nil when stdin is /dev/null
	stdoutR, stderrR         *os.File
	// term is the terminal's master for a process on a pty (nil
	// otherwise): stdoutR reads it (stdout and stderr merged), stdinW is a
	// second descriptor of it, and stderrR is a pipe that ends at once.
	term *os.File
}

// openExecPipes makes the three pipes (stdin from /dev/null unless the
// host streams it), or a terminal of size ws when ws is set. When one
// cannot be made, those already made are closed.
func openExecPipes(stdin bool, ws *agentpb.WindowSize) (_ *execPipes, err error) {
	if ws != nil {
		return openExecTerminal(ws)
	}
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(context.Background()) }() // closing fresh pipes cannot fail usefully
	p := &execPipes{}
	if p.stdinR, p.stdinW, err = stdinPipe(stdin); err != nil {
		return nil, status.Errorf(codes.Internal, "stdin: %v", err)
	}
	cu.AddFunc(func() { closeFiles(p.stdinR, p.stdinW) })
	if p.stdoutR, p.stdoutW, err = os.Pipe(); err != nil {
		return nil, status.Errorf(codes.Internal, "stdout pipe: %v", err)
	}
	cu.AddFunc(func() { closeFiles(p.stdoutR, p.stdoutW) })
	if p.stderrR, p.stderrW, err = os.Pipe(); err != nil {
		return nil, status.Errorf(codes.Internal, "stderr pipe: %v", err)
	}
	cu.Release()
	return p, nil
}

// openExecTerminal makes a terminal for one exec: the slave is the
// child's stdin, stdout and stderr (and its controlling terminal), the
// master the agent's. Its stdin is always open: a terminal has no
// /dev/null mode.
func openExecTerminal(ws *agentpb.WindowSize) (_ *execPipes, err error) {
	master, slave, err := pty.Open(ws.Rows, ws.Cols)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "pty: %v", err)
	}
	p := &execPipes{term: master, stdoutR: master, stdinR: slave, stdoutW: slave, stderrW: slave}
	defer func() {
		if err != nil {
			closeFiles(master, slave, p.stdinW, p.stderrR)
		}
	}()
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "pty: dup: %v", err)
	}
	p.stdinW = os.NewFile(uintptr(fd), master.Name())
	var w *os.File
	if p.stderrR, w, err = os.Pipe(); err != nil {
		return nil, status.Errorf(codes.Internal, "stderr pipe: %v", err)
	}
	w.Close() // nothing writes stderr apart from the terminal
	return p, nil
}

// closeChildEnds closes the ends the child got (its copies live on).
func (p *execPipes) closeChildEnds() { closeFiles(p.stdinR, p.stdoutW, p.stderrW) }

// closeAgentEnds closes the agent's ends, for a child that never started.
func (p *execPipes) closeAgentEnds() { closeFiles(p.stdoutR, p.stderrR, p.stdinW) }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
