package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/guest/agentpb"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// The Manager's lifecycle logic (capacity, TTLs, kills racing calls,
// recovery, audit) depends on the machine layer only through these
// interfaces. In production they are VMs on a *vm.Host (vmMachines) and
// the bakes of a *template.Registry (registryTemplates); tests of that
// logic may run it on any other real implementation (Config.Machines,
// Config.TemplateSource).

// Machines starts, snapshots, adopts and removes the machines sandboxes
// run in.
type Machines interface {
	// Jailed reports whether every machine's VMM runs in a jail of its own.
	Jailed() bool
	// RunDir holds every machine's state directory (and fork data).
	RunDir() string
	// Restore starts machine id from tmpl's snapshot, with its NIC on tap
	// (nil: on nothing), and returns it with its agent answering but not
	// yet prepared. On failure nothing of it is left.
	Restore(ctx context.Context, tmpl *template.Template, id string, tap *os.File) (Machine, error)
	// SnapshotForFork saves parent (quiet: no call in flight) into dir for
	// fork children and lets it run on.
	SnapshotForFork(ctx context.Context, parent Machine, tmpl *template.Template, dir string) (ForkBase, error)
	// RestoreChild starts fork child id from base, prepared as id. On
	// failure nothing of it is left.
	RestoreChild(ctx context.Context, base ForkBase, tmpl *template.Template, id string, tap *os.File) (Machine, error)
	// Pause saves m (quiet: no call in flight) into dir, a directory on
	// the host's disk, and destroys it: nothing of it runs or stays in
	// memory. It returns the bytes of memory saved. If the save fails, m
	// runs on and dir holds nothing of it.
	Pause(ctx context.Context, m Machine, tmpl *template.Template, dir string) (int64, error)
	// Resume starts machine id again from what Pause saved in dir, with
	// its NIC on tap (nil: on nothing), prepared as id. On failure nothing
	// of it is left and dir is untouched.
	Resume(ctx context.Context, tmpl *template.Template, dir, id string, tap *os.File) (Machine, error)
	// Adopt takes over machine id, which an earlier process started and
	// which pid still serves.
	Adopt(ctx context.Context, id, stateDir string, pid int) (Machine, error)
	// Live reports whether pid still serves the machine of stateDir.
	Live(pid int, stateDir string) bool
	// KillOrphan ends the machine of stateDir that an earlier process left
	// and removes everything it had on the host.
	KillOrphan(ctx context.Context, stateDir string) error
	// SweepJails removes the jails of machines live does not name.
	SweepJails(live func(id string) bool) error
}

// ForkBase is what fork children are restored from; Close it once they
// run.
type ForkBase interface{ Close() error }

// Machine is one running guest: its VMM and its agent.
type Machine interface {
	ID() string
	PID() int
	StateDir() string
	// Exited is closed when the machine has ended, for any reason;
	// ExitError says why.
	Exited() <-chan struct{}
	ExitError() error
	// Prepare gives the guest its own clock, entropy and identity before
	// anything of a caller's runs.
	Prepare(ctx context.Context, sandboxID string) error
	// Destroy ends the machine and removes every trace of it; calls in
	// flight fail at once. Safe to call more than once.
	Destroy(ctx context.Context) error
	Guest
}

// Guest is the calls into a machine's agent.
type Guest interface {
	Exec(ctx context.Context, opts guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error)
	WriteFile(ctx context.Context, path string, r io.Reader, mode uint32, makeParents bool) (int64, error)
	ReadFile(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error)
	// WriteArchive unpacks the tar stream r into directory dir (made if
	// missing), at most maxBytes of files; the stream is the guest's to
	// parse. ReadArchive packs path (entries named from its base name)
	// into w, a stream of at most maxBytes (0: any), writing nothing to w
	// before it knows path can be packed.
	WriteArchive(ctx context.Context, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error)
	ReadArchive(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error)
	Stat(ctx context.Context, path string) (*agentpb.FileInfo, error)
	List(ctx context.Context, path string) ([]*agentpb.FileInfo, error)
	Remove(ctx context.Context, path string, recursive bool) error
	Mkdir(ctx context.Context, path string, mode uint32, parents bool) error
	EgressCheck(ctx context.Context, targets []guest.EgressTarget, timeout time.Duration) ([]guest.EgressResult, error)
}

// TemplateSource is the baked templates sandboxes are created from.
type TemplateSource interface {
	// Open returns the current bake of name, checked restorable here.
	Open(name string) (*template.Template, error)
	// Get returns the current bake of name without checking it.
	Get(name string) (*template.Template, error)
	List() ([]*template.Template, error)
}

// registryTemplates opens a registry's bakes for a host.
type registryTemplates struct {
	reg  *template.Registry
	host *vm.Host
}

func (r registryTemplates) Open(name string) (*template.Template, error) {
	return r.reg.Open(r.host, name)
}
func (r registryTemplates) Get(name string) (*template.Template, error) { return r.reg.Get(name) }
func (r registryTemplates) List() ([]*template.Template, error)         { return r.reg.List() }

// vmMachines runs machines as VMs on a host.
type vmMachines struct{ h *vm.Host }

func (vms vmMachines) Jailed() bool   { return vms.h.Driver.Jailed() }
func (vms vmMachines) RunDir() string { return vms.h.RunDir }

func (vms vmMachines) Restore(ctx context.Context, tmpl *template.Template, id string, tap *os.File) (Machine, error) {
	opts := tmpl.BootOptions()
	opts.ID, opts.TapFile = id, tap
	p, err := vms.h.StartPending(ctx, opts)
	if err != nil {
		return nil, err
	}
	v, err := p.Restore(ctx, tmpl.StatePath(), true) // destroys the machine on failure
	if err != nil {
		return nil, err
	}
	return vmMachine{v}, nil
}

// errNotAVM is a machine of another layer handed to this one.
var errNotAVM = errors.New("sandbox: machine is not a VM of this host")

func (vms vmMachines) SnapshotForFork(ctx context.Context, parent Machine, tmpl *template.Template, dir string) (ForkBase, error) {
	pv, ok := parent.(vmMachine)
	if !ok {
		return nil, errNotAVM
	}
	files, err := vms.h.SnapshotForFork(ctx, pv.v, tmpl.BootOptions(), dir)
	if err != nil {
		return nil, err
	}
	return vmForkBase{files}, nil
}

func (vms vmMachines) RestoreChild(ctx context.Context, base ForkBase, tmpl *template.Template, id string, tap *os.File) (Machine, error) {
	b, ok := base.(vmForkBase)
	if !ok {
		return nil, errNotAVM
	}
	opts := b.files.ChildOptions(tmpl.BootOptions(), id)
	opts.TapFile = tap
	p, err := vms.h.StartPending(ctx, opts)
	if err != nil {
		return nil, err
	}
	v, err := p.RestorePrepared(ctx, b.files.State, true, id) // destroys the machine on failure
	if err != nil {
		return nil, err
	}
	return vmMachine{v}, nil
}

func (vms vmMachines) Pause(ctx context.Context, m Machine, tmpl *template.Template, dir string) (int64, error) {
	v, ok := m.(vmMachine)
	if !ok {
		return 0, errNotAVM
	}
	return vms.h.Pause(ctx, v.v, tmpl.BootOptions(), dir)
}

func (vms vmMachines) Resume(ctx context.Context, tmpl *template.Template, dir, id string, tap *os.File) (Machine, error) {
	v, err := vms.h.Resume(ctx, tmpl.BootOptions(), dir, id, tap)
	if err != nil {
		return nil, err
	}
	return vmMachine{v}, nil
}

func (vms vmMachines) Adopt(ctx context.Context, id, stateDir string, pid int) (Machine, error) {
	v, err := vms.h.Adopt(ctx, id, stateDir, pid)
	if err != nil {
		return nil, err
	}
	return vmMachine{v}, nil
}

func (vms vmMachines) Live(pid int, stateDir string) bool { return vms.h.Driver.Live(pid, stateDir) }

func (vms vmMachines) KillOrphan(ctx context.Context, stateDir string) error {
	return vms.h.Driver.KillOrphan(ctx, filepath.Base(stateDir), stateDir)
}

func (vms vmMachines) SweepJails(live func(id string) bool) error {
	return vms.h.Driver.SweepJails(live)
}

// vmForkBase is a VM's fork snapshot: a sealed memfd and a state file.
type vmForkBase struct{ files vm.ForkFiles }

func (b vmForkBase) Close() error { return b.files.Mem.Close() }

// vmMachine is a VM as a Machine. Guest calls go to the VM's current
// agent client (a fork reconnects the parent's).
type vmMachine struct{ v *vm.VM }

func (m vmMachine) ID() string                        { return m.v.ID }
func (m vmMachine) PID() int                          { return m.v.Machine.PID() }
func (m vmMachine) StateDir() string                  { return m.v.Machine.StateDir() }
func (m vmMachine) Exited() <-chan struct{}           { return m.v.Machine.Exited() }
func (m vmMachine) ExitError() error                  { return m.v.Machine.ExitError() }
func (m vmMachine) Destroy(ctx context.Context) error { return m.v.Destroy(ctx) }
func (m vmMachine) Prepare(ctx context.Context, sandboxID string) error {
	return m.v.Prepare(ctx, sandboxID)
}

func (m vmMachine) Exec(ctx context.Context, opts guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error) {
	return m.v.Agent.Exec(ctx, opts, stdout, stderr)
}

func (m vmMachine) WriteFile(ctx context.Context, path string, r io.Reader, mode uint32, makeParents bool) (int64, error) {
	return m.v.Agent.WriteFile(ctx, path, r, mode, makeParents)
}

func (m vmMachine) ReadFile(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	return m.v.Agent.ReadFile(ctx, path, w, maxBytes)
}

func (m vmMachine) WriteArchive(ctx context.Context, dir string, r io.Reader, maxBytes int64) (guest.ArchiveStats, error) {
	return m.v.Agent.WriteArchive(ctx, dir, r, maxBytes)
}

func (m vmMachine) ReadArchive(ctx context.Context, path string, w io.Writer, maxBytes int64) (int64, error) {
	return m.v.Agent.ReadArchive(ctx, path, w, maxBytes)
}

func (m vmMachine) Stat(ctx context.Context, path string) (*agentpb.FileInfo, error) {
	return m.v.Agent.Stat(ctx, path)
}

func (m vmMachine) List(ctx context.Context, path string) ([]*agentpb.FileInfo, error) {
	return m.v.Agent.List(ctx, path)
}

func (m vmMachine) Remove(ctx context.Context, path string, recursive bool) error {
	return m.v.Agent.Remove(ctx, path, recursive)
}

func (m vmMachine) Mkdir(ctx context.Context, path string, mode uint32, parents bool) error {
	return m.v.Agent.Mkdir(ctx, path, mode, parents)
}

func (m vmMachine) EgressCheck(ctx context.Context, targets []guest.EgressTarget, timeout time.Duration) ([]guest.EgressResult, error) {
	return m.v.Agent.EgressCheck(ctx, targets, timeout)
}
