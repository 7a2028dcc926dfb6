package e2e

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/client"
)

// TestBadInput sends malformed and hostile requests to a daemon serving a
// healthy sandbox: each gets its stable error code, and the sandbox and
// the daemon carry on as if nothing happened.
func TestBadInput(t *testing.T) {
	e := getEnv(t)
	const maxUpload = 1 << 20
	d := startDaemon(t, e, "--max-upload-bytes", "1048576")
	c := d.client(t, tenantA)
	survivor := createSandbox(t, c, 300, map[string]string{"case": uniq("survivor")})
	mustExec(t, survivor, "echo before > /job/state.txt")
	sb := "/v1/sandboxes/" + survivor.ID

	alive := func(t *testing.T) {
		t.Helper()
		if got := mustExec(t, survivor, "cat /job/state.txt"); got != "before\n" {
			t.Fatalf("survivor's file after bad input: %q", got)
		}
	}
	twoMiB := bytes.Repeat([]byte("x"), 2<<20)

	cases := []struct {
		name   string
		tenant string
		method string
		path   string
		body   io.Reader
		status int
		code   string
	}{
		{"malformed JSON", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny", `), 400, "invalid_argument"},
		{"JSON of the wrong type", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": 7}`), 400, "invalid_argument"},
		{"unknown JSON field", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny", "ttl": 5}`), 400, "invalid_argument"},
		{"two JSON values", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny"} {}`), 400, "invalid_argument"},
		{"unknown template", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "no-such-template"}`), 404, "not_found"},
		{"negative TTL", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny", "ttl_seconds": -5}`), 400, "invalid_argument"},
		{"TTL past the maximum", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny", "ttl_seconds": 999999999}`), 400, "invalid_argument"},
		{"bad metadata key", tenantA, "POST", "/v1/sandboxes", strings.NewReader(`{"template": "test-tiny", "metadata": {"a b": "c"}}`), 400, "invalid_argument"},
		{"oversized upload, declared", tenantA, "PUT", sb + "/files?path=/job/big.bin", bytes.NewReader(twoMiB), 413, "resource_exhausted"},
		{"oversized upload, chunked", tenantA, "PUT", sb + "/files?path=/job/big2.bin", io.MultiReader(bytes.NewReader(twoMiB)), 413, "resource_exhausted"},
		{"path traversal write", tenantA, "PUT", sb + "/files?path=/job/../etc/passwd", strings.NewReader("root::0:0::/:/bin/sh\n"), 400, "invalid_argument"},
		{"path traversal read", tenantA, "GET", sb + "/files?path=/job/../etc/passwd", nil, 400, "invalid_argument"},
		{"relative path", tenantA, "GET", sb + "/files?path=etc/passwd", nil, 400, "invalid_argument"},
		{"NUL in path", tenantA, "GET", sb + "/files?path=/job/a%00b", nil, 400, "invalid_argument"},
		{"traversal cwd", tenantA, "POST", sb + "/exec", strings.NewReader(`{"cmd": "pwd", "cwd": "/job/../.."}`), 400, "invalid_argument"},
		{"exec with cmd and argv", tenantA, "POST", sb + "/exec", strings.NewReader(`{"cmd": "true", "argv": ["true"]}`), 400, "invalid_argument"},
		{"negative exec timeout", tenantA, "POST", sb + "/exec", strings.NewReader(`{"cmd": "true", "timeout_seconds": -1}`), 400, "invalid_argument"},
		{"fork count too large", tenantA, "POST", sb + "/fork", strings.NewReader(`{"count": 1000}`), 400, "invalid_argument"},
		{"unknown sandbox", tenantA, "GET", "/v1/sandboxes/sbx-doesnotexist0000", nil, 404, "not_found"},
		{"exec in unknown sandbox", tenantA, "POST", "/v1/sandboxes/sbx-doesnotexist0000/exec", strings.NewReader(`{"cmd": "true"}`), 404, "not_found"},
		{"invalid sandbox id", tenantA, "GET", "/v1/sandboxes/..%2Fetc", nil, 400, "invalid_argument"},
		{"unknown route", tenantA, "GET", "/v1/nothing-here", nil, 404, "not_found"},
		{"no API key", "", "GET", "/v1/sandboxes", nil, 401, "permission_denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := d.do(t, tc.tenant, tc.method, tc.path, tc.body)
			if res.status != tc.status || res.errCode() != tc.code {
				t.Errorf("%s %s = %s; want %d %s", tc.method, tc.path, res, tc.status, tc.code)
			}
			if ct := res.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("error answer has Content-Type %q", ct)
			}
			alive(t)
		})
	}

	// A wrong key is refused like a missing one.
	res := d.do(t, "", "GET", "/v1/sandboxes", nil)
	if res.status != 401 {
		t.Errorf("no key: %s", res)
	}
	bad, err := client.New(d.url(), "alk_not_a_real_key_000000000000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.ListSandboxes(ctx(t), nil); !errors.Is(err, client.ErrPermissionDenied) {
		t.Errorf("list with a bogus key: %v, want permission_denied", err)
	}

	// Through the SDK, too: the oversized upload is refused with a typed
	// error, and exactly-at-the-limit is fine.
	if _, err := survivor.Files().Write(ctx(t), "/job/big3.bin", bytes.NewReader(twoMiB)); !errors.Is(err, client.ErrResourceExhausted) {
		t.Errorf("SDK 2 MiB upload: %v, want resource_exhausted", err)
	} else {
		var ae *client.Error
		if errors.As(err, &ae) && ae.Status != 413 {
			t.Errorf("SDK 2 MiB upload: status %d, want 413", ae.Status)
		}
	}
	if n, err := survivor.Files().Write(ctx(t), "/job/limit.bin", bytes.NewReader(twoMiB[:maxUpload])); err != nil || n != maxUpload {
		t.Errorf("upload of exactly the limit: %d, %v", n, err)
	}
	if _, err := c.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: -1}); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("SDK negative TTL: %v, want invalid_argument", err)
	}
	if _, err := survivor.Files().ReadAll(ctx(t), "/job/../etc/passwd"); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("SDK traversal read: %v, want invalid_argument", err)
	}

	// The refused chunked upload reached the sandbox layer before it was
	// cut: its audit record says why it failed, as the client was told.
	var refused int
	for _, r := range allAudit(t, c, client.AuditFilter{SandboxID: survivor.ID}) {
		switch {
		case r.Outcome == "internal":
			t.Errorf("audit record %d (%s) has outcome internal for a caller's mistake", r.Seq, r.Event)
		case r.Event == "file_write" && r.Outcome == "resource_exhausted":
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no file_write audit record with outcome resource_exhausted for the oversized chunked upload")
	}

	// The daemon serves on: the survivor works, and a new sandbox can be made.
	alive(t)
	fresh := createSandbox(t, c, 60, nil)
	if got := mustExec(t, fresh, "echo fresh"); got != "fresh\n" {
		t.Fatalf("new sandbox after bad input: %q", got)
	}
	// No sandbox was left half-made by the refused creates.
	all, err := c.ListSandboxes(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("running sandboxes after bad input: %v; want the survivor and the fresh one", ids(all))
	}
}
