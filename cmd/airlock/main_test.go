package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runCLI runs the CLI in-process as main does and returns stdout, stderr
// and the exit code.
func runCLI(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(context.Background())
	code := report(&errb, cmd, err)
	return out.String(), errb.String(), code
}

// fakeDaemon is a local HTTP server on a unix socket answering every
// request with one airlock API error, as the daemon does.
func fakeDaemon(t *testing.T, status int, code, msg string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "api.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%q,"message":%q}}`, code, msg)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func TestExitCodesAndErrors(t *testing.T) {
	noDaemon := map[string]string{"AIRLOCK_URL": "unix://" + filepath.Join(t.TempDir(), "none.sock"), "AIRLOCK_API_KEY": "k"}
	notFound := map[string]string{"AIRLOCK_URL": "", "AIRLOCK_SOCKET": fakeDaemon(t, 404, "not_found", "sandbox sbx-x not found"),
		"AIRLOCK_API_KEY": "k"}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		code     int
		stderr   string // substring
		jsonCode string // with --json: the error document's code
	}{
		{"unknown command", nil, []string{"bogus"}, exitUsage, `unknown command "bogus"`, ""},
		{"unknown subcommand", nil, []string{"sandbox", "bogus"}, exitUsage, "Run 'airlock sandbox --help'", ""},
		{"missing argument", nil, []string{"sandbox", "get"}, exitUsage, "accepts 1 arg(s)", ""},
		{"unknown flag", nil, []string{"sandbox", "create", "--bogus"}, exitUsage, "unknown flag: --bogus", ""},
		{"bad flag value, refused locally", noDaemon, []string{"sandbox", "create", "-t", "x", "--allow", "x=1.2.3.4:99999"}, exitUsage, "port", ""},
		{"usage error as JSON", noDaemon, []string{"sandbox", "get", "--json"}, exitUsage, "", "invalid_argument"},
		{"daemon unreachable", noDaemon, []string{"sandbox", "ls"}, exitAirlock, "is `airlock serve` running there?", ""},
		{"daemon unreachable, JSON", noDaemon, []string{"sandbox", "ls", "--json"}, exitAirlock, "", "unavailable"},
		{"daemon's answer, found by AIRLOCK_SOCKET", notFound, []string{"sandbox", "get", "sbx-x"}, exitAirlock,
			"airlock: sandbox sbx-x not found [not_found]\n", ""},
		{"daemon's answer as JSON", notFound, []string{"sandbox", "get", "sbx-x", "--json"}, exitAirlock, "", "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if strings.Contains(stderr, "airlock: airlock:") || strings.Contains(stderr, "[internal]") {
				t.Errorf("stderr %q: doubled prefix or internal code", stderr)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
			if tc.jsonCode != "" {
				var doc struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal([]byte(stderr), &doc); err != nil || doc.Error.Code != tc.jsonCode || doc.Error.Message == "" {
					t.Errorf("stderr %q: want one JSON error document with code %s (%v)", stderr, tc.jsonCode, err)
				}
				if out != "" {
					t.Errorf("stdout %q: want nothing", out)
				}
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	out, _, code := runCLI(t, nil, "--version")
	if code != 0 || out != "airlock "+version+"\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

func TestDaemonAddressFromEitherVariable(t *testing.T) {
	t.Setenv("AIRLOCK_URL", "")
	t.Setenv("AIRLOCK_SOCKET", "/run/x/api.sock")
	if got := daemonURL(); got != "unix:///run/x/api.sock" {
		t.Errorf("client from AIRLOCK_SOCKET: %s", got)
	}
	t.Setenv("AIRLOCK_SOCKET", "")
	t.Setenv("AIRLOCK_URL", "unix:///run/y/api.sock")
	if got := serveSocket(""); got != "/run/y/api.sock" {
		t.Errorf("server from AIRLOCK_URL: %s", got)
	}
	// Neither: the run directory (flag, else AIRLOCK_RUN_DIR) holds the
	// socket, for the daemon and for clients alike.
	t.Setenv("AIRLOCK_URL", "")
	t.Setenv("AIRLOCK_RUN_DIR", "/run/z")
	if got, want := serveSocket(""), "/run/z/airlock.sock"; got != want {
		t.Errorf("server from AIRLOCK_RUN_DIR: %s, want %s", got, want)
	}
	if got := serveSocket("/run/flag"); got != "/run/flag/airlock.sock" {
		t.Errorf("server from --run-dir: %s", got)
	}
	if got := daemonURL(); got != "unix:///run/z/airlock.sock" {
		t.Errorf("client from AIRLOCK_RUN_DIR: %s", got)
	}
	os.Unsetenv("AIRLOCK_URL")
}

// No flag's help holds a backquoted word: pflag would show that word as
// the flag's value placeholder ("--url serve   daemon address...").
func TestFlagHelpHasNoPlaceholderQuotes(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if strings.Contains(f.Usage, "`") {
					name, _ := pflag.UnquoteUsage(f)
					t.Errorf("%s --%s: help shows %q as its placeholder: %s", c.CommandPath(), f.Name, name, f.Usage)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}
