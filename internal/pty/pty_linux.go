//go:build linux

package pty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Open returns a new terminal pair of the given size: the master (the
// caller's end, non-blocking so that closing it interrupts a read) and
// the slave (the process's stdin, stdout and stderr, and its controlling
// terminal once it calls setsid with TIOCSCTTY). Both are close-on-exec;
// the caller hands the slave to the child explicitly.
func Open(rows, cols uint32) (master, slave *os.File, err error) {
	if err := CheckSize(rows, cols); err != nil {
		return nil, nil, err
	}
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(mfd), "/dev/ptmx")
	defer func() {
		if err != nil {
			master.Close()
		}
	}()
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	slave = os.NewFile(uintptr(sfd), name)
	if err := SetSize(master, rows, cols); err != nil {
		slave.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// SetSize sets the terminal's window size; the kernel sends SIGWINCH to
// its foreground process group.
func SetSize(f *os.File, rows, cols uint32) error {
	if err := CheckSize(rows, cols); err != nil {
		return err
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		serr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("set window size: %w", serr)
	}
	return nil
}

// Size reads the terminal's window size.
func Size(f *os.File) (rows, cols uint32, err error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var ws *unix.Winsize
	var gerr error
	if err := sc.Control(func(fd uintptr) { ws, gerr = unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ) }); err != nil {
		return 0, 0, err
	}
	if gerr != nil {
		return 0, 0, gerr
	}
	return uint32(ws.Row), uint32(ws.Col), nil
}
