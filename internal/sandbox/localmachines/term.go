package localmachines

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/pty"
)

// asUser makes cmd run as the user name of the machine's /etc/passwd (in
// its root), as the agent does with the guest's: an unknown user is
// invalid_argument, root (or "") changes nothing, and running as another
// user needs this process to be root.
func (m *machine) asUser(cmd *exec.Cmd, name string) error {
	if name == "" || name == "root" {
		return nil
	}
	uid, gid, home, ok := lookupPasswd(filepath.Join(m.root, "etc/passwd"), name)
	if !ok {
		return errdefs.InvalidArgument("user %q does not exist in the guest (not in its /etc/passwd)", name)
	}
	if uid == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return errdefs.FailedPrecondition("local machines run commands as another user only when the test runs as root")
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	cmd.Env = append(cmd.Env, "HOME="+home, "USER="+name, "LOGNAME="+name)
	return nil
}

// lookupPasswd finds name (or a uid) in a passwd file.
func lookupPasswd(path, name string) (uid, gid int, home string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ":")
		if len(fs) < 6 || (fs[0] != name && fs[2] != name) {
			continue
		}
		u, uerr := strconv.Atoi(fs[2])
		g, gerr := strconv.Atoi(fs[3])
		return u, g, fs[5], uerr == nil && gerr == nil
	}
	return 0, 0, "", false
}

// terminal is a command's pty, as the agent makes it: the slave is its
// stdin, stdout and stderr and controlling terminal; what it writes
// arrives on stdout; the end of the caller's stdin is the EOF character;
// resizes are applied as they come.
type terminal struct {
	master, slave *os.File
	copied        chan struct{} // closed when the output copy ends
	stop          chan struct{} // closed when the command has ended
}

func openTerminal(cmd *exec.Cmd, opts guest.ExecOptions, out io.Writer) (*terminal, error) {
	if err := pty.CheckSize(opts.Pty.Rows, opts.Pty.Cols); err != nil {
		return nil, errdefs.InvalidArgument("pty: %v", err)
	}
	master, slave, err := pty.Open(opts.Pty.Rows, opts.Pty.Cols)
	if err != nil {
		return nil, err
	}
	t := &terminal{master: master, slave: slave, copied: make(chan struct{}), stop: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: cmd.SysProcAttr.Credential}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	go func() {
		defer close(t.copied)
		_, _ = io.Copy(out, master) // ends with EIO once the terminal's last user closed it
	}()
	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(master, opts.Stdin)
			_, _ = master.Write([]byte{pty.EOF})
		}()
	}
	if opts.Resize != nil {
		go func() {
			for {
				select {
				case <-t.stop:
					return
				case ws := <-opts.Resize:
					_ = pty.SetSize(master, ws.Rows, ws.Cols)
				}
			}
		}()
	}
	return t, nil
}

// started closes this process's copy of the slave: the command has its own.
func (t *terminal) started() {
	if t != nil {
		t.slave.Close()
	}
}

// wait lets the output copy finish, then closes the terminal.
func (t *terminal) wait() {
	if t == nil {
		return
	}
	close(t.stop)
	select {
	case <-t.copied:
	case <-time.After(500 * time.Millisecond): // a background child holds the terminal, as the agent's pipeGrace
	}
	t.master.Close()
	<-t.copied
}

// close is for a command that never started.
func (t *terminal) close() {
	if t != nil {
		close(t.stop)
		t.slave.Close()
		t.master.Close()
	}
}
