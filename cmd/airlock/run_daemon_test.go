package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
)

// `airlock run --via daemon` goes through the daemon's API: a sandbox of
// the template, files in and out, the command's output and exit code,
// and the sandbox killed after; the daemon's audit log has all of it.
func TestRunViaDaemon(t *testing.T) {
	fake := apitest.StartLocal(t, api.Config{})
	env := map[string]string{"AIRLOCK_URL": "unix://" + fake.Socket, "AIRLOCK_API_KEY": fake.Key(t, "acme")}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	if err := os.WriteFile(in, []byte("document\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Local machines run commands on this host with the guest root as
	// their working directory: guest paths are relative in the command.
	stdout, stderr, code := runCLI(t, env, "run", "--via", "daemon", "--template", "base", "--put", in+":/job/in.txt",
		"--get", "/job/out.txt:"+out, "--shell", "--", "cat job/in.txt; tr a-z A-Z < job/in.txt > job/out.txt; exit 3")
	if code != 3 || stdout != "document\n" {
		t.Fatalf("run via daemon: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "DOCUMENT\n" {
		t.Errorf("--get: %q, %v", b, err)
	}
	ls, _, _ := runCLI(t, env, "sandbox", "ls", "--all", "--json")
	var listed struct {
		Sandboxes []struct{ ID, State string } `json:"sandboxes"`
	}
	if err := json.Unmarshal([]byte(ls), &listed); err != nil || len(listed.Sandboxes) != 1 || listed.Sandboxes[0].State != "killed" {
		t.Errorf("the daemon's sandboxes after run: %s (%v)", ls, err)
	}
	for _, args := range [][]string{
		{"run", "--via", "daemon", "--", "true"},                                                            // no template: a daemon restores templates only
		{"run", "--via", "sideways", "--template", "base", "--", "true"},                                    // no such way
		{"run", "--via", "daemon", "--url", "unix:///nonexistent.sock", "--template", "base", "--", "true"}, // nobody there
	} {
		if _, stderr, code := runCLI(t, env, args...); code == 0 {
			t.Errorf("airlock %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
}

// auto goes through the daemon only with a template, a key and a daemon
// that answers; local never does.
func TestRunViaChoice(t *testing.T) {
	fake := apitest.StartLocal(t, api.Config{})
	key := fake.Key(t, "acme")
	for _, c := range []struct {
		name, via, tmpl, url, key string
		daemon                    bool
	}{
		{"all there", viaAuto, "base", "unix://" + fake.Socket, key, true},
		{"local", viaLocal, "base", "unix://" + fake.Socket, key, false},
		{"no template", viaAuto, "", "unix://" + fake.Socket, key, false},
		{"no key", viaAuto, "base", "unix://" + fake.Socket, "", false},
		{"no daemon", viaAuto, "base", "unix://" + filepath.Join(t.TempDir(), "none.sock"), key, false},
		{"in-process flags", viaAuto, "base", "unix://" + fake.Socket, key, false},
	} {
		t.Setenv("AIRLOCK_API_KEY", c.key)
		o := &runOptions{hf: &hostFlags{g: &globalFlags{}}, via: c.via, tmplName: c.tmpl, url: c.url}
		if c.name == "in-process flags" {
			o.localFlags = []string{"--state-dir"}
		}
		cl, err := o.daemonClient(context.Background())
		if err != nil || (cl != nil) != c.daemon {
			t.Errorf("%s: client %v, err %v; want daemon=%v", c.name, cl != nil, err, c.daemon)
		}
	}
}

// bench oneshot times the daemon way when a daemon answers, leaves it
// out (and runs) when none does unless --via named it, and refuses ways
// it does not know.
func TestOneShotWays(t *testing.T) {
	fake := apitest.StartLocal(t, api.Config{})
	t.Setenv("AIRLOCK_API_KEY", fake.Key(t, "acme"))
	up, down := "unix://"+fake.Socket, "unix://"+filepath.Join(t.TempDir(), "none.sock")
	ctx := context.Background()
	for _, c := range []struct {
		via   string
		named bool
		url   string
		want  string // the ways, or "error"
	}{
		{"local,daemon", false, up, "local,daemon"},
		{"local,daemon", false, down, "local"},
		{"daemon", true, down, "error"},
		{"daemon", true, up, "daemon"},
		{"local, local", true, down, "local"},
		{"local,sideways", true, up, "error"},
	} {
		ways, err := oneShotWays(ctx, c.via, c.named, c.url, "base")
		got := strings.Join(ways, ",")
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("--via %q (named %v) at %s: %q, %v; want %s", c.via, c.named, c.url, ways, err, c.want)
		}
	}
}
