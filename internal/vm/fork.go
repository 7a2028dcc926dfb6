package vm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock/internal/guest"
)

// ForkFiles are the memory and device state that fork children are
// restored from, like a template's. Mem is a sealed memfd (children map
// it private); the caller closes it once the children have started.
type ForkFiles struct {
	Mem   *os.File
	State string
}

// SnapshotForFork saves a running VM so children can be restored from it,
// and resumes it. shape is the VM's own machine shape (a template's
// BootOptions). The parent's RAM is private, so it is live-migrated into
// a receiver VMM whose RAM is a new memfd; the receiver's device state is
// then saved in dir, the receiver discarded and the memfd sealed. The
// parent is paused only for the migration. No agent call may be in flight.
func (h *Host) SnapshotForFork(ctx context.Context, parent *VM, shape BootOptions, dir string) (_ ForkFiles, err error) {
	shape = h.withDefaults(shape)
	mem, err := NewMemory("fork", int64(shape.MemoryMiB)<<20)
	if err != nil {
		return ForkFiles{}, err
	}
	files := ForkFiles{Mem: mem, State: filepath.Join(dir, "state")}
	defer func() {
		if err != nil {
			mem.Close()
		}
	}()
	conn, err := parent.Quiesce(ctx)
	if err != nil {
		return files, err
	}
	// Whatever happens, the parent runs again and gets an agent session.
	defer func() {
		rerr := parent.Machine.Resume(context.WithoutCancel(ctx))
		cerr := parent.connect(context.WithoutCancel(ctx), guest.DialOptions{First: conn})
		if err == nil && rerr != nil {
			err = fmt.Errorf("resume parent %s: %w", parent.ID, rerr)
		}
		if err == nil && cerr != nil {
			err = fmt.Errorf("reconnect parent %s: %w", parent.ID, cerr)
		}
	}()
	recvOpts := shape
	recvOpts.ID = NewID("fork-")
	recvOpts.MemoryFile, recvOpts.Memory, recvOpts.MemoryPrivate = "", mem, false
	recv, err := h.StartPending(ctx, recvOpts)
	if err != nil {
		return files, fmt.Errorf("fork receiver: %w", err)
	}
	defer recv.Discard(context.WithoutCancel(ctx))
	if err := parent.Machine.MigrateTo(ctx, recv.Machine); err != nil {
		return files, fmt.Errorf("migrate %s to fork receiver: %w", parent.ID, err)
	}
	if err := recv.Machine.SaveState(ctx, files.State, true); err != nil {
		return files, fmt.Errorf("save fork state: %w", err)
	}
	// Nothing may write the children's base once they exist: the receiver
	// goes first, then the seal makes sure.
	if err := recv.Discard(ctx); err != nil {
		return files, fmt.Errorf("fork receiver: %w", err)
	}
	if err := Seal(mem); err != nil {
		return files, err
	}
	return files, nil
}
