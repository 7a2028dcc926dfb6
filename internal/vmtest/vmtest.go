// Package vmtest gives integration tests a real VM host: it builds
// airlock-agent from this checkout once per test binary and resolves the
// kernel and images through the normal (cached) path.
//
// Tests that boot VMs call Host(t); they are skipped under `go test -short`
// so a developer can run the fast set alone. CI runs them all.
package vmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmm/jail"
	"github.com/airlock-dev/airlock/internal/vmm/qemu"
)

var (
	agentOnce  sync.Once
	agentPath  string
	jailerPath string
	agentErr   error
)

// AgentBinary builds the static agent from this module into a temporary
// directory (once per process) and returns its path.
func AgentBinary(t testing.TB) string {
	t.Helper()
	agentOnce.Do(func() {
		var out []byte
		out, agentErr = exec.Command("go", "env", "GOMOD").Output()
		if agentErr != nil {
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		sweepStale()
		sweepStaleJails()
		dir, err := os.MkdirTemp("", fmt.Sprintf("airlock-agent-%d-", os.Getpid()))
		if err != nil {
			agentErr = err
			return
		}
		agentPath = filepath.Join(dir, "airlock-agent")
		jailerPath = filepath.Join(dir, "airlock-jailer")
		for _, b := range []struct{ out, pkg string }{{agentPath, "./cmd/airlock-agent"}, {jailerPath, "./cmd/airlock-jailer"}} {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", b.out, b.pkg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				agentErr = &buildError{err: err, out: string(out)}
				return
			}
		}
	})
	if agentErr != nil {
		t.Fatalf("build airlock-agent: %v", agentErr)
	}
	return agentPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

var (
	hostOnce sync.Once
	host     *vm.Host
	hostErr  error
)

// RequireVMs skips the test in -short mode or where VMs cannot run.
func RequireVMs(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots VMs; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("boots VMs; needs root")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 not installed (run scripts/setup.sh)")
	}
}

// Host returns a shared VM host for tests, with VM state under a
// per-process run directory.
func Host(t testing.TB) *vm.Host {
	t.Helper()
	RequireVMs(t)
	agent := AgentBinary(t)
	hostOnce.Do(func() {
		runDir, err := os.MkdirTemp("/run", fmt.Sprintf("airlock-test-%d-", os.Getpid()))
		if err != nil {
			hostErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// Jailed like a daemon's VMs, in cgroups named for this process.
		host, hostErr = vm.NewHost(ctx, vm.Config{RunDir: runDir, Agent: agent, Accel: os.Getenv("AIRLOCK_ACCEL"),
			JailHelper: jailerPath, JailInstance: JailInstance()})
	})
	if hostErr != nil {
		t.Fatalf("vm host: %v", hostErr)
	}
	return host
}

// Boot cold-boots a VM for the test and destroys it when the test ends.
func Boot(t testing.TB, opts vm.BootOptions) *vm.VM {
	t.Helper()
	h := Host(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vm, err := h.Boot(ctx, opts)
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := vm.Destroy(ctx); err != nil {
			t.Errorf("destroy %s: %v", vm.ID, err)
		}
	})
	return vm
}

// Context returns a context bounded generously for slow, shared machines.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var (
	tmplOnce sync.Once
	registry *template.Registry
	tmplErr  error
)

// TemplateName is the template Registry bakes for tests.
const TemplateName = "test-tiny"

// Registry returns a template registry (per test process) holding a baked
// test-tiny template. Its root image is cached in the normal cache
// directory, so only the first run on a machine pays for mmdebstrap.
func Registry(t testing.TB) *template.Registry {
	t.Helper()
	h := Host(t)
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		t.Skip("mmdebstrap not installed (run scripts/setup.sh)")
	}
	tmplOnce.Do(func() {
		dir, err := os.MkdirTemp("", fmt.Sprintf("airlock-templates-%d-", os.Getpid()))
		if err != nil {
			tmplErr = err
			return
		}
		registry, tmplErr = template.NewRegistry(dir)
		if tmplErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		spec, err := template.LoadResolved(filepath.Join(filepath.Dir(file), "testdata"), TemplateName)
		if err != nil {
			tmplErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		_, tmplErr = registry.Bake(ctx, h, spec, nil)
	})
	if tmplErr != nil {
		t.Fatalf("bake test template: %v", tmplErr)
	}
	return registry
}

// sweepStale removes what earlier test processes left behind: their run
// directories (killing any VM still serving one, e.g. after a test binary
// panicked), built agents and template registries. Each is named with its
// process's pid; only those whose process is gone are touched.
func sweepStale() {
	for _, pattern := range []string{
		"/run/airlock-test-*",
		filepath.Join(os.TempDir(), "airlock-agent-*"),
		filepath.Join(os.TempDir(), "airlock-templates-*"),
	} {
		dirs, _ := filepath.Glob(pattern)
		for _, d := range dirs {
			if processAlive(ownerPID(filepath.Base(d))) {
				continue
			}
			if strings.HasPrefix(d, "/run/") {
				vms, _ := os.ReadDir(d)
				for _, v := range vms {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					qemu.KillOrphan(ctx, filepath.Join(d, v.Name()))
					cancel()
				}
			}
			os.RemoveAll(d)
		}
	}
}

// JailInstance names this test process's jail cgroups (airlock-t<pid>).
func JailInstance() string { return fmt.Sprintf("t%d", os.Getpid()) }

// sweepStaleJails removes the jail cgroups of test processes that are gone.
func sweepStaleJails() {
	instances, _ := jail.Instances()
	for _, in := range instances {
		pid, err := strconv.Atoi(strings.TrimPrefix(in, "t"))
		if !strings.HasPrefix(in, "t") || err != nil || processAlive(pid) {
			continue
		}
		jail.RemoveInstance(in)
	}
}

// ownerPID reads the pid from names like "airlock-test-1234-5678"; 0 for
// names from before pids were recorded (always stale).
func ownerPID(name string) int {
	parts := strings.Split(name, "-")
	if len(parts) < 4 {
		return 0
	}
	pid, _ := strconv.Atoi(parts[2])
	return pid
}

func processAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
