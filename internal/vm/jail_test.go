package vm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// procStatus reads the fields of /proc/PID/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// TestJailConfinesTheVMM looks at a clone's QEMU from the host, as an
// auditor would: an unprivileged uid of its own with no capability at all,
// no_new_privs and a seccomp filter, no environment, namespaces of its
// own, a root holding only what the VM needs, its own cgroups with limits,
// and no descriptor on the template's memory file (it maps a sealed
// copy). After the VM is destroyed its cgroups are gone.
func TestJailConfinesTheVMM(t *testing.T) {
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	if !host.Driver.Jailed() {
		t.Fatal("the test host runs VMMs unjailed")
	}
	shape, state := bakeByHand(t, nil)
	opts := shape
	opts.MemoryPrivate = true
	v := restoreForTest(t, opts, state)
	pid := v.Machine.PID()

	st := procStatus(t, pid)
	uid := strings.Fields(st["Uid"])
	if len(uid) != 4 || uid[0] == "0" || uid[0] != uid[1] || uid[0] != uid[2] || uid[0] != uid[3] {
		t.Errorf("uid %q: want one unprivileged uid everywhere", st["Uid"])
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if st[k] != "0000000000000000" {
			t.Errorf("%s = %s, want none", k, st[k])
		}
	}
	if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" {
		t.Errorf("no_new_privs %s, seccomp %s; want 1 and 2 (filter)", st["NoNewPrivs"], st["Seccomp"])
	}
	if st["THP_enabled"] != "0" {
		t.Errorf("THP_enabled %q: want 0 (no transparent huge pages for the VMM)", st["THP_enabled"])
	}
	if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); len(env) != 0 {
		t.Errorf("the VMM has an environment (%d bytes)", len(env))
	}
	for _, ns := range []string{"mnt", "pid", "ipc", "uts", "net"} {
		theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
		ours, _ := os.Readlink("/proc/self/ns/" + ns)
		if theirs == "" || theirs == ours {
			t.Errorf("%s namespace %q is the host's", ns, theirs)
		}
	}
	root := fmt.Sprintf("/proc/%d/root", pid)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, forbidden := range []string{"home", "root", "tmp", "sys", "boot"} {
		if _, err := os.Lstat(filepath.Join(root, forbidden)); err == nil {
			t.Errorf("the jail's root shows /%s (it holds %v)", forbidden, names)
		}
	}
	for _, f := range []string{"etc/shadow", "etc/passwd", "dev/mem", "dev/sda", "dev/net/tun"} {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			t.Errorf("the jail shows /%s", f)
		}
	}
	// Its own state directory is there; a neighbour's would not be.
	if _, err := os.Stat(filepath.Join(root, v.Machine.StateDir(), "qmp.sock")); err != nil {
		t.Errorf("the VMM's own state directory is missing from its root: %v", err)
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if target == shape.MemoryFile {
			t.Errorf("the VMM holds the template memory file open (fd %s)", fd.Name())
		}
	}
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(cg)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && strings.HasSuffix(f[2], "/"+v.ID) {
			dirs = append(dirs, line)
		}
	}
	if len(dirs) < 3 {
		t.Errorf("the VMM is in %d cgroups of its own (%s), want memory, pids and cpu", len(dirs), cg)
	}
	limit := cgroupFile(t, string(cg), v.ID, "memory", "memory.limit_in_bytes", "memory.max")
	if limit == "" || limit == "max" || limit == "9223372036854771712" {
		t.Errorf("memory limit %q, want a bound", limit)
	}
	if pids := cgroupFile(t, string(cg), v.ID, "pids", "pids.max"); pids == "" || pids == "max" {
		t.Errorf("pids limit %q, want a bound", pids)
	}

	cgDirs := cgroupDirs(string(cg), v.ID)
	if err := v.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range cgDirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s remains after destroy", d)
		}
	}
}

// cgroupDirs maps the VM's cgroup lines to directories under /sys/fs/cgroup.
func cgroupDirs(cg, id string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(cg), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.HasSuffix(f[2], "/"+id) {
			continue
		}
		for _, base := range hierarchyMounts(f[0], f[1]) {
			out = append(out, filepath.Join(base, f[2]))
		}
	}
	return out
}

// hierarchyMounts guesses where a cgroup line's hierarchy is mounted.
func hierarchyMounts(hid, ctrls string) []string {
	if hid == "0" {
		for _, m := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
			if _, err := os.Stat(filepath.Join(m, "cgroup.controllers")); err == nil {
				return []string{m}
			}
		}
		return nil
	}
	for _, m := range []string{"/sys/fs/cgroup/" + ctrls, "/sys/fs/cgroup/" + strings.Split(ctrls, ",")[0]} {
		if _, err := os.Stat(m); err == nil {
			return []string{m}
		}
	}
	return nil
}

// cgroupFile reads the first of names that exists in the VM's cgroup for
// the controller ctrl.
func cgroupFile(t *testing.T, cg, id, ctrl string, names ...string) string {
	t.Helper()
	for _, d := range cgroupDirs(cg, id) {
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(d, n))
			if err == nil && (strings.Contains(d, ctrl) || strings.HasPrefix(n, ctrl)) {
				return strings.TrimSpace(string(b))
			}
		}
	}
	return ""
}

// TestNoJailNoStart: a host asked to jail its VMMs that cannot (here: the
// helper is missing) refuses to start, naming the opt-out; with the
// opt-out it starts, and says its VMMs are not jailed.
func TestNoJailNoStart(t *testing.T) {
	vmtest.RequireVMs(t)
	agent := vmtest.AgentBinary(t)
	ctx := vmtest.Context(t)
	_, err := avm.NewHost(ctx, avm.Config{RunDir: t.TempDir(), Agent: agent, JailHelper: "/nonexistent/airlock-jailer"})
	if !errdefs.IsFailedPrecondition(err) || !strings.Contains(err.Error(), "--jail=off") {
		t.Fatalf("NewHost without a usable jail: %v, want failed_precondition naming --jail=off", err)
	}
	h, err := avm.NewHost(ctx, avm.Config{RunDir: t.TempDir(), Agent: agent, Jail: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if rep := h.Driver.Protections(); h.Driver.Jailed() || rep.Jailed || !strings.Contains(rep.Reason, "--jail=off") {
		t.Errorf("an opted-out host reports %+v", rep)
	}
}
