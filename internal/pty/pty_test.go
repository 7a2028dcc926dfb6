//go:build linux

package pty

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// A process on the terminal sees a terminal of the size asked for, its
// output arrives on the master, and a resize is seen by the next reader.
func TestOpenRunResize(t *testing.T) {
	master, slave, err := Open(24, 80)
	if err != nil {
		t.Skipf("no ptys here: %v", err)
	}
	defer master.Close()
	cmd := exec.Command("/bin/sh", "-c", `stty size; test -t 0 && echo tty; read x; echo "got $x"; stty size`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	// The resize waits until the shell has printed its first size (and
	// "tty" after it), so that size is the one asked for at Open.
	out := make(chan []byte, 1)
	sized := make(chan struct{})
	go func(sized chan struct{}) {
		var buf bytes.Buffer
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			buf.Write(b[:n])
			if sized != nil && (bytes.Contains(buf.Bytes(), []byte("tty")) || err != nil) {
				close(sized)
				sized = nil
			}
			if err != nil {
				out <- buf.Bytes()
				return
			}
		}
	}(sized)
	<-sized
	if err := SetSize(master, 30, 100); err != nil {
		t.Fatal(err)
	}
	if r, c, err := Size(master); err != nil || r != 30 || c != 100 {
		t.Fatalf("size = %d x %d, %v", r, c, err)
	}
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	got := string(<-out)
	for _, want := range []string{"24 80", "tty", "got hello", "30 100"} {
		if !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("output %q lacks %q", got, want)
		}
	}
}

func TestBadSizes(t *testing.T) {
	for _, s := range [][2]uint32{{0, 80}, {24, 0}, {MaxRows + 1, 80}, {24, MaxCols + 1}} {
		if _, _, err := Open(s[0], s[1]); err == nil {
			t.Errorf("Open(%v) accepted", s)
		}
	}
	f, _ := os.Open(os.DevNull)
	defer f.Close()
	if err := SetSize(f, 0, 0); err == nil || errors.Is(err, os.ErrClosed) {
		t.Errorf("SetSize(0, 0) = %v", err)
	}
}
