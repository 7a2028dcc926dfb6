package vm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/vmm"
	"github.com/airlock-dev/airlock/internal/vmm/jail"
	"github.com/airlock-dev/airlock/internal/vmm/qemu"
)

// Config is what a Host needs to know; zero values take defaults.
type Config struct {
	CacheDir string // downloads and built images; default image.DefaultCacheDir()
	RunDir   string // per-VM state directories; default DefaultRunDir()
	Accel    string // "", "auto", "kvm", "tcg"
	Agent    string // airlock-agent binary; default image.FindAgent()
	Progress image.Progress
	// Jail is "on" (the default: every VMM in a jail of its own, see
	// vmm/jail) or "off" (the operator's explicit opt-out: VMMs run as
	// this process's user in its namespaces; doctor and every sandbox
	// record say so). A host that cannot jail refuses to start unless off.
	Jail string
	// JailHelper is the airlock-jailer binary; default next to this
	// executable, or $AIRLOCK_JAILER.
	JailHelper string
	// JailInstance names this host's jail cgroups (airlock-<instance>);
	// default derived from RunDir, so two daemons never share them.
	JailInstance string
	// TCGCPU is the CPU model guests get under TCG; default
	// $AIRLOCK_TCG_CPU, else qemu.DefaultTCGCPU. Bakes are keyed by it.
	TCGCPU string
}

// DefaultRunDir holds live VM state (sockets, pid files). It is short
// because unix socket paths are limited to 107 bytes.
func DefaultRunDir() string {
	if d := os.Getenv("AIRLOCK_RUN_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/run/airlock"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("airlock-%d", os.Geteuid()))
}

// Host boots VMs on this machine. It is safe for concurrent use; its
// exported fields are immutable after NewHost.
type Host struct {
	Driver      vmm.Driver // QEMU's in production
	Accel       vmm.AccelChoice
	Kernel      *image.Kernel
	Initrd      string // initramfs path (cached)
	MinimalRoot string // busybox root image (cached)
	CacheDir    string
	RunDir      string

	basesMu sync.Mutex
	bases   map[string]*base // guarded by basesMu; sealed copies of clone bases, by path
}

// NewHost resolves everything a boot needs, fetching and building into the
// cache what is missing.
func NewHost(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.CacheDir == "" {
		cfg.CacheDir = image.DefaultCacheDir()
	}
	if cfg.RunDir == "" {
		cfg.RunDir = DefaultRunDir()
	}
	drv, err := newDriver(cfg)
	if err != nil {
		return nil, err
	}
	accel, err := vmm.ChooseAccel(cfg.Accel)
	if err != nil {
		return nil, errdefs.InvalidArgument("%v", err)
	}
	agentPath := cfg.Agent
	if agentPath == "" {
		if agentPath, err = image.FindAgent(); err != nil {
			return nil, errdefs.FailedPrecondition("%v", err)
		}
	}
	k, err := image.FetchKernel(ctx, cfg.CacheDir, cfg.Progress)
	if err != nil {
		return nil, errdefs.FailedPrecondition("guest kernel: %v", err)
	}
	initrd, err := image.BuildInitramfs(cfg.CacheDir, k, agentPath)
	if err != nil {
		return nil, err
	}
	root, err := image.BuildMinimalRootfs(ctx, cfg.CacheDir)
	if err != nil {
		return nil, errdefs.FailedPrecondition("%v", err)
	}
	if err := os.MkdirAll(cfg.RunDir, 0o700); err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}
	return &Host{Driver: drv, Accel: accel, Kernel: k, Initrd: initrd, MinimalRoot: root,
		CacheDir: cfg.CacheDir, RunDir: cfg.RunDir, bases: map[string]*base{}}, nil
}

// newDriver makes the QEMU driver with its jail, or refuses: a host asked
// to jail its VMMs that cannot never runs them unconfined.
func newDriver(cfg Config) (*qemu.Driver, error) {
	switch cfg.Jail {
	case "off":
		return qemu.New(qemu.Options{Unjailed: "turned off by the operator (--jail=off)", TCGCPU: tcgCPU(cfg)})
	case "", "on":
	default:
		return nil, errdefs.InvalidArgument("jail %q: want on or off", cfg.Jail)
	}
	helper := cfg.JailHelper
	if helper == "" {
		var err error
		if helper, err = image.FindBinary("airlock-jailer", "AIRLOCK_JAILER"); err != nil {
			return nil, errdefs.FailedPrecondition("cannot jail VMMs: %v (or pass --jail=off to run them unconfined)", err)
		}
	}
	instance := cfg.JailInstance
	if instance == "" {
		sum := sha256.Sum256([]byte(cfg.RunDir))
		instance = hex.EncodeToString(sum[:])[:8]
	}
	j, err := jail.New(jail.Config{Helper: helper, Instance: instance})
	if err != nil {
		return nil, errdefs.FailedPrecondition("cannot jail VMMs on this host: %v (pass --jail=off to run them unconfined)", err)
	}
	return qemu.New(qemu.Options{Jail: j, TCGCPU: tcgCPU(cfg)})
}

// tcgCPU is the configured TCG CPU model, or $AIRLOCK_TCG_CPU.
func tcgCPU(cfg Config) string {
	if cfg.TCGCPU != "" {
		return cfg.TCGCPU
	}
	return os.Getenv("AIRLOCK_TCG_CPU")
}

// NewID returns a fresh random id with the given prefix, e.g. "vm-".
func NewID(prefix string) string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// BootOptions shapes a machine. Everything but Timeout and ID must be the
// same for a bake and the restores made from it.
type BootOptions struct {
	ID         string   // default a fresh "vm-..." id
	MemoryMiB  int      // default 256
	VCPUs      int      // default 1
	RootImage  string   // default the minimal busybox root
	KernelArgs []string // extra guest kernel arguments
	// MemoryFile backs RAM with a file: shared for a bake (the guest's RAM
	// ends up in it); with MemoryPrivate, the base of a restore, which the
	// VMM maps from a sealed copy (Host.Base) and never opens itself.
	MemoryFile    string
	MemoryPrivate bool
	// Memory backs RAM with an open memfd instead of a file, mapped private
	// and sealed: a fork's children's base (ForkFiles.ChildOptions).
	Memory *os.File
	// Incoming starts the machine paused, waiting for LoadState or a
	// migration, instead of booting.
	Incoming bool
	// DeviceState makes an Incoming machine load a device-only state (a
	// fork's: see SnapshotForFork), its RAM being all in Memory already.
	DeviceState bool
	// TapFile backs the machine's NIC with a tap opened in a sandbox's
	// network namespace (netpool). nil: the NIC is on an empty hub and
	// nothing the guest sends leaves QEMU. Every machine has the NIC (with
	// netpool.Guest().MAC), so a template baked without a tap restores into
	// a machine with one and vice versa. The caller keeps TapFile open until
	// the machine has started and closes it after (QEMU holds its own copy).
	TapFile *os.File
	Timeout time.Duration // until the agent answers; default 120s
}

func (h *Host) withDefaults(opts BootOptions) BootOptions {
	if opts.ID == "" {
		opts.ID = NewID("vm-")
	}
	if opts.MemoryMiB == 0 {
		opts.MemoryMiB = 256
	}
	if opts.VCPUs == 0 {
		opts.VCPUs = 1
	}
	if opts.RootImage == "" {
		opts.RootImage = h.MinimalRoot
	}
	if opts.Timeout == 0 {
		opts.Timeout = 120 * time.Second
	}
	return opts
}

// start launches the VMM for opts without waiting for the guest.
func (h *Host) start(ctx context.Context, opts BootOptions) (vmm.Machine, error) {
	spec := vmm.BootSpec{
		ID: opts.ID, StateDir: filepath.Join(h.RunDir, opts.ID),
		Kernel: h.Kernel.Vmlinuz(), Initrd: h.Initrd, RootImage: opts.RootImage,
		KernelArgs: opts.KernelArgs, MemoryMiB: opts.MemoryMiB, VCPUs: opts.VCPUs,
		Accel: h.Accel.Accel, MemoryFile: opts.MemoryFile, MemoryPrivate: opts.MemoryPrivate, Memory: opts.Memory,
		Incoming: opts.Incoming, DeviceState: opts.DeviceState, NICMAC: netpool.Guest().MAC.String(), TapFile: opts.TapFile,
	}
	if spec.MemoryPrivate && spec.MemoryFile != "" {
		f, _, err := h.Base(spec.MemoryFile)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", opts.ID, err)
		}
		spec.MemoryFile, spec.Memory = "", f
	}
	m, err := h.Driver.Boot(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", opts.ID, err)
	}
	return m, nil
}

// VM is a booted guest with a connected agent.
type VM struct {
	ID      string
	Machine vmm.Machine
	Agent   *guest.Client // nil until connected
}

// Boot cold-boots a VM and returns it once its agent has answered and
// taken its clock, entropy and identity.
func (h *Host) Boot(ctx context.Context, opts BootOptions) (_ *VM, err error) {
	opts = h.withDefaults(opts)
	opts.Incoming = false
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	m, err := h.start(ctx, opts)
	if err != nil {
		return nil, err
	}
	vm := &VM{ID: opts.ID, Machine: m}
	defer func() {
		if err != nil {
			vm.Destroy(context.Background())
		}
	}()
	if err := vm.connect(ctx, guest.DialOptions{}); err != nil {
		return nil, err
	}
	if err := vm.Prepare(ctx, opts.ID); err != nil {
		return nil, err
	}
	return vm, nil
}

// connect dials the agent, giving up early if QEMU dies meanwhile.
func (vm *VM) connect(ctx context.Context, opts guest.DialOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-vm.Machine.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	c, err := guest.Dial(ctx, vm.Machine.AgentSocket(), opts)
	if err == nil && opts.First == nil {
		// Cold boot or adoption: the agent may not be listening yet.
		if err = c.Ready(ctx); err != nil {
			c.Close()
		}
	}
	if err != nil {
		if exitErr := vm.Machine.ExitError(); exitErr != nil {
			return exitErr
		}
		return fmt.Errorf("VM %s: %w", vm.ID, err)
	}
	vm.Agent = c
	return nil
}

// Prepare pushes the host's wall clock, 64 fresh random bytes for the
// guest CRNG, and the VM's identity. Run after every boot and restore.
func (vm *VM) Prepare(ctx context.Context, sandboxID string) error {
	seed := make([]byte, 64)
	if _, err := rand.Read(seed); err != nil {
		return err
	}
	sent := time.Now()
	_, err := vm.Agent.Prepare(ctx, &agentpb.PrepareRequest{
		UnixNanos: sent.UnixNano(), Entropy: seed,
		SandboxId: sandboxID, Hostname: sandboxID,
	})
	if err != nil {
		return fmt.Errorf("VM %s: prepare: %w", vm.ID, err)
	}
	// The clock pushed is the host's at send time, so it is stale by the
	// call's transit. The first call after a restore can take seconds on a
	// loaded emulated host (connection set-up, cold code paths); push the
	// clock again, now over a warm path, until a push lands quickly.
	for try := 0; try < 3 && time.Since(sent) > clockSlack; try++ {
		sent = time.Now()
		if _, err := vm.Agent.Prepare(ctx, &agentpb.PrepareRequest{UnixNanos: sent.UnixNano()}); err != nil {
			return fmt.Errorf("VM %s: set clock: %w", vm.ID, err)
		}
	}
	return nil
}

// clockSlack is how stale a pushed clock may be before it is pushed again.
const clockSlack = 50 * time.Millisecond

// ConfigureNetwork gives the guest its network configuration (netpool's
// Guest(): the same address, gateway and resolver in every sandbox). A bake
// runs it once before the snapshot, so clones restore already configured
// and create does no network work inside the guest.
func (vm *VM) ConfigureNetwork(ctx context.Context, gc netpool.GuestConfig) error {
	_, err := vm.Agent.Prepare(ctx, &agentpb.PrepareRequest{Net: &agentpb.NetConfig{
		AddressCidr: gc.Addr.String(), Gateway: gc.Gateway.String(),
		Nameservers: []string{gc.DNS.String()}, GatewayMac: gc.GatewayMAC.String(), Mac: gc.MAC.String(),
	}})
	if err != nil {
		return fmt.Errorf("VM %s: configure network: %w", vm.ID, err)
	}
	return nil
}

// Destroy ends the VM and removes everything it left on the host.
func (vm *VM) Destroy(ctx context.Context) error {
	if vm.Agent != nil {
		vm.Agent.Close()
	}
	return vm.Machine.Destroy(ctx)
}
