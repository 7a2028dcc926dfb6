package validate

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const systemdDir = "../systemd"

// units are the shipped unit files; the test fails if one is added
// without a policy below.
var units = map[string]func(t *testing.T, u unit){
	"airlock.service":      checkDaemonUnit,
	"airlock-node.service": checkNodeUnit,
	"airlock-api.service":  checkAPIUnit,
}

// unit is a parsed unit file: "Section.Key" -> values in order.
type unit map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "["):
			section = strings.Trim(l, "[]")
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("%s: not key=value: %q", path, l)
			}
			u[section+"."+k] = append(u[section+"."+k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u unit) last(key string) (string, bool) {
	vs, ok := u[key]
	if !ok {
		return "", false
	}
	return vs[len(vs)-1], true
}

func want(t *testing.T, u unit, key, value string) {
	t.Helper()
	if v, ok := u.last(key); !ok || v != value {
		t.Errorf("%s = %q (set: %v), want %q", key, v, ok, value)
	}
}

// privateMounts are the directives that give a service a mount namespace
// of its own (or make cgroupfs, /proc/sys or devices unusable), which the
// VM daemon cannot have: a restarted daemon would no longer see the
// network namespaces bind-mounted under /run/netns by its predecessor,
// whose VMs it adopts.
var privateMounts = []string{"ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "PrivateMounts",
	"PrivateNetwork", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
	"ProtectHostname", "ProtectClock", "ReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem", "BindPaths",
	"BindReadOnlyPaths", "RootDirectory", "RootImage", "MountAPIVFS", "ProtectProc", "ProcSubset", "DynamicUser",
	"DevicePolicy", "DeviceAllow", "SystemCallFilter", "RestrictNamespaces", "RestrictAddressFamilies",
	"MemoryDenyWriteExecute", "CapabilityBoundingSet", "User"}

func checkDaemonUnit(t *testing.T, u unit) {
	exec, _ := u.last("Service.ExecStart")
	if !strings.Contains(exec, " serve ") {
		t.Errorf("ExecStart %q does not run airlock serve", exec)
	}
	want(t, u, "Service.KillMode", "process")
	want(t, u, "Service.Delegate", "yes")
	for _, k := range privateMounts {
		if _, ok := u["Service."+k]; ok {
			t.Errorf("%s is set: the VM daemon cannot run with it (see the unit's comment)", k)
		}
	}
}

func checkNodeUnit(t *testing.T, u unit) {
	checkDaemonUnit(t, u)
	exec, _ := u.last("Service.ExecStart")
	for _, f := range []string{"--cluster-api ", "--cluster-token-file ", "--node-listen ", "--net"} {
		if !strings.Contains(exec, f) {
			t.Errorf("ExecStart %q lacks %s", exec, f)
		}
	}
}

func checkAPIUnit(t *testing.T, u unit) {
	exec, _ := u.last("Service.ExecStart")
	if !strings.Contains(exec, "airlock api ") {
		t.Errorf("ExecStart %q does not run airlock api", exec)
	}
	if inlineSecret.MatchString(exec) || strings.Contains(exec, "--dsn") {
		t.Errorf("ExecStart %q carries the database credential: it belongs in EnvironmentFile", exec)
	}
	for k, v := range map[string]string{"DynamicUser": "yes", "NoNewPrivileges": "yes", "CapabilityBoundingSet": "",
		"ProtectSystem": "strict", "PrivateTmp": "yes", "PrivateDevices": "yes", "RestrictNamespaces": "yes",
		"MemoryDenyWriteExecute": "yes", "SystemCallFilter": "@system-service"} {
		want(t, u, "Service."+k, v)
	}
	if _, ok := u["Service.Environment"]; ok {
		t.Errorf("Environment= is readable by any user (systemctl show): put the DSN in EnvironmentFile")
	}
}

func TestSystemdUnitsPolicy(t *testing.T) {
	files := mustGlob(t, filepath.Join(systemdDir, "*.service"))
	if len(files) != len(units) {
		t.Errorf("%d unit files, %d with a policy here: %v", len(files), len(units), files)
	}
	for _, f := range files {
		check, ok := units[filepath.Base(f)]
		if !ok {
			t.Errorf("%s has no policy in this test", f)
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) { check(t, parseUnit(t, f)) })
	}
}

// verify runs systemd-analyze verify over copies of the units whose
// ExecStart binary is a stub (verify checks that it is executable) and
// returns what it printed: every warning (an unknown key, a bad value)
// counts, since systemd ignores such lines and starts the unit anyway.
func verify(t *testing.T, edit func(name, text string) string) string {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze here")
	}
	dir := t.TempDir()
	stub := filepath.Join(dir, "airlock")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify"}
	for _, f := range mustGlob(t, filepath.Join(systemdDir, "*.service")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "/usr/local/bin/airlock", stub)
		if edit != nil {
			text = edit(filepath.Base(f), text)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command(sa, args...).CombinedOutput()
	if err != nil {
		return string(out) + "\n(" + err.Error() + ")"
	}
	return string(out)
}

func TestSystemdAnalyzeVerify(t *testing.T) {
	if out := verify(t, nil); strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify:\n%s", out)
	}
}

// TestSystemdAnalyzeVerifyCatchesTypo proves the check above can fail: a
// misspelt directive in a copy must be reported.
func TestSystemdAnalyzeVerifyCatchesTypo(t *testing.T) {
	out := verify(t, func(name, text string) string {
		if name != "airlock-node.service" {
			return text
		}
		if !strings.Contains(text, "Delegate=yes") {
			t.Fatal("fixture out of date: no Delegate=yes in airlock-node.service")
		}
		return strings.Replace(text, "Delegate=yes", "Delgate=yes", 1)
	})
	if !strings.Contains(out, "Delgate") {
		t.Errorf("a misspelt directive went unreported; systemd-analyze said: %q", out)
	}
}
