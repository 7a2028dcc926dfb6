//go:build linux

package agent

import (
	"os/user"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// execUser is a guest user a process runs as (ExecStart.user).
type execUser struct {
	name string
	cred *syscall.Credential
	home string
}

// lookupUser finds name (or a uid) in the guest's /etc/passwd, with its
// groups from /etc/group. The agent is built without cgo, so os/user
// reads those files and nothing else (no NSS modules run in PID 1). An
// unknown user is invalid_argument: the caller named a user the
// template does not have.
func lookupUser(name string) (*execUser, error) {
	u, err := user.Lookup(name)
	if _, numeric := strconv.Atoi(name); err != nil && numeric == nil {
		u, err = user.LookupId(name)
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "user %q does not exist in the guest (not in its /etc/passwd)", name)
	}
	uid, uerr := strconv.ParseUint(u.Uid, 10, 32)
	gid, gerr := strconv.ParseUint(u.Gid, 10, 32)
	if uerr != nil || gerr != nil {
		return nil, status.Errorf(codes.InvalidArgument, "user %q has a non-numeric uid or gid in the guest's /etc/passwd", name)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	gids, _ := u.GroupIds() // no /etc/group entry: the primary group alone
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			cred.Groups = append(cred.Groups, uint32(n))
		}
	}
	return &execUser{name: u.Username, cred: cred, home: u.HomeDir}, nil
}

// env is what the user's processes get in their base environment.
func (u *execUser) env() []string {
	home := u.home
	if home == "" {
		home = "/"
	}
	return []string{"HOME=" + home, "USER=" + u.name, "LOGNAME=" + u.name}
}

// forkNoNewPrivs runs fork on an OS thread of its own with no_new_privs
// set, so the process it forks inherits the flag: once it has dropped to
// another user it can never gain privileges again (setuid and
// file-capability binaries run without them), so a process started as a
// user cannot become root again. The flag cannot be cleared, so the
// thread is never unlocked: Go ends it with the goroutine, and no other
// goroutine (nor any later root exec) ever runs on it.
func forkNoNewPrivs(fork func() (int, error)) (int, error) {
	type result struct {
		pid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- result{0, err}
			return
		}
		pid, err := fork()
		done <- result{pid, err}
	}()
	r := <-done
	return r.pid, r.err
}
