package client_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
)

// The client's process calls against the real manager over local
// machines: start, follow, list, wait with a timeout, kill, and a process
// that exits on its own read after the fact.
func TestProcesses(t *testing.T) {
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
	p, err := sb.StartProcess(ctx, client.ProcessRequest{Cmd: "echo hi; sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Running() || p.ID != "p-1" {
		t.Fatalf("started: %+v", p.ProcessInfo)
	}
	var got []byte
	var off int64
	for !bytes.Contains(got, []byte("hi\n")) {
		out, err := p.Output(ctx, client.Stdout, off, client.WithWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got, off = append(got, out.Data...), out.NextOffset
	}
	ps, err := sb.Processes(ctx)
	if err != nil || len(ps) != 1 || ps[0].ID != p.ID || !ps[0].Running() {
		t.Fatalf("processes: %v %v", ps, err)
	}
	if err := p.Wait(ctx, 10*time.Millisecond); !errors.Is(err, client.ErrDeadlineExceeded) {
		t.Fatalf("wait with a short timeout: %v", err)
	}
	if err := p.Kill(ctx, "TERM"); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if p.State != client.ProcessKilled || p.Signal != "SIGTERM" || *p.ExitCode != 143 {
		t.Fatalf("after kill: %+v", p.ProcessInfo)
	}
	if err := p.Kill(ctx, ""); !errors.Is(err, client.ErrFailedPrecondition) {
		t.Fatalf("kill of an ended process: %v", err)
	}

	q, err := sb.StartProcess(ctx, client.ProcessRequest{Argv: []string{"sh", "-c", "cat; echo E >&2; exit 3"}, Stdin: []byte("in\n")})
	if err != nil {
		t.Fatal(err)
	}
	var so, se strings.Builder
	if _, _, err := sb.Process(q.ID).Follow(ctx, client.Stdout, 0, &so); err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if next, dropped, err := q.Follow(ctx, client.Stderr, 0, &se); err != nil || next != 2 || dropped != 0 {
		t.Fatalf("follow stderr: %d %d %v", next, dropped, err)
	}
	if q.State != client.ProcessExited || *q.ExitCode != 3 || so.String() != "in\n" || se.String() != "E\n" {
		t.Fatalf("exit 3: %+v stdout %q stderr %q", q.ProcessInfo, so.String(), se.String())
	}
	h := sb.Process(q.ID)
	if err := h.Refresh(ctx); err != nil || h.StdoutBytes != 3 || h.State != client.ProcessExited {
		t.Fatalf("refresh: %+v %v", h.ProcessInfo, err)
	}
	if err := sb.Process("p-9").Refresh(ctx); !client.IsNotFound(err) {
		t.Fatalf("unknown process: %v", err)
	}
}
