package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testCLI drives `airlock sandbox ...` against the daemon the way an
// operator would.
func testCLI(t *testing.T, d *daemon) {
	tag := uniq("cli")
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := d.cli(t, tenantA, args...)
		if code != 0 {
			t.Fatalf("airlock %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	out := run("sandbox", "create", "--template", templateName, "--ttl", "2m", "--meta", "cli="+tag, "--json")
	var info struct {
		ID, State, Template string
		Metadata            map[string]string
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.ID == "" || info.State != "running" || info.Metadata["cli"] != tag {
		t.Fatalf("sandbox create --json printed %q (%v)", out, err)
	}
	id := info.ID
	t.Cleanup(func() { d.cli(t, tenantA, "sandbox", "kill", id) })

	// exec streams output and exits with the command's exit code.
	out, stderr, code := d.cli(t, tenantA, "sandbox", "exec", id, "--shell", "--", "echo from-cli; echo err-cli >&2; exit 4")
	if code != 4 || out != "from-cli\n" || stderr != "err-cli\n" {
		t.Fatalf("sandbox exec: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if out := run("sandbox", "exec", id, "--", "uname", "-s"); out != "Linux\n" {
		t.Fatalf("sandbox exec argv: %q", out)
	}
	// --json: one document on stdout with the output inside; nothing on
	// stderr; still the command's exit code. A missing command is 127.
	out, stderr, code = d.cli(t, tenantA, "sandbox", "exec", id, "--json", "--shell", "--", "echo from-cli; echo err-cli >&2; exit 4")
	var res struct {
		ExitCode       int `json:"exit_code"`
		Stdout, Stderr string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 4 || stderr != "" || res.ExitCode != 4 ||
		res.Stdout != "from-cli\n" || res.Stderr != "err-cli\n" {
		t.Fatalf("sandbox exec --json: exit %d, stdout %q, stderr %q (%v)", code, out, stderr, err)
	}
	if _, _, code := d.cli(t, tenantA, "sandbox", "exec", id, "--", "no-such-command"); code != 127 {
		t.Errorf("a missing command: exit %d, want 127", code)
	}

	// cp in and out.
	local := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(local, []byte("copied by the cli\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("sandbox", "cp", local, id+":/job/in.txt")
	if out := run("sandbox", "exec", id, "--", "cat", "/job/in.txt"); out != "copied by the cli\n" {
		t.Fatalf("file copied in reads %q", out)
	}
	back := filepath.Join(t.TempDir(), "out.txt")
	run("sandbox", "cp", id+":/job/in.txt", back)
	if b, err := os.ReadFile(back); err != nil || string(b) != "copied by the cli\n" {
		t.Fatalf("file copied out: %q, %v", b, err)
	}

	// ls by label, fork, kill, get.
	if out := run("sandbox", "ls", "--meta", "cli="+tag); !strings.Contains(out, id) {
		t.Fatalf("sandbox ls --meta does not list %s:\n%s", id, out)
	}
	out = run("sandbox", "fork", id, "--json")
	if !strings.Contains(out, `"parent_id": "`+id+`"`) {
		t.Fatalf("sandbox fork --json printed %s", out)
	}
	var kids struct {
		Sandboxes []struct{ ID string }
	}
	_ = json.Unmarshal([]byte(out), &kids)
	var childID string
	if len(kids.Sandboxes) == 1 {
		childID = kids.Sandboxes[0].ID
	} else {
		// Not a list: a single object.
		var one struct{ ID string }
		_ = json.Unmarshal([]byte(out), &one)
		childID = one.ID
	}
	if childID == "" || childID == id {
		t.Fatalf("no child id in %s", out)
	}
	run("sandbox", "kill", id, childID)
	out = run("sandbox", "get", id, "--json")
	if !strings.Contains(out, `"state": "killed"`) {
		t.Fatalf("sandbox get after kill: %s", out)
	}
	_, stderr, code = d.cli(t, tenantA, "sandbox", "exec", id, "--", "true")
	if code != 125 || !strings.Contains(stderr, "failed_precondition") || !strings.Contains(stderr, "is killed") {
		t.Fatalf("exec in a killed sandbox: exit %d, %s", code, stderr)
	}
	// Another tenant's CLI cannot see it.
	_, stderr, code = d.cli(t, tenantB, "sandbox", "get", id)
	if code == 0 || !strings.Contains(stderr, "not_found") {
		t.Fatalf("tenant B sandbox get: exit %d, %s", code, stderr)
	}
}
