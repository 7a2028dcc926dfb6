package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/tarfs"
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
	// The guest file's mode (0644 by default) less the umask, as docker cp.
	if fi, err := os.Stat(back); err != nil || fi.Mode().Perm() != 0o644&^tarfs.ProcessUmask() {
		t.Errorf("file copied out has mode %v (%v), want 0644 less the umask %o", fi.Mode(), err, tarfs.ProcessUmask())
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
	// get shows the sandbox's host usage.
	if out := run("sandbox", "get", id); !strings.Contains(out, "cpu ") || !strings.Contains(out, "PSS ") {
		t.Fatalf("sandbox get shows no cpu/memory:\n%s", out)
	}

	// kill by label: the fork carries its parent's labels, so both match.
	// A dry run kills nothing; another tenant's label kill finds nothing.
	type killed struct {
		Killed []string `json:"killed"`
		DryRun bool     `json:"dry_run"`
	}
	killJSON := func(tenant string, args ...string) killed {
		t.Helper()
		out, stderr, code := d.cli(t, tenant, append([]string{"sandbox", "kill", "--json", "--meta", "cli=" + tag}, args...)...)
		var k killed
		if err := json.Unmarshal([]byte(out), &k); err != nil || code != 0 {
			t.Fatalf("sandbox kill --meta %v as %s: exit %d, %q, %s (%v)", args, tenant, code, out, stderr, err)
		}
		return k
	}
	if k := killJSON(tenantA, "--dry-run"); !k.DryRun || len(k.Killed) != 2 {
		t.Fatalf("kill --meta --dry-run: %+v, want both %s and %s", k, id, childID)
	}
	if k := killJSON(tenantB); len(k.Killed) != 0 {
		t.Fatalf("tenant B killed %v by tenant A's label", k.Killed)
	}
	if out := run("sandbox", "get", childID, "--json"); !strings.Contains(out, `"state": "running"`) {
		t.Fatalf("child after dry run and tenant B's kill: %s", out)
	}
	if k := killJSON(tenantA); len(k.Killed) != 2 {
		t.Fatalf("kill --meta: %+v, want both", k)
	}
	if _, stderr, code := d.cli(t, tenantA, "sandbox", "kill"); code != 2 || !strings.Contains(stderr, "--meta") {
		t.Fatalf("kill with nothing named: exit %d, %s; want a usage error", code, stderr)
	}
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

	// audit ls and key ls with an API key go through the API: the key's
	// tenant's records and keys only.
	var audit struct {
		Records []struct {
			Tenant    string `json:"tenant"`
			Event     string `json:"event"`
			SandboxID string `json:"sandbox_id"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(run("audit", "ls", "--sandbox", id, "--json")), &audit); err != nil {
		t.Fatal(err)
	}
	events := map[string]bool{}
	for _, r := range audit.Records {
		if r.Tenant != tenantA || r.SandboxID != id {
			t.Fatalf("audit ls through the API shows %+v", r)
		}
		events[r.Event] = true
	}
	if !events["create"] || !events["exec"] || !events["kill"] {
		t.Fatalf("audit ls --sandbox %s through the API: events %v, want create, exec and kill", id, events)
	}
	out, stderr, code = d.cli(t, tenantB, "audit", "ls", "--sandbox", id, "--json")
	if code != 0 || !strings.Contains(out, `"records": []`) {
		t.Fatalf("tenant B's audit of tenant A's sandbox: exit %d, %s %s", code, out, stderr)
	}
	if _, stderr, code := d.cli(t, tenantA, "audit", "ls", "--tenant", tenantB); code != 2 {
		t.Fatalf("audit ls --tenant through the API: exit %d, %s; want a usage error", code, stderr)
	}
	var keys struct {
		Keys []struct {
			Tenant  string
			Current bool
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(run("key", "ls", "--json")), &keys); err != nil || len(keys.Keys) == 0 {
		t.Fatalf("key ls through the API: %+v, %v", keys, err)
	}
	current := 0
	for _, k := range keys.Keys {
		if k.Tenant != tenantA {
			t.Fatalf("tenant A's key ls shows a key of %s", k.Tenant)
		}
		if k.Current {
			current++
		}
	}
	if current != 1 {
		t.Fatalf("key ls: %d keys marked current, want 1", current)
	}
}
