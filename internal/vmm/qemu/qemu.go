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
	"github.com/airlock-dev/airlock/internal/vmm/jail"
)

// Binary is the QEMU system emulator airlock drives.
const Binary = "qemu-system-x86_64"

// AgentPortName must match the agent's agent.PortName.
const AgentPortName = "org.airlock.agent"

// agentPortID is the port device's id: part of the device set a migration
// stream must match.
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

// Driver boots QEMU microvm machines. Its fields are immutable after New.
type Driver struct {
	path    string // absolute path of the QEMU binary
	version string // e.g. "7.2.19"
	// jail confines every QEMU it starts; nil only when the operator
	// turned jailing off, for the reason in unjailed.
	jail     *jail.Jailer
	unjailed string
	tcgCPU   string // -cpu under TCG; immutable
}

// Options configure a Driver.
type Options struct {
	// TCGCPU is the CPU model emulated under TCG (default DefaultTCGCPU).
	// Under KVM the guest always gets the host's ("host").
	TCGCPU string
	// Jail confines every VMM. Nil runs them as this process's user in its
	// namespaces: only on an operator's explicit opt-out, whose reason
	// Unjailed gives (doctor and every sandbox record show it).
	Jail     *jail.Jailer
	Unjailed string
}

var (
	versionRE = regexp.MustCompile(`version ([0-9][0-9.]*)`)
	macRE     = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)
)

// New finds QEMU on PATH and reads its version.
func New(opts Options) (*Driver, error) {
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
	if opts.Jail == nil && opts.Unjailed == "" {
		return nil, errdefs.InvalidArgument("qemu driver: no jail and no reason to run without one")
	}
	if opts.Jail == nil {
		// A jailed VMM gets this from its helper just before the exec.
		// Unjailed, this process execs QEMU itself, and Go runs nothing
		// between fork and exec: the VMM inherits the flag from here, so
		// this process (which needs huge pages for nothing) has it too.
		if err := jail.DisableHugePages(); err != nil {
			return nil, err
		}
	}
	if opts.TCGCPU == "" {
		opts.TCGCPU = DefaultTCGCPU
	}
	return &Driver{path: path, version: string(m[1]), jail: opts.Jail, unjailed: opts.Unjailed, tcgCPU: opts.TCGCPU}, nil
}

// DefaultTCGCPU is QEMU's most capable emulated CPU. (Its wide-SIMD
// extensions are what libraries dispatch to; see the README's OCR
// section for what emulating them costs.)
const DefaultTCGCPU = "max"

// CPUModel is the -cpu a machine under accel gets. A snapshot restores
// only into the same model, so it is part of what a bake depends on.
func (d *Driver) CPUModel(accel vmm.Accel) string {
	if accel == vmm.AccelKVM {
		return "host"
	}
	return d.tcgCPU
}

// Protections says what confines the VMMs this driver starts.
func (d *Driver) Protections() jail.Report {
	if d.jail == nil {
		return jail.Unjailed(d.unjailed)
	}
	return d.jail.Report()
}

// Jailed reports whether VMMs run jailed.
func (d *Driver) Jailed() bool { return d.jail != nil }

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
	// jail is QEMU's confinement (immutable; nil when unjailed). Sockets
	// this process makes for it must belong to its uid.
	jail     *jail.Jail
	jailed   bool
	uid, gid int

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
//
// Descriptors handed over (tapFD, memFD; 0 when none) are named by number.
func (d *Driver) args(spec vmm.BootSpec, stateDir string, tapFD, memFD int) []string {
	cpu := d.CPUModel(spec.Accel)
	a := []string{
		"-M", "microvm",
		"-accel", accelArg(spec.Accel),
		"-cpu", cpu,
		"-m", strconv.Itoa(spec.MemoryMiB),
		"-smp", strconv.Itoa(spec.VCPUs),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-chardev", "file,id=console,path=" + filepath.Join(stateDir, consoleLog),
		"-serial", "chardev:console",
		"-qmp", "unix:" + filepath.Join(stateDir, qmpSock) + ",server=on,wait=off",
		"-device", "virtio-serial-device",
		"-chardev", "socket,id=agent,path=" + filepath.Join(stateDir, agentSock) + ",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,id=" + agentPortID + ",name=" + AgentPortName,
		// QEMU's own seccomp filter: no exec, no setuid, no scheduler or
		// affinity changes, no obsolete syscalls. Migration streams go over
		// unix sockets (see migrate.go), so nothing needs a shell.
		"-sandbox", jail.Seccomp,
	}
	// No -pidfile: a jailed QEMU is PID 1 of its namespace; the host's pid
	// is written by start.
	a = append(a, memoryArgs(spec, memFD)...)
	if spec.Incoming {
		a = append(a, "-incoming", "defer")
		if spec.DeviceState {
			// SaveDeviceState's stream starts with no configuration
			// section, and ends with no VM description.
			a = append(a, "-global", "migration.send-configuration=off", "-machine", "suppress-vmdesc=on")
		}
	} else {
		// Only a cold boot loads the kernel. QEMU keeps a -kernel image in
		// its own memory for the life of the process (fw_cfg data, not a
		// RAM block, so nothing a migration stream carries or checks): a
		// restored guest booted long ago, and leaving it out saves each
		// clone ~14 MiB of private memory.
		a = append(a, "-kernel", spec.Kernel, "-initrd", spec.Initrd, "-append", strings.Join(kernelArgs(spec), " "))
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

// kernelArgs is the guest kernel's command line.
func kernelArgs(spec vmm.BootSpec) []string {
	kargs := []string{"console=ttyS0", "rdinit=/init", "quiet", "panic=-1", "reboot=t"}
	if spec.Accel == vmm.AccelTCG {
		if khz := vmm.HostTSCkHz(); khz > 0 {
			kargs = append(kargs, "tsc_early_khz="+strconv.Itoa(khz))
		}
		// Under emulation the guest's TSC follows the host's, but its
		// timer interrupts arrive late on a busy host, so the clocksource
		// watchdog judges the TSC by jiffies, marks it unstable and the
		// kernel falls back to jiffies: guest time then ran at a third of
		// real time at load 25 (a page OCRed in "150 s" took 7 minutes),
		// and every limit measured in the guest stretched with it.
		kargs = append(kargs, "tsc=reliable")
	}
	if spec.RootImage != "" {
		kargs = append(kargs, "airlock.root=/dev/vda")
	}
	return append(kargs, spec.KernelArgs...)
}

// memoryArgs backs guest RAM with a file when the spec asks for one
// (none: anonymous memory). The RAM block id "mem" must be identical on
// every side of a migration.
func memoryArgs(spec vmm.BootSpec, memFD int) []string {
	switch {
	case spec.Memory != nil:
		share := "on"
		if spec.MemoryPrivate {
			share = "off"
		}
		return []string{
			"-object", fmt.Sprintf("memory-backend-file,id=mem,size=%dM,mem-path=/proc/self/fd/%d,share=%s", spec.MemoryMiB, memFD, share),
			"-machine", "memory-backend=mem"}
	case spec.MemoryFile != "":
		// A shared file (a bake): the guest's RAM ends up in it. (A private
		// base is always a sealed memfd: QEMU 7.2 opens memory files
		// read-write, and its readonly=on would make guest RAM itself
		// read-only; the rom=off that fixes that arrived in 8.2.)
		return []string{
			"-object", fmt.Sprintf("memory-backend-file,id=mem,size=%dM,mem-path=%s,share=on", spec.MemoryMiB, spec.MemoryFile),
			"-machine", "memory-backend=mem"}
	}
	return nil
}

// tcgBufferMiB caps TCG's translation cache. QEMU's default lets it grow
// to 1 GiB per VM, and a guest that churns code (a fork bomb) gets there:
// with a cap, a full cache is flushed and refilled (slower, bounded), and
// the jail's memory limit can be tight.
const tcgBufferMiB = 256

func accelArg(a vmm.Accel) string {
	if a == vmm.AccelTCG {
		return "tcg,tb-size=" + strconv.Itoa(tcgBufferMiB)
	}
	return string(a)
}

// vmmOverheadMiB is what the jail's memory limit allows QEMU above the
// guest's RAM: its heap and device buffers, and under TCG the capped
// translation cache.
func vmmOverheadMiB(a vmm.Accel) int {
	if a == vmm.AccelTCG {
		return 256 + tcgBufferMiB
	}
	return 256
}

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
	case spec.MemoryFile != "" && spec.Memory != nil:
		return errdefs.InvalidArgument("memory: a file or a memfd, not both")
	case spec.MemoryFile != "" && spec.MemoryPrivate:
		return errdefs.InvalidArgument("memory: a private base must be a sealed memfd, never a file the VMM opens read-write")
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
	// Descriptors from 3 up, in this order.
	var extra []*os.File
	tapFD, memFD := 0, 0
	if spec.NICMAC != "" && spec.TapFile != nil {
		extra = append(extra, spec.TapFile)
		tapFD = 2 + len(extra)
	}
	if spec.Memory != nil {
		extra = append(extra, spec.Memory)
		memFD = 2 + len(extra)
	}
	var jl *jail.Jail
	if d.jail != nil {
		if jl, err = d.prepareJail(spec, len(extra)); err != nil {
			os.RemoveAll(spec.StateDir)
			return nil, err
		}
	}
	m, err := d.start(spec.ID, spec.StateDir, d.args(spec, spec.StateDir, tapFD, memFD), extra, jl)
	if err != nil {
		if jl != nil {
			jl.Release()
		}
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

// prepareJail gives a machine its jail: what it may read (kernel,
// initramfs, root image), what it may write (its state directory, a
// shared memory file, created here so that it is the jail's), its limits.
func (d *Driver) prepareJail(spec vmm.BootSpec, keepFDs int) (*jail.Jail, error) {
	jm := jail.Machine{ID: spec.ID, StateDir: spec.StateDir, KVM: spec.Accel == vmm.AccelKVM,
		MemoryMiB: spec.MemoryMiB, OverheadMiB: vmmOverheadMiB(spec.Accel), VCPUs: spec.VCPUs, KeepFDs: keepFDs,
		ReadOnly: []string{spec.Kernel, spec.Initrd}}
	if spec.RootImage != "" {
		jm.ReadOnly = append(jm.ReadOnly, spec.RootImage)
	}
	if spec.MemoryFile != "" {
		// Sized here: the jail's file-size rlimit stops the VMM itself
		// from growing a file (it only maps this one).
		f, err := os.OpenFile(spec.MemoryFile, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("memory file: %w", err)
		}
		err = f.Truncate(int64(spec.MemoryMiB) << 20)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("memory file: %w", err)
		}
		jm.Writable = append(jm.Writable, spec.MemoryFile)
	}
	return d.jail.Prepare(jm)
}

// start launches QEMU (through its jail, when it has one) with its output
// going to the state directory, and records its pid there.
func (d *Driver) start(id, stateDir string, args []string, extra []*os.File, jl *jail.Jail) (*Machine, error) {
	logf, err := os.OpenFile(filepath.Join(stateDir, qemuLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own copy
	var cmd *exec.Cmd
	if jl != nil {
		if cmd, err = jl.Command(d.path, args); err != nil {
			return nil, err
		}
	} else {
		cmd = exec.Command(d.path, args...)
		// Nothing of this process's environment (API keys, proxy
		// credentials) reaches the VMM.
		cmd.Env = []string{}
		// Own process group: a terminal's ^C goes to airlock, which destroys
		// the VM in order, rather than racing it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = extra // fd 3...
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", d.path, err)
	}
	m := &Machine{id: id, stateDir: stateDir, pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{}), jail: jl}
	if jl != nil {
		m.jailed, m.uid, m.gid = true, jl.UID, jl.UID
	}
	go m.reap()
	if err := writePID(stateDir, m.pid); err != nil {
		m.Destroy(context.Background())
		return nil, err
	}
	return m, nil
}

// writePID records the host's pid of a machine's VMM, for adoption by a
// later process.
func writePID(stateDir string, pid int) error {
	tmp := filepath.Join(stateDir, pidFile+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	return os.Rename(tmp, filepath.Join(stateDir, pidFile))
}

func (m *Machine) reap() {
	err := m.cmd.Wait()
	m.ended(fmt.Sprint(err))
}

// ended records how the VMM ended, undoes its jail and tells waiters.
func (m *Machine) ended(how string) {
	m.mu.Lock()
	if !m.killed {
		tail := tailFile(filepath.Join(m.stateDir, qemuLog), 2048)
		m.exitErr = errdefs.Unavailable("VM %s: QEMU exited unexpectedly (%s): %s", m.id, how, tail)
	}
	m.mu.Unlock()
	if m.jail != nil {
		m.jail.Release()
	}
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
