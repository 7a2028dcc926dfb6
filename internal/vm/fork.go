package vm

import (
	"context"
	"fmt"
	"github.com/airlock-dev/airlock/internal/guest"
	"path/filepath"
)

// ForkFiles are the memory file and device state that fork children are
// restored from, like a template's.
type ForkFiles struct {
	Mem   string
	State string
}

// SnapshotForFork saves a running VM so children can be restored from it,
// and resumes it. shape is the VM's own machine shape (a template's
// BootOptions). The parent's RAM is private, so it is live-migrated into
// a receiver VMM whose RAM is a new shared file in dir; the receiver's
// device state is then saved beside it and the receiver discarded. The
// parent is paused only for the migration. No agent call may be in flight.
func (h *Host) SnapshotForFork(ctx context.Context, parent *VM, shape BootOptions, dir string) (_ ForkFiles, err error) {
	files := ForkFiles{Mem: filepath.Join(dir, "mem"), State: filepath.Join(dir, "state")}
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
	recvOpts.MemoryFile = files.Mem
	recvOpts.MemoryPrivate = false
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
	return files, nil
}
