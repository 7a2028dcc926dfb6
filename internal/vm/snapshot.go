package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/vmm"
)

// Quiesce ends the host's agent session and leaves the agent blocked
// reading a fresh port, with no gRPC state in guest memory, proven by a
// sync echo. The returned raw connection must stay open until the machine
// is saved: the saved port state then says "host connected", matching the
// restore side, which connects before loading. No call may be in flight.
func (vm *VM) Quiesce(ctx context.Context) (net.Conn, error) {
	if vm.Agent != nil {
		vm.Agent.Close()
		vm.Agent = nil
	}
	for {
		conn, err := vm.Machine.ConnectAgent(ctx)
		if err != nil {
			return nil, err
		}
		// The guest may not have seen the session end yet (it notices a
		// disconnect only if it runs while the host end is closed, and
		// this host reconnects at once): then the old session reads the
		// first token, which ends it (see SyncOptions.FirstResend), and a
		// quick resend reaches the agent on its reopened port. Waiting
		// for QEMU to report the port closing instead cost up to a
		// second: it throttles that event per port.
		err = guest.HostSync(conn, time.Now().Add(2*time.Second),
			guest.SyncOptions{ResetStale: true, FirstResend: quiesceResend})
		if err == nil {
			return conn, nil
		}
		conn.Close()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("VM %s: quiesce agent: %w", vm.ID, errors.Join(err, ctx.Err()))
		case <-vm.Machine.Exited():
			return nil, vm.Machine.ExitError()
		default:
		}
	}
}

// quiesceResend is Quiesce's first sync resend: about the time a TCG
// guest takes to end a session and reopen its port.
const quiesceResend = 20 * time.Millisecond

// SaveTemplate quiesces the agent and saves the device state to statePath,
// leaving RAM in the machine's shared memory file. The machine stays
// paused; the caller destroys it.
func (vm *VM) SaveTemplate(ctx context.Context, statePath string) error {
	conn, err := vm.Quiesce(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := vm.Machine.SaveState(ctx, statePath, true); err != nil {
		return fmt.Errorf("VM %s: save state: %w", vm.ID, err)
	}
	return nil
}

// Pending is a VMM started with Incoming and its agent socket already
// connected: everything a restore needs except the state itself. A pool of
// these takes process start-up off the create path.
type Pending struct {
	ID      string
	Machine vmm.Machine
	conn    net.Conn // raw agent connection, opened before the state loads
}

// StartPending starts a paused VMM shaped by opts (which must match the
// snapshot's) and connects its agent socket.
func (h *Host) StartPending(ctx context.Context, opts BootOptions) (_ *Pending, err error) {
	opts = h.withDefaults(opts)
	opts.Incoming = true
	m, err := h.start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.Destroy(context.Background())
		}
	}()
	conn, err := m.ConnectAgent(ctx)
	if err != nil {
		return nil, err
	}
	return &Pending{ID: opts.ID, Machine: m, conn: conn}, nil
}

// Discard destroys a pending machine that will not be used.
func (p *Pending) Discard(ctx context.Context) error {
	p.conn.Close()
	return p.Machine.Destroy(ctx)
}

// Restore loads statePath into the pending machine, resumes it and sets
// up its agent client over the pre-opened connection. The caller must call
// Prepare before the VM runs any job: until then it has the snapshot's
// clock, random state and identity. On failure the machine is destroyed.
func (p *Pending) Restore(ctx context.Context, statePath string, ramInFile bool) (_ *VM, err error) {
	vm := &VM{ID: p.ID, Machine: p.Machine}
	defer func() {
		if err != nil {
			p.conn.Close()
			vm.Destroy(context.Background())
		}
	}()
	if err := p.Machine.LoadState(ctx, statePath, ramInFile); err != nil {
		return nil, fmt.Errorf("VM %s: load state: %w", p.ID, err)
	}
	if err := p.Machine.Resume(ctx); err != nil {
		return nil, fmt.Errorf("VM %s: resume: %w", p.ID, err)
	}
	if err := vm.connect(ctx, guest.DialOptions{First: p.conn}); err != nil {
		return nil, err
	}
	return vm, nil
}

// RestorePrepared is Restore followed by Prepare(sandboxID).
func (p *Pending) RestorePrepared(ctx context.Context, statePath string, ramInFile bool, sandboxID string) (*VM, error) {
	vm, err := p.Restore(ctx, statePath, ramInFile)
	if err != nil {
		return nil, err
	}
	if err := vm.Prepare(ctx, sandboxID); err != nil {
		vm.Destroy(context.WithoutCancel(ctx))
		return nil, err
	}
	return vm, nil
}

// Adopt reconnects to a VM an earlier airlock process started (the daemon
// restarted while it ran). The agent notices the old host's connection
// closing and accepts the new one after a sync.
func (h *Host) Adopt(ctx context.Context, id, stateDir string, pid int) (_ *VM, err error) {
	m, err := h.Driver.Adopt(id, stateDir, pid)
	if err != nil {
		return nil, err
	}
	vm := &VM{ID: id, Machine: m}
	if err := vm.connect(ctx, guest.DialOptions{Adopting: true}); err != nil {
		return nil, err
	}
	return vm, nil
}

// StateDirFor is where the VM with this id keeps its host-side state.
func (h *Host) StateDirFor(id string) string { return filepath.Join(h.RunDir, id) }

// Alive reports whether the pending machine's VMM is still running.
func (p *Pending) Alive() bool {
	select {
	case <-p.Machine.Exited():
		return false
	default:
		return true
	}
}
