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
// State is device state only: children boot with DeviceState.
type ForkFiles struct {
	Mem   *os.File
	State string
	Stats ForkMemoryStats
}

// SnapshotForFork saves a running VM so children can be restored from it,
// and resumes it. shape is the VM's own machine shape (a template's
// BootOptions). While the parent runs, its base is copied into a new
// memfd; then the parent is paused, its device state (no RAM) saved in
// dir and the pages it has written since its restore copied over the
// base (see forkMemory), and it runs again. No agent call may be in
// flight.
func (h *Host) SnapshotForFork(ctx context.Context, parent *VM, shape BootOptions, dir string) (_ ForkFiles, err error) {
	shape = h.withDefaults(shape)
	files := ForkFiles{State: filepath.Join(dir, "state")}
	type built struct {
		fm  *forkMemory
		err error
	}
	based := make(chan built, 1)
	go func() {
		fm, err := newForkMemory(parent.Machine.PID(), int64(shape.MemoryMiB)<<20)
		based <- built{fm, err}
	}()
	var fm *forkMemory
	received := false
	defer func() {
		if !received {
			fm = (<-based).fm
		}
		if err != nil && fm != nil {
			fm.mem.Close()
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
	if err := parent.Machine.SaveDeviceState(ctx, files.State); err != nil {
		return files, fmt.Errorf("fork %s: %w", parent.ID, err)
	}
	b := <-based
	received, fm = true, b.fm
	if b.err != nil {
		return files, fmt.Errorf("fork %s: %w", parent.ID, b.err)
	}
	if files.Mem, err = fm.finish(); err != nil {
		return files, fmt.Errorf("fork %s: %w", parent.ID, err)
	}
	files.Stats = fm.stats
	return files, nil
}

// ChildOptions is shape (the parent's) made to restore a fork child with
// id from f: RAM mapped privately from f.Mem, device state only.
func (f ForkFiles) ChildOptions(shape BootOptions, id string) BootOptions {
	shape.ID = id
	shape.MemoryFile, shape.Memory, shape.MemoryPrivate, shape.DeviceState = "", f.Mem, true, true
	return shape
}
