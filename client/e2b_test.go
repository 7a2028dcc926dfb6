package client_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
)

// The client's stdin, pty, user, pause and resume calls against the real
// manager over local machines.
func TestStdinPtyPause(t *testing.T) {
	env := apitest.StartLocal(t, api.Config{})
	c, err := client.New("unix://"+env.Socket, env.Key(t, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sb.StartProcess(ctx, client.ProcessRequest{Cmd: "cat", StdinOpen: true})
	if err != nil || !p.StdinOpen {
		t.Fatalf("start: %+v %v", p, err)
	}
	if err := p.WriteStdin(ctx, []byte("one\xff\n")); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseStdin(ctx); err != nil || p.StdinOpen {
		t.Fatalf("close: %+v %v", p.ProcessInfo, err)
	}
	if err := p.Wait(ctx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	out, err := p.Output(ctx, client.Stdout, 0)
	if err != nil || !bytes.Equal(out.Data, []byte("one\xff\n")) {
		t.Errorf("cat echoed %q, %v", out.Data, err)
	}
	if err := p.WriteStdin(ctx, []byte("late")); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("write after the end: %v", err)
	}
	term, err := sb.StartProcess(ctx, client.ProcessRequest{Cmd: "read x; stty size", Pty: &client.WindowSize{Rows: 24, Cols: 80}})
	if err != nil {
		t.Fatal(err)
	}
	if err := term.Resize(ctx, 33, 99); err != nil || term.Pty == nil || term.Pty.Rows != 33 {
		t.Fatalf("resize: %+v %v", term.ProcessInfo, err)
	}
	if err := term.WriteStdin(ctx, []byte("\n")); err != nil {
		t.Fatal(err)
	}
	if err := term.Wait(ctx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, "stty size", client.WithPty(10, 20))
	if err != nil || res.Stdout != "10 20\r\n" {
		t.Errorf("exec on a pty: %+v %v", res, err)
	}
	if _, err := sb.Exec(ctx, "true", client.WithUser("nobody-here")); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("unknown user: %v", err)
	}
	if err := sb.Pause(ctx); err != nil || sb.State != "paused" {
		t.Fatalf("pause: %+v %v", sb.SandboxInfo, err)
	}
	if _, err := sb.Exec(ctx, "true"); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("exec while paused: %v", err)
	}
	if again, err := c.GetSandbox(ctx, sb.ID); err != nil || again.State != "paused" {
		t.Fatalf("get while paused: %+v %v", again, err)
	}
	again, err := c.ConnectSandbox(ctx, sb.ID) // resumes it
	if err != nil || again.State != "running" {
		t.Fatalf("connect to a paused sandbox: %+v %v", again, err)
	}
	if err := again.Resume(ctx); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("resume of a running sandbox: %v", err)
	}
	if res, err := again.Exec(ctx, "echo back"); err != nil || res.Stdout != "back\n" {
		t.Errorf("after resume: %+v %v", res, err)
	}
	if err := again.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConnectSandbox(ctx, sb.ID); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Errorf("connect to a killed sandbox: %v", err)
	}
}
