package vmm

import (
	"context"
	"net"
	"os"
	"time"

	"github.com/airlock-dev/airlock/internal/vmm/jail"
)

// Accel is a hardware acceleration mode.
type Accel string

const (
	AccelKVM Accel = "kvm" // hardware virtualisation
	AccelTCG Accel = "tcg" // QEMU's software emulation
)

// BootSpec describes a cold boot.
type BootSpec struct {
	ID         string   // unique per machine; names the state directory
	StateDir   string   // created by Boot (must not exist), removed by Destroy
	Kernel     string   // guest kernel image
	Initrd     string   // initramfs with the agent as /init
	RootImage  string   // read-only raw root disk; "" = none
	KernelArgs []string // appended to the driver's own arguments
	MemoryMiB  int      // guest RAM
	VCPUs      int      // guest CPUs
	Accel      Accel    // resolved acceleration (see ChooseAccel)
	// MemoryFile, when set, backs guest RAM with this file. Mapped shared
	// (a bake) the guest's RAM lives in the file, so a snapshot can leave
	// it in place (x-ignore-shared). Mapped private (clones) the
	// file is the copy-on-write base and is never written.
	MemoryFile    string
	MemoryPrivate bool
	// Memory, instead of MemoryFile, backs guest RAM with an open memfd:
	// a sealed one mapped private (a clone's base: see vm.SealedCopy, or a
	// fork's children's). The VMM reaches it through /proc/self/fd and
	// never opens a base file on disk.
	Memory *os.File
	// Incoming starts the VMM paused, waiting for a migration stream
	// (`-incoming defer`) instead of booting the kernel.
	Incoming bool
	// DeviceState makes an Incoming machine expect a device-only state
	// (Machine.SaveDeviceState's) instead of a migration stream: its RAM
	// is already all in Memory.
	DeviceState bool
	// NICMAC, when set, gives the machine one virtio-net NIC with this MAC.
	// The NIC is part of the machine shape (bake and restore must agree);
	// its backend is not, since netdev backends are outside migration state.
	NICMAC string
	// TapFile backs the NIC with an open tap device (its own dup is passed
	// to the VMM; the caller keeps and closes this one). nil: the NIC sits
	// alone on an empty hub, so the guest sees a working link on which
	// every frame goes nowhere. Ignored without NICMAC.
	TapFile *os.File
	// BootTimeout bounds how long Boot waits for the VMM's control socket;
	// the guest agent's readiness is the caller's to wait for.
	BootTimeout time.Duration
}

// Machine is one running VM.
type Machine interface {
	ID() string
	PID() int
	StateDir() string
	// AgentSocket is the unix socket behind which the guest agent's
	// virtio-serial port is reached.
	AgentSocket() string
	// Exited is closed when the VMM process has ended, for any reason.
	Exited() <-chan struct{}
	// ExitError describes why the VMM ended (nil while running, or after a
	// Destroy); it carries the tail of the VMM's own log.
	ExitError() error
	// Destroy ends the VM and removes every trace it left on the host:
	// process, sockets, state directory. Safe to call more than once.
	Destroy(ctx context.Context) error

	// ConnectAgent opens a raw connection to the agent channel's host end.
	ConnectAgent(ctx context.Context) (net.Conn, error)
	// SaveState pauses the guest and writes its state to path. With
	// ramInFile, RAM stays in the shared memory file and only device state
	// is written (tens of KB).
	SaveState(ctx context.Context, path string, ramInFile bool) error
	// LoadState loads a state file into a machine booted with Incoming; it
	// stays paused until Resume.
	LoadState(ctx context.Context, path string, ramInFile bool) error
	// SaveDeviceState pauses the guest and writes its device state, and
	// no RAM at all, to path, for machines booted with DeviceState to
	// load. The machine is left paused.
	SaveDeviceState(ctx context.Context, path string) error
	// Resume runs a paused guest.
	Resume(ctx context.Context) error
}

// Driver starts machines, takes over those an earlier process left, and
// removes what is left of dead ones.
type Driver interface {
	// Name and Version identify the VMM ("qemu", "7.2.19").
	Name() string
	Version() string
	// CPUModel is the CPU model machines under accel get: part of what a
	// snapshot restores only into.
	CPUModel(accel Accel) string
	Boot(ctx context.Context, spec BootSpec) (Machine, error)
	// Jailed reports whether every machine's VMM runs confined in a jail
	// of its own (false only where the operator turned jailing off), and
	// Protections says by what, or why not.
	Jailed() bool
	Protections() jail.Report

	// Live reports whether pid is a VMM serving the machine whose state
	// directory is stateDir (pids are reused: a stored pid alone proves
	// nothing).
	Live(pid int, stateDir string) bool
	// Adopt takes over machine id, which an earlier process started and
	// which pid still serves.
	Adopt(id, stateDir string, pid int) (Machine, error)
	// KillOrphan ends the VMM of machine id that an earlier process left
	// and removes everything it had on the host (process, state
	// directory, jail); a pid that no longer serves stateDir is left alone.
	KillOrphan(ctx context.Context, id, stateDir string) error

	// SweepJails removes the jails of this driver's machines that live
	// does not name; JailCgroups counts those that exist (0 unjailed).
	SweepJails(live func(id string) bool) error
	JailCgroups() int
	// Close removes what the driver made for its jails that no VMM uses.
	Close() error
}
