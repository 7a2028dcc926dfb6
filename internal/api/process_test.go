package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/api"
)

func decodeAs[T any](t *testing.T, r resp, status int) T {
	t.Helper()
	var v T
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// The process routes, end to end over HTTP on the real manager: start,
// follow the output, list, a wait that times out, kill, wait, and every
// refusal with its code.
func TestProcessRoutes(t *testing.T) {
	h := newHarness(t, api.Config{})
	sb := decodeAs[wire.Sandbox](t, h.do("POST", "/v1/sandboxes", h.keyA, map[string]any{"template": "base"}), http.StatusCreated)
	base := "/v1/sandboxes/" + sb.ID + "/processes"
	p := decodeAs[wire.Process](t, h.do("POST", base, h.keyA, map[string]any{"cmd": "cat; echo oops >&2; sleep 30", "stdin": "hi\n"}), http.StatusCreated)
	if p.ID != "p-1" || p.State != "running" || p.Cmd == "" || p.SandboxID != sb.ID || p.ExitCode != nil {
		t.Fatalf("started: %+v", p)
	}
	var got string
	var off int64
	for !strings.Contains(got, "hi\n") {
		out := decodeAs[wire.ProcessOutput](t, h.do("GET", base+"/p-1/output?wait_seconds=10&offset="+itoa(off), h.keyA, nil), http.StatusOK)
		got += string(out.Data)
		off = out.NextOffset
		if out.EOF || out.Stream != "stdout" {
			t.Fatalf("output: %+v", out)
		}
	}
	list := decodeAs[wire.ProcessList](t, h.do("GET", base, h.keyA, nil), http.StatusOK)
	if len(list.Processes) != 1 || list.Processes[0].ID != "p-1" {
		t.Fatalf("list: %+v", list)
	}
	if r := h.do("POST", base+"/p-1/wait?timeout_seconds=0", h.keyA, nil); r.status != http.StatusGatewayTimeout || r.code() != "deadline_exceeded" {
		t.Fatalf("wait on a running process: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/sandboxes/"+sb.ID+"/fork", h.keyA, map[string]any{}); r.status != http.StatusConflict {
		t.Fatalf("fork with a process running: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		method, path, key string
		body              any
		status            int
		code              string
	}{
		{"GET", base + "/p-1", h.keyB, nil, 404, "not_found"},
		{"GET", base, h.keyB, nil, 404, "not_found"},
		{"DELETE", base + "/p-1", h.keyB, nil, 404, "not_found"},
		{"GET", base + "/p-1/output", h.keyB, nil, 404, "not_found"},
		{"POST", base, h.keyB, map[string]any{"cmd": "true"}, 404, "not_found"},
		{"GET", base + "/p-2", h.keyA, nil, 404, "not_found"},
		{"GET", base + "/x", h.keyA, nil, 400, "invalid_argument"},
		{"GET", base + "/p-1/output?stream=both", h.keyA, nil, 400, "invalid_argument"},
		{"GET", base + "/p-1/output?offset=999999", h.keyA, nil, 400, "invalid_argument"},
		{"GET", base + "/p-1/output?wait_seconds=61", h.keyA, nil, 400, "invalid_argument"},
		{"GET", base + "/p-1/output?bogus=1", h.keyA, nil, 400, "invalid_argument"},
		{"POST", base + "/p-1/wait?timeout_seconds=-1", h.keyA, nil, 400, "invalid_argument"},
		{"DELETE", base + "/p-1?signal=STOP", h.keyA, nil, 400, "invalid_argument"},
		{"POST", base, h.keyA, map[string]any{}, 400, "invalid_argument"},
		{"POST", base, h.keyA, map[string]any{"cmd": "true", "max_output_bytes": 5}, 400, "invalid_argument"},
	} {
		if r := h.do(c.method, c.path, c.key, c.body); r.status != c.status || r.code() != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, r.status, r.body, c.status, c.code)
		}
	}
	// The kill must come after the process wrote to stderr, which it does
	// after cat ends: wait for that state, however slow the machine.
	for off := int64(0); off < 5; {
		out := decodeAs[wire.ProcessOutput](t, h.do("GET", base+"/p-1/output?stream=stderr&wait_seconds=10&offset="+itoa(off), h.keyA, nil), http.StatusOK)
		off = out.NextOffset
	}
	decodeAs[wire.Process](t, h.do("DELETE", base+"/p-1?signal=TERM", h.keyA, nil), http.StatusOK)
	end := decodeAs[wire.Process](t, h.do("POST", base+"/p-1/wait?timeout_seconds=60", h.keyA, nil), http.StatusOK)
	if end.State != "killed" || end.Signal != "SIGTERM" || end.ExitCode == nil || *end.ExitCode != 143 || end.EndedAt == nil || end.StdoutBytes != 3 || end.StderrBytes != 5 {
		t.Fatalf("ended: %+v", end)
	}
	errOut := decodeAs[wire.ProcessOutput](t, h.do("GET", base+"/p-1/output?stream=stderr", h.keyA, nil), http.StatusOK)
	if string(errOut.Data) != "oops\n" || !errOut.EOF || errOut.NextOffset != 5 {
		t.Fatalf("stderr: %+v", errOut)
	}
	if r := h.do("DELETE", base+"/p-1", h.keyA, nil); r.status != http.StatusConflict {
		t.Fatalf("kill of an ended process: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/v1/sandboxes/"+sb.ID, h.keyA, nil); r.status != http.StatusNoContent {
		t.Fatalf("kill sandbox: %d", r.status)
	}
	if r := h.do("GET", base, h.keyA, nil); r.status != http.StatusConflict || r.code() != "failed_precondition" {
		t.Fatalf("processes of a killed sandbox: %d %s", r.status, r.body)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
