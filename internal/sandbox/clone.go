package sandbox

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// clone is a restored VM and the network slot its NIC is attached to.
type clone struct {
	machine Machine
	slot    *netpool.Slot // nil without networking
	// probedDenyAll is set when the egress self-check passed in this clone
	// while warming, under the slot's deny-all policy, which nothing has
	// changed since (a pooled clone's slot is never touched until Create).
	// A create that asks for deny-all and a probe may then rely on it.
	probedDenyAll bool
	// ca is the TLS inspection CA installed in the clone for the sandbox
	// it becomes (nil unless its policy inspects); pooled clones never
	// have one.
	ca *egress.CA
	// id is the sandbox id the clone becomes: the caller's
	// (CreateRequest.ID, fork child ids) or the machine's. Host-side
	// names (state directory, jail, network slot) keep the machine's id.
	id string
}

// sandboxID is the id the clone serves under (see clone.id).
func (c *clone) sandboxID() string {
	if c.id != "" {
		return c.id
	}
	return c.machine.ID()
}

// destroy ends the VM, then releases its slot (the tap goes with the
// namespace; QEMU must be gone first so nothing still writes to it).
func (c *clone) destroy(ctx context.Context, net *netpool.Pool) error {
	err := c.machine.Destroy(ctx)
	if c.slot != nil {
		err = errors.Join(err, net.Release(c.slot))
	}
	return err
}

// startMachine acquires a slot (with net), opens its tap, and starts a
// machine attached to it with start (tap nil without net). On failure
// nothing is left: start leaves nothing of its machine, the slot is
// released.
func startMachine(ctx context.Context, net *netpool.Pool, start func(tap *os.File) (Machine, error)) (Machine, *netpool.Slot, error) {
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(ctx) }() // as before: a failed release is the pool's to log
	var slot *netpool.Slot
	var tap *os.File
	if net != nil {
		var err error
		if slot, err = net.Acquire(ctx); err != nil {
			return nil, nil, err
		}
		cu.Add(func(context.Context) error { return net.Release(slot) })
		if tap, err = slot.OpenTap(); err != nil {
			return nil, nil, err
		}
		defer tap.Close() // the VMM has its own copy once started
	}
	v, err := start(tap)
	if err != nil {
		return nil, nil, err
	}
	cu.Release()
	return v, slot, nil
}

func alive(v Machine) bool {
	select {
	case <-v.Exited():
		return false
	default:
		return true
	}
}

// restoreClone starts a machine (attached to a fresh slot with net) and
// restores tmpl into it.
func restoreClone(ctx context.Context, ms Machines, net *netpool.Pool, tmpl *template.Template) (*clone, error) {
	id := vm.NewID("sbx-")
	v, slot, err := startMachine(ctx, net, func(tap *os.File) (Machine, error) {
		return ms.Restore(ctx, tmpl, id, tap)
	})
	if err != nil {
		return nil, err
	}
	return &clone{machine: v, slot: slot}, nil
}

// warm restores a clone, runs the agent's hot paths once, and runs the
// egress self-check, so a create needs neither on its own path. On
// failure the clone is destroyed.
func warm(ctx context.Context, ms Machines, net *netpool.Pool, tmpl *template.Template) (*clone, error) {
	c, err := restoreClone(ctx, ms, net, tmpl)
	if err != nil {
		return nil, err
	}
	var cu cleanup.Stack
	defer func() { _ = cu.Clean(ctx) }() // as before: a pool refills; the warm-up's error is what counts
	cu.Add(func(ctx context.Context) error { return c.destroy(ctx, net) })
	v := c.machine
	if err := v.Prepare(ctx, v.ID()); err != nil {
		return nil, err
	}
	// The self-check mostly waits (a dropped probe takes its full
	// timeout), so the warm-up exec runs beside it rather than before.
	execDone := make(chan error, 1)
	go func() {
		_, err := v.Exec(ctx, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard)
		execDone <- err
	}()
	var probeErr error
	if c.slot == nil || isDenyAll(c.slot.Policy()) {
		var results []ProbeResult
		results, probeErr = probeVM(ctx, v, c.slot)
		c.probedDenyAll = probeErr == nil && probeError(results) == nil
	}
	if err := errors.Join(<-execDone, probeErr); err != nil {
		return nil, err
	}
	cu.Release()
	return c, nil
}
