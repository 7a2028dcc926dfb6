package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/vmm/jail"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// Tenants every env has a key for.
const (
	tenantA = "acme"
	tenantB = "globex"
)

// templateName is the template the env bakes (internal/vmtest/testdata).
const templateName = vmtest.TemplateName

// env is what every daemon of this test process shares: the binaries, one
// state directory holding the baked test template, and tenant keys.
// Daemons using it run one after another, never at once: a daemon owns the
// state directory's store while it runs.
type env struct {
	root     string            // repository root; immutable
	bin      string            // the airlock binary (airlock-agent next to it); immutable
	stateDir string            // immutable
	keys     map[string]string // tenant -> API key; immutable after newEnv
}

var (
	envOnce   sync.Once
	sharedEnv *env
	envErr    error
	// cleanupDirs are removed by TestMain once every test has run.
	cleanupMu   sync.Mutex
	cleanupDirs []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	cleanupMu.Lock()
	for _, d := range cleanupDirs {
		// A daemon makes its audit anchor append-only.
		store.UnsealAuditAnchor(filepath.Join(d, "airlock.db"))
		os.RemoveAll(d)
	}
	cleanupMu.Unlock()
	os.Exit(code)
}

func removeAtExit(dir string) {
	cleanupMu.Lock()
	cleanupDirs = append(cleanupDirs, dir)
	cleanupMu.Unlock()
}

// getEnv skips tb where VMs cannot run, else returns the process's env,
// building and baking it on first use.
func getEnv(tb testing.TB) *env {
	tb.Helper()
	vmtest.RequireVMs(tb)
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		tb.Skip("mmdebstrap not installed (run scripts/setup.sh)")
	}
	envOnce.Do(func() { sharedEnv, envErr = newEnv() })
	if envErr != nil {
		tb.Fatalf("e2e env: %v", envErr)
	}
	return sharedEnv
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func newEnv() (*env, error) {
	e := &env{root: repoRoot(), keys: map[string]string{}}
	binDir, err := os.MkdirTemp("", "alk-e2e-bin-")
	if err != nil {
		return nil, err
	}
	removeAtExit(binDir)
	e.bin = filepath.Join(binDir, "airlock")
	began := time.Now()
	// The agent is built exactly like vmtest builds it, so the initramfs
	// cache (keyed by the agent's hash) is shared with the other VM tests.
	builds := []struct {
		out  string
		pkg  string
		args []string
		env  []string
	}{
		{e.bin, "./cmd/airlock", nil, nil},
		{filepath.Join(binDir, "airlock-agent"), "./cmd/airlock-agent", []string{"-trimpath", "-ldflags", "-s -w"}, []string{"CGO_ENABLED=0"}},
		{filepath.Join(binDir, "airlock-jailer"), "./cmd/airlock-jailer", []string{"-trimpath", "-ldflags", "-s -w"}, []string{"CGO_ENABLED=0"}},
		// Built like `make build` does, so document templates baked here
		// share their root image with the developer's.
		{filepath.Join(binDir, "airlock-docs"), "./cmd/airlock-docs", []string{"-trimpath", "-buildvcs=false", "-ldflags", "-s -w"}, []string{"CGO_ENABLED=0"}},
	}
	for _, b := range builds {
		args := append(append([]string{"build"}, b.args...), "-o", b.out, b.pkg)
		cmd := exec.Command("go", args...)
		cmd.Dir = e.root
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	buildDur := time.Since(began)

	if e.stateDir, err = os.MkdirTemp("", "alk-e2e-state-"); err != nil {
		return nil, err
	}
	removeAtExit(e.stateDir)
	bakeRun, err := os.MkdirTemp("/run", "alk-e2e-bake-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bakeRun)
	began = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, "template", "build", "--state-dir", e.stateDir, "--run-dir", bakeRun,
		filepath.Join(e.root, "internal/vmtest/testdata/test-tiny.yaml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("airlock template build: %v\n%s", err, out)
	}
	bakeDur := time.Since(began)
	if left := dirEntries(bakeRun); len(left) > 0 {
		return nil, fmt.Errorf("template build left %v in its run dir", left)
	}
	if e.keys, err = createKeys(e.bin, e.stateDir); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e: built binaries in %s, baked %s in %s\n",
		buildDur.Round(time.Millisecond), templateName, bakeDur.Round(time.Millisecond))
	return e, nil
}

// createKeys makes an API key for each test tenant in stateDir's store.
func createKeys(bin, stateDir string) (map[string]string, error) {
	keys := map[string]string{}
	for _, tenant := range []string{tenantA, tenantB} {
		out, err := exec.Command(bin, "key", "create", "--tenant", tenant, "--state-dir", stateDir, "--json").Output()
		if err != nil {
			return nil, fmt.Errorf("airlock key create --tenant %s: %v: %s", tenant, err, stderrOf(err))
		}
		var k struct {
			Key    string `json:"key"`
			Tenant string `json:"tenant"`
		}
		if err := json.Unmarshal(out, &k); err != nil || k.Key == "" || k.Tenant != tenant {
			return nil, fmt.Errorf("airlock key create --json printed %q (%v)", out, err)
		}
		keys[tenant] = k.Key
	}
	return keys, nil
}

// withOwnState returns a copy of e with a state directory of its own (the
// baked templates shared read-only through a symlink, fresh tenant keys),
// for a second daemon running beside the first: a daemon owns its state
// directory while it runs.
func (e *env) withOwnState(tb testing.TB) *env {
	tb.Helper()
	dir, err := os.MkdirTemp("", "alk-e2e-state-")
	if err != nil {
		tb.Fatal(err)
	}
	removeAtExit(dir)
	return e.withStateIn(tb, dir)
}

// withStateIn is withOwnState in a given (empty) directory.
func (e *env) withStateIn(tb testing.TB, dir string) *env {
	tb.Helper()
	if err := os.Symlink(filepath.Join(e.stateDir, "templates"), filepath.Join(dir, "templates")); err != nil {
		tb.Fatal(err)
	}
	keys, err := createKeys(e.bin, dir)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{root: e.root, bin: e.bin, stateDir: dir, keys: keys}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// cli runs the airlock binary and returns its stdout, stderr and exit code
// (-1 if it could not run).
func (e *env) cli(tb testing.TB, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	return e.cliEnv(tb, nil, args...)
}

// cliEnv is cli with extra environment variables.
func (e *env) cliEnv(tb testing.TB, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var o, s bytes.Buffer
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = &o, &s
	err := cmd.Run()
	code = 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			tb.Fatalf("airlock %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), s.String(), code
}

// daemon is one `airlock serve` subprocess.
type daemon struct {
	env     *env
	runDir  string   // immutable
	sock    string   // immutable
	args    []string // serve's arguments; immutable
	extEnv  []string // extra environment (KEY=VALUE); set before start
	logPath string   // its stderr (JSON logs), appended across restarts

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// startDaemon starts `airlock serve` on a fresh run directory with
// --kill-on-exit and --warm-pool 1 plus extra flags, waits until it
// answers /healthz, and registers its teardown: SIGTERM, then the check
// that no QEMU process or VM state directory outlived it.
func startDaemon(tb testing.TB, e *env, extra ...string) *daemon {
	tb.Helper()
	return startDaemonEnv(tb, e, nil, extra...)
}

// startDaemonEnv is startDaemon with extra environment variables.
func startDaemonEnv(tb testing.TB, e *env, extEnv []string, extra ...string) *daemon {
	tb.Helper()
	runDir, err := os.MkdirTemp("/run", "alk-e2e-")
	if err != nil {
		tb.Fatal(err)
	}
	d := &daemon{env: e, runDir: runDir, sock: filepath.Join(runDir, "api.sock"), extEnv: extEnv}
	d.args = append([]string{"serve", "--state-dir", e.stateDir, "--run-dir", runDir, "--socket", d.sock,
		"--warm-pool", "1", "--kill-on-exit"}, extra...)
	logf, err := os.CreateTemp("", "alk-e2e-daemon-*.log")
	if err != nil {
		tb.Fatal(err)
	}
	logf.Close()
	d.logPath = logf.Name()
	tb.Cleanup(func() {
		d.stop(tb)
		d.checkNoLeftovers(tb)
		if tb.Failed() || os.Getenv("AIRLOCK_E2E_LOG") != "" {
			d.dumpLog(tb)
		}
		os.Remove(d.logPath)
		os.RemoveAll(runDir)
	})
	d.start(tb)
	return d
}

// start (re)starts the daemon process with d.args.
func (d *daemon) start(tb testing.TB) {
	tb.Helper()
	logf, err := os.OpenFile(d.logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== airlock %s\n", strings.Join(d.args, " "))
	d.cmd = exec.Command(d.env.bin, d.args...)
	d.cmd.Env = append(os.Environ(), d.extEnv...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	// Its own process group, so a ^C of `go test` reaches it only through
	// the test's teardown.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	d.exited = make(chan struct{})
	go func() { d.cmd.Wait(); close(d.exited) }()

	began := time.Now()
	hc := d.httpClient()
	for {
		select {
		case <-d.exited:
			d.dumpLog(tb)
			tb.Fatalf("airlock serve exited during startup: %v", d.cmd.ProcessState)
		default:
		}
		res, err := hc.Get("http://airlock/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				tb.Logf("daemon up in %s (run dir %s)", time.Since(began).Round(time.Millisecond), d.runDir)
				return
			}
		}
		if time.Since(began) > 3*time.Minute {
			d.dumpLog(tb)
			tb.Fatalf("airlock serve did not answer /healthz within 3 minutes (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *daemon) running() bool {
	if d.cmd == nil {
		return false
	}
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop ends the daemon the normal way (SIGTERM; with --kill-on-exit it
// kills every sandbox first) and fails tb if it does not exit cleanly.
func (d *daemon) stop(tb testing.TB) {
	tb.Helper()
	if !d.running() {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		if !d.cmd.ProcessState.Success() {
			tb.Errorf("airlock serve exited with %v after SIGTERM", d.cmd.ProcessState)
		}
	case <-time.After(3 * time.Minute):
		tb.Errorf("airlock serve did not exit within 3 minutes of SIGTERM; killing it")
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// crash kills the daemon with SIGKILL, as a power cut of the process
// would: it gets no chance to clean up.
func (d *daemon) crash(tb testing.TB) {
	tb.Helper()
	if err := d.cmd.Process.Kill(); err != nil {
		tb.Fatal(err)
	}
	<-d.exited
}

// checkNoLeftovers fails tb if a QEMU process still mentions the run
// directory or the run directory holds anything but the API socket.
func (d *daemon) checkNoLeftovers(tb testing.TB) {
	tb.Helper()
	// Destroy waits for QEMU, so nothing should remain at all; the short
	// grace only absorbs /proc reporting a process being torn down.
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := qemuProcs(d.runDir)
		if len(procs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			tb.Errorf("QEMU processes outlived the daemon: %v", procs)
			for _, p := range procs {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The instance is derived from the run directory (vm.Config.JailInstance).
	sum := sha256.Sum256([]byte(d.runDir))
	if n, err := jail.CountInstance(hex.EncodeToString(sum[:])[:8]); err != nil || n != 0 {
		tb.Errorf("jail cgroups left after the daemon stopped: %d (%v)", n, err)
	}
	var left []string
	for _, name := range dirEntries(d.runDir) {
		if name != filepath.Base(d.sock) {
			left = append(left, name)
		}
	}
	if len(left) > 0 {
		tb.Errorf("run dir %s still holds %v after the daemon stopped", d.runDir, left)
	}
}

func dirEntries(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

type proc struct {
	pid     int
	cmdline string
}

func (p proc) String() string {
	c := p.cmdline
	if len(c) > 200 {
		c = c[:200] + "..."
	}
	return fmt.Sprintf("pid %d: %s", p.pid, c)
}

// qemuProcs lists QEMU processes whose command line contains substr.
func qemuProcs(substr string) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cl, "qemu-system") && strings.Contains(cl, substr) {
			out = append(out, proc{pid: pid, cmdline: cl})
		}
	}
	return out
}

// vmGone fails tb if a QEMU process or a state directory remains for the
// sandbox id.
func (d *daemon) vmGone(tb testing.TB, id string) {
	tb.Helper()
	if ps := qemuProcs(filepath.Join(d.runDir, id)); len(ps) > 0 {
		tb.Errorf("sandbox %s ended but its QEMU still runs: %v", id, ps)
	}
	if _, err := os.Stat(filepath.Join(d.runDir, id)); err == nil {
		tb.Errorf("sandbox %s ended but its state dir %s remains: %v", id, filepath.Join(d.runDir, id),
			dirEntries(filepath.Join(d.runDir, id)))
	}
}

func (d *daemon) log() string {
	b, _ := os.ReadFile(d.logPath)
	return string(b)
}

// dumpLog prints the daemon's log (the tail, if it is long).
func (d *daemon) dumpLog(tb testing.TB) {
	tb.Helper()
	lines := strings.Split(strings.TrimRight(d.log(), "\n"), "\n")
	const keep = 300
	if len(lines) > keep {
		lines = append([]string{fmt.Sprintf("... %d earlier lines", len(lines)-keep)}, lines[len(lines)-keep:]...)
	}
	tb.Logf("daemon log (%s):\n%s", d.logPath, strings.Join(lines, "\n"))
}

func (d *daemon) url() string { return "unix://" + d.sock }

// cli runs the airlock CLI against d as tenant (AIRLOCK_URL, AIRLOCK_API_KEY).
func (d *daemon) cli(tb testing.TB, tenant string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	return d.env.cliEnv(tb, []string{"AIRLOCK_URL=" + d.url(), "AIRLOCK_API_KEY=" + d.env.keys[tenant]}, args...)
}

// client returns a Go SDK client acting as tenant.
func (d *daemon) client(tb testing.TB, tenant string) *client.Client {
	tb.Helper()
	key, ok := d.env.keys[tenant]
	if !ok {
		tb.Fatalf("no key for tenant %s", tenant)
	}
	c, err := client.New(d.url(), key)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func (d *daemon) httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", d.sock)
		},
	}}
}

// apiResponse is a raw API answer.
type apiResponse struct {
	status int
	header http.Header
	body   []byte
}

// errCode returns the stable error code of a JSON error answer, or "".
func (r apiResponse) errCode() string {
	var er struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &er)
	return er.Error.Code
}

func (r apiResponse) String() string {
	b := r.body
	if len(b) > 500 {
		b = b[:500]
	}
	return fmt.Sprintf("%d %s", r.status, b)
}

// do sends a raw request as tenant ("" = no key). A body that is a
// *bytes.Reader or *strings.Reader has its length declared; any other
// reader is sent chunked.
func (d *daemon) do(tb testing.TB, tenant, method, path string, body io.Reader) apiResponse {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://airlock"+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("Authorization", "Bearer "+d.env.keys[tenant])
	}
	res, err := d.httpClient().Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return apiResponse{status: res.StatusCode, header: res.Header, body: b}
}

// ctx returns a context bounded generously for slow, shared machines.
func ctx(tb testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	tb.Cleanup(cancel)
	return c
}

// mustExec runs cmd in sbx and fails tb unless it exits 0.
func mustExec(tb testing.TB, sbx *client.Sandbox, cmd string) string {
	tb.Helper()
	res, err := sbx.Exec(ctx(tb), cmd, client.WithTimeout(2*time.Minute))
	if err != nil {
		tb.Fatalf("exec %q in %s: %v", cmd, sbx.ID, err)
	}
	if res.ExitCode != 0 {
		tb.Fatalf("exec %q in %s: exit %d, stderr %q", cmd, sbx.ID, res.ExitCode, res.Stderr)
	}
	return res.Stdout
}

// createSandbox creates a sandbox of the test template and kills it when
// the test ends (a 404 then is fine: the test killed it itself).
func createSandbox(tb testing.TB, c *client.Client, ttl int, md map[string]string) *client.Sandbox {
	tb.Helper()
	sbx, err := c.CreateSandbox(ctx(tb), client.CreateOptions{Template: templateName, TTLSeconds: ttl, Metadata: md})
	if err != nil {
		tb.Fatalf("create sandbox: %v", err)
	}
	tb.Cleanup(func() {
		if err := sbx.Kill(context.Background()); err != nil && !client.IsNotFound(err) && !errors.Is(err, client.ErrFailedPrecondition) {
			tb.Errorf("kill %s: %v", sbx.ID, err)
		}
	})
	return sbx
}

var uniqN atomic.Int64

// uniq returns a short value unique to this test process and call.
func uniq(prefix string) string {
	n := uniqN.Add(1)
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), n)
}
