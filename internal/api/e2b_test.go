package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/wire"
)

// stdin and resize over HTTP on the real manager: a process started with
// stdin open takes writes until one closes it, a pty process is
// resized, and every refusal has its code.
func TestProcessStdinAndResizeRoutes(t *testing.T) {
	h := newHarness(t, api.Config{})
	sb := decodeAs[wire.Sandbox](t, h.do("POST", "/v1/sandboxes", h.keyA, map[string]any{"template": "base"}), http.StatusCreated)
	base := "/v1/sandboxes/" + sb.ID + "/processes"
	p := decodeAs[wire.Process](t, h.do("POST", base, h.keyA, map[string]any{"cmd": "cat", "stdin": "a\n", "stdin_open": true}), http.StatusCreated)
	if !p.StdinOpen {
		t.Fatalf("started: %+v", p)
	}
	decodeAs[wire.Process](t, h.do("POST", base+"/"+p.ID+"/stdin", h.keyA, map[string]any{"data": "b\n"}), http.StatusOK)
	closed := decodeAs[wire.Process](t, h.do("POST", base+"/"+p.ID+"/stdin", h.keyA, map[string]any{"data_base64": "Ywo=", "close": true}), http.StatusOK)
	if closed.StdinOpen {
		t.Errorf("after close: %+v", closed)
	}
	done := decodeAs[wire.Process](t, h.do("POST", base+"/"+p.ID+"/wait?timeout_seconds=20", h.keyA, nil), http.StatusOK)
	out := decodeAs[wire.ProcessOutput](t, h.do("GET", base+"/"+p.ID+"/output", h.keyA, nil), http.StatusOK)
	if string(out.Data) != "a\nb\nc\n" || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Errorf("cat read %q, ended %+v", out.Data, done)
	}
	term := decodeAs[wire.Process](t, h.do("POST", base, h.keyA, map[string]any{"cmd": "read x; stty size", "pty": map[string]any{"rows": 24, "cols": 80}}), http.StatusCreated)
	if term.Pty == nil || term.Pty.Rows != 24 || !term.StdinOpen {
		t.Fatalf("pty process: %+v", term)
	}
	resized := decodeAs[wire.Process](t, h.do("POST", base+"/"+term.ID+"/resize", h.keyA, map[string]any{"rows": 50, "cols": 132}), http.StatusOK)
	if resized.Pty == nil || resized.Pty.Cols != 132 {
		t.Errorf("resized: %+v", resized)
	}
	for _, c := range []struct {
		path   string
		body   any
		status int
		code   string
	}{
		{base + "/" + p.ID + "/stdin", map[string]any{"data": "late"}, http.StatusConflict, "failed_precondition"},
		{base + "/" + p.ID + "/stdin", map[string]any{}, http.StatusBadRequest, "invalid_argument"},
		{base + "/" + p.ID + "/stdin", map[string]any{"data": "x", "data_base64": "eA=="}, http.StatusBadRequest, "invalid_argument"},
		{base + "/p-99/stdin", map[string]any{"data": "x"}, http.StatusNotFound, "not_found"},
		{base + "/" + p.ID + "/resize", map[string]any{"rows": 10, "cols": 10}, http.StatusConflict, "failed_precondition"},
		{base + "/" + term.ID + "/resize", map[string]any{"rows": 0, "cols": 10}, http.StatusBadRequest, "invalid_argument"},
		{base, map[string]any{"cmd": "true", "pty": map[string]any{"rows": 5000, "cols": 10}}, http.StatusBadRequest, "invalid_argument"},
		{"/v1/sandboxes/" + sb.ID + "/exec", map[string]any{"cmd": "true", "user": "no-such-user"}, http.StatusBadRequest, "invalid_argument"},
	} {
		if r := h.do("POST", c.path, h.keyA, c.body); r.status != c.status || r.code() != c.code {
			t.Errorf("POST %s %v: %d %s, want %d %s", c.path, c.body, r.status, r.body, c.status, c.code) // bodies are small
		}
	}
	if r := h.do("POST", base+"/"+term.ID+"/stdin", h.keyB, map[string]any{"data": "x"}); r.status != http.StatusNotFound {
		t.Errorf("another tenant's stdin write: %d %s", r.status, r.body)
	}
}

// pause and resume over HTTP: the paused sandbox answers get with state
// paused and refuses exec with 409 until resumed, with its files intact.
func TestPauseResumeRoutes(t *testing.T) {
	h := newHarness(t, api.Config{})
	sb := decodeAs[wire.Sandbox](t, h.do("POST", "/v1/sandboxes", h.keyA, map[string]any{"template": "base"}), http.StatusCreated)
	path := "/v1/sandboxes/" + sb.ID
	if r := h.do("PUT", path+"/files?path=/kept", h.keyA, "state"); r.status != http.StatusOK {
		t.Fatalf("write: %d %s", r.status, r.body)
	}
	if r := h.do("POST", path+"/resume", h.keyA, nil); r.status != http.StatusConflict {
		t.Errorf("resume of a running sandbox: %d %s", r.status, r.body)
	}
	paused := decodeAs[wire.Sandbox](t, h.do("POST", path+"/pause", h.keyA, nil), http.StatusOK)
	if paused.State != "paused" {
		t.Fatalf("paused: %+v", paused)
	}
	if got := decodeAs[wire.Sandbox](t, h.do("GET", path, h.keyA, nil), http.StatusOK); got.State != "paused" {
		t.Errorf("get while paused: %+v", got)
	}
	if r := h.do("POST", path+"/exec", h.keyA, map[string]any{"cmd": "true"}); r.status != http.StatusConflict || !strings.Contains(string(r.body), "paused") {
		t.Errorf("exec while paused: %d %s", r.status, r.body)
	}
	if r := h.do("POST", path+"/pause", h.keyB, nil); r.status != http.StatusNotFound {
		t.Errorf("another tenant's pause: %d %s", r.status, r.body)
	}
	if r := h.do("POST", path+"/pause?x=1", h.keyA, nil); r.status != http.StatusBadRequest {
		t.Errorf("pause with a query: %d %s", r.status, r.body)
	}
	resumed := decodeAs[wire.Sandbox](t, h.do("POST", path+"/resume", h.keyA, nil), http.StatusOK)
	if resumed.State != "running" || resumed.ID != sb.ID {
		t.Errorf("resumed: %+v", resumed)
	}
	if r := h.do("GET", path+"/files?path=/kept", h.keyA, nil); r.status != http.StatusOK || string(r.body) != "state" {
		t.Errorf("file after resume: %d %q", r.status, r.body)
	}
}
