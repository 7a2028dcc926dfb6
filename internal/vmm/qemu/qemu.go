package qemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/vmm"
)

// Binary is the QEMU system emulator airlock drives.
const Binary = "qemu-system-x86_64"

// AgentPortName must match the agent's agent.PortName.
const AgentPortName = "org.airlock.agent"

// agentPortID is the port device's id, named in VSERPORT_CHANGE events.
const agentPortID = "agentport"

// File names inside a machine's state directory.
const (
	qmpSock     = "qmp.sock"
	agentSock   = "agent.sock"
	pidFile     = "qemu.pid"
	qemuLog     = "qemu.log"
	consoleLog  = "console.log"
	defaultWait = 30 * time.Second
)

// Driver boots QEMU microvm machines.
type Driver struct {
	path    string // absolute path of the QEMU binary
	version string // e.g. "7.2.19"
}

var (
	versionRE = regexp.MustCompile(`version ([0-9][0-9.]*)`)
	macRE     = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)
)

// New finds QEMU on PATH and reads its version.
func New() (*Driver, error) {
	path, err := exec.LookPath(Binary)
	if err != nil {
		return nil, errdefs.FailedPrecondition("%s not found (apt-get install qemu-system-x86): %v", Binary, err)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", path, err)
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("%s --version: unrecognised output %q", path, out)
	}
	return &Driver{path: path, version: string(m[1])}, nil
}

func (d *Driver) Name() string    { return "qemu" }
func (d *Driver) Version() string { return d.version }
func (d *Driver) Path() string    { return d.path }

// Machine is a running QEMU process and its state directory.
type Machine struct {
	id       string    // immutable
	stateDir string    // immutable; removed by Destroy
	pid      int       // immutable
	cmd      *exec.Cmd // immutable; nil for an adopted machine (not our child)
	exited   chan struct{}

	mu      sync.Mutex
	exitErr error // guarded by mu; set when the process ends unexpectedly
	killed  bool  // guarded by mu; Destroy has been called
}

func (m *Machine) ID() string              { return m.id }
func (m *Machine) PID() int                { return m.pid }
func (m *Machine) StateDir() string        { return m.stateDir }
func (m *Machine) AgentSocket() string     { return filepath.Join(m.stateDir, agentSock) }
func (m *Machine) QMPSocket() string       { return filepath.Join(m.stateDir, qmpSock) }
func (m *Machine) Exited() <-chan struct{} { return m.exited }

func (m *Machine) ExitError() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exitErr
}

// args builds the QEMU command line for a cold boot. The device set must
// stay identical between bake and restore (same ids, same order), since a
// migration stream only loads into a matching machine.
func (d *Driver) args(spec vmm.BootSpec, stateDir string) []string {
	cpu := "max"
	if spec.Accel == vmm.AccelKVM {
		cpu = "host"
	}
	kargs := []string{"console=ttyS0", "rdinit=/init", "quiet", "panic=-1", "reboot=t"}
	if spec.Accel == vmm.AccelTCG {
		if khz := vmm.HostTSCkHz(); khz > 0 {
			kargs = append(kargs, "tsc_early_khz="+strconv.Itoa(khz))
		}
	}
	if spec.RootImage != "" {
		kargs = append(kargs, "airlock.root=/dev/vda")
	}
	kargs = append(kargs, spec.KernelArgs...)
	a := []string{
		"-M", "microvm,accel=" + string(spec.Accel),
		"-cpu", cpu,
		"-m", strconv.Itoa(spec.MemoryMiB),
		"-smp", strconv.Itoa(spec.VCPUs),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-chardev", "file,id=console,path=" + filepath.Join(stateDir, consoleLog),
		"-serial", "chardev:console",
		"-kernel", spec.Kernel,
		"-initrd", spec.Initrd,
		"-append", strings.Join(kargs, " "),
		"-qmp", "unix:" + filepath.Join(stateDir, qmpSock) + ",server=on,wait=off",
		"-device", "virtio-serial-device",
		"-chardev", "socket,id=agent,path=" + filepath.Join(stateDir, agentSock) + ",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,id=" + agentPortID + ",name=" + AgentPortName,
		"-pidfile", filepath.Join(stateDir, pidFile),
	}
	if spec.MemoryFile != "" {
		share := "on"
		if spec.MemoryPrivate {
			// A private mapping: guest writes land in this process's
			// copy-on-write pages, never in the file. (QEMU 7.2's
			// readonly=on would make guest RAM itself read-only; the
			// rom=off that fixes that arrived in 8.2.)
			share = "off"
		}
		// The RAM block id "mem" must be identical on every side of a
		// migration.
		a = append(a,
			"-object", fmt.Sprintf("memory-backend-file,id=mem,size=%dM,mem-path=%s,share=%s", spec.MemoryMiB, spec.MemoryFile, share),
			"-machine", "memory-backend=mem")
	}
	if spec.Incoming {
		a = append(a, "-incoming", "defer")
	}
	if spec.RootImage != "" {
		a = append(a,
			"-drive", "id=root,file="+spec.RootImage+",format=raw,if=none,readonly=on",
			"-device", "virtio-blk-device,drive=root")
	}
	if spec.NICMAC != "" {
		// Same device, same id, same MAC on every side of a migration; only
		// the backend differs. A tap is handed over as an open descriptor
		// (opened by the caller inside the sandbox's network namespace), so
		// QEMU itself needs neither that namespace nor CAP_NET_ADMIN.
		backend := "hubport,id=net0,hubid=0"
		if spec.TapFile != nil {
			backend = "tap,id=net0,fd=" + strconv.Itoa(tapFD)
		}
		a = append(a,
			"-netdev", backend,
			"-device", "virtio-net-device,netdev=net0,mac="+spec.NICMAC)
	}
	return a
}

// tapFD is the descriptor number QEMU finds BootSpec.TapFile at: the first
// of exec.Cmd.ExtraFiles.
const tapFD = 3

func validate(spec vmm.BootSpec) error {
	switch {
	case spec.ID == "":
		return errdefs.InvalidArgument("machine id is empty")
	case spec.StateDir == "":
		return errdefs.InvalidArgument("machine state directory is empty")
	case spec.MemoryMiB < 64 || spec.MemoryMiB > 64<<10:
		return errdefs.InvalidArgument("memory %d MiB out of range (64..65536)", spec.MemoryMiB)
	case spec.VCPUs < 1 || spec.VCPUs > 64:
		return errdefs.InvalidArgument("vcpus %d out of range (1..64)", spec.VCPUs)
	case spec.Accel != vmm.AccelKVM && spec.Accel != vmm.AccelTCG:
		return errdefs.InvalidArgument("acceleration %q unknown", spec.Accel)
	case spec.NICMAC != "" && !macRE.MatchString(spec.NICMAC):
		return errdefs.InvalidArgument("nic mac %q is not aa:bb:cc:dd:ee:ff", spec.NICMAC)
	}
	// Unix socket paths are limited to 107 bytes.
	if n := len(filepath.Join(spec.StateDir, agentSock)); n > 100 {
		return errdefs.InvalidArgument("state directory path too long for unix sockets (%d bytes)", n)
	}
	for _, f := range []string{spec.Kernel, spec.Initrd} {
		if _, err := os.Stat(f); err != nil {
			return errdefs.FailedPrecondition("boot file: %v", err)
		}
	}
	return nil
}

// Boot starts QEMU for a cold boot and returns once its QMP socket answers.
func (d *Driver) Boot(ctx context.Context, spec vmm.BootSpec) (_ vmm.Machine, err error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(spec.StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("state root: %w", err)
	}
	if err := os.Mkdir(spec.StateDir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, errdefs.AlreadyExists("machine state directory %s exists", spec.StateDir)
		}
		return nil, fmt.Errorf("state dir: %w", err)
	}
	var extra []*os.File
	if spec.NICMAC != "" && spec.TapFile != nil {
		extra = []*os.File{spec.TapFile}
	}
	m, err := d.start(spec.ID, spec.StateDir, d.args(spec, spec.StateDir), extra)
	if err != nil {
		os.RemoveAll(spec.StateDir)
		return nil, err
	}
	defer func() {
		if err != nil {
			m.Destroy(context.Background())
		}
	}()
	wait := spec.BootTimeout
	if wait == 0 {
		wait = defaultWait
	}
	if err := m.waitQMP(ctx, wait); err != nil {
		return nil, err
	}
	return m, nil
}

// start launches QEMU with its output going to the state directory.
func (d *Driver) start(id, stateDir string, args []string, extra []*os.File) (*Machine, error) {
	logf, err := os.OpenFile(filepath.Join(stateDir, qemuLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(d.path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = extra // fd 3...: see tapFD
	// Own process group: a terminal's ^C goes to airlock, which destroys
	// the VM in order, rather than racing it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", d.path, err)
	}
	m := &Machine{id: id, stateDir: stateDir, pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	go m.reap()
	return m, nil
}

func (m *Machine) reap() {
	err := m.cmd.Wait()
	m.mu.Lock()
	if !m.killed {
		tail := tailFile(filepath.Join(m.stateDir, qemuLog), 2048)
		m.exitErr = errdefs.Unavailable("VM %s: QEMU exited unexpectedly (%v): %s", m.id, err, tail)
	}
	m.mu.Unlock()
	close(m.exited)
}

func tailFile(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("?"))))
}

// waitQMP polls until QMP answers, QEMU exits, or the timeout passes.
func (m *Machine) waitQMP(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := m.QMP(ctx, "query-status", nil)
		if err == nil {
			return nil
		}
		select {
		case <-m.exited:
			return m.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("VM %s: waiting for QMP: %w", m.id, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errdefs.DeadlineExceeded("VM %s: QMP did not answer within %s: %v", m.id, timeout, err)
		}
	}
}

// QMP runs one QMP command on a fresh monitor connection and returns its
// "return" value. A connection per command keeps no state between calls
// and lets several goroutines talk to one machine safely.
func (m *Machine) QMP(ctx context.Context, command string, arguments any) (json.RawMessage, error) {
	mon, err := qmp.NewSocketMonitor("unix", m.QMPSocket(), 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("qmp connect: %w", err)
	}
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		if err := mon.Connect(); err != nil {
			done <- result{err: fmt.Errorf("qmp handshake: %w", err)}
			return
		}
		cmd := map[string]any{"execute": command}
		if arguments != nil {
			cmd["arguments"] = arguments
		}
		b, _ := json.Marshal(cmd)
		raw, err := mon.Run(b)
		done <- result{raw, err}
	}()
	defer mon.Disconnect()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("qmp %s: %w", command, r.err)
		}
		var resp struct {
			Return json.RawMessage `json:"return"`
		}
		if err := json.Unmarshal(r.raw, &resp); err != nil {
			return nil, fmt.Errorf("qmp %s: decode: %w", command, err)
		}
		return resp.Return, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("qmp %s: %w", command, ctx.Err())
	case <-m.exited:
		return nil, m.ExitError()
	}
}

// Destroy kills QEMU, waits for it to be gone, and removes the state
// directory. There is nothing to save: the guest's state is its memory.
func (m *Machine) Destroy(ctx context.Context) error {
	m.mu.Lock()
	m.killed = true
	m.mu.Unlock()
	select {
	case <-m.exited:
	default:
		_ = syscall.Kill(m.pid, syscall.SIGKILL)
	}
	select {
	case <-m.exited:
	case <-ctx.Done():
		return fmt.Errorf("VM %s: QEMU (pid %d) did not exit after SIGKILL: %w", m.id, m.PID(), ctx.Err())
	case <-time.After(30 * time.Second):
		return fmt.Errorf("VM %s: QEMU (pid %d) did not exit 30s after SIGKILL", m.id, m.PID())
	}
	if err := os.RemoveAll(m.stateDir); err != nil {
		return fmt.Errorf("VM %s: remove state: %w", m.id, err)
	}
	return nil
}
