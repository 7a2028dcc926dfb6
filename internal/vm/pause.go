package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A paused VM is a fork base kept on disk instead of in a memfd: its
// RAM in PausedMemFile (sparse: only the data a fork base holds) and its
// device state in PausedStateFile, in a directory of the caller's. Resume
// maps a sealed copy of the memory privately and loads the state, as a
// fork child does, under the VM's own id.
const (
	PausedMemFile   = "mem"
	PausedStateFile = "state"
)

// Pause saves v into dir (which must exist, on the disk that is to hold
// it) and destroys v, so that nothing of it runs or stays in memory on
// the host. The daemon itself writes and later reads both files (the
// VMM's device state is copied out of its jail, see SaveDeviceState), so
// dir may be anywhere. No agent call may be in flight. If the save
// fails, v runs on and nothing is left in dir; once saved, v is
// destroyed, and a failure to destroy it is returned with the save
// intact.
func (h *Host) Pause(ctx context.Context, v *VM, shape BootOptions, dir string) (memBytes int64, err error) {
	files, err := h.SnapshotForFork(ctx, v, shape, dir) // the state goes to dir/PausedStateFile
	if err != nil {
		return 0, err
	}
	defer files.Mem.Close()
	defer func() {
		if err != nil {
			os.Remove(filepath.Join(dir, PausedMemFile))
			os.Remove(filepath.Join(dir, PausedStateFile))
		}
	}()
	if memBytes, err = saveSparse(files.Mem, filepath.Join(dir, PausedMemFile)); err != nil {
		return 0, fmt.Errorf("pause %s: save memory: %w", v.ID, err)
	}
	if err := v.Destroy(ctx); err != nil {
		return memBytes, fmt.Errorf("pause %s: saved, but the VM was not destroyed: %w", v.ID, err)
	}
	return memBytes, nil
}

// Resume starts VM id again from what Pause saved in dir, with shape (the
// VM's template's BootOptions) and the NIC on tap, prepared as id (its
// clock, entropy and identity pushed, as after every restore). On
// failure nothing of the VM is left; dir is untouched.
func (h *Host) Resume(ctx context.Context, shape BootOptions, dir, id string, tap *os.File) (*VM, error) {
	mem, _, err := SealedCopy(filepath.Join(dir, PausedMemFile))
	if err != nil {
		return nil, fmt.Errorf("resume %s: memory: %w", id, err)
	}
	defer mem.Close() // the VMM maps its own descriptor once started
	files := ForkFiles{Mem: mem, State: filepath.Join(dir, PausedStateFile)}
	opts := files.ChildOptions(shape, id)
	opts.TapFile = tap
	p, err := h.StartPending(ctx, opts)
	if err != nil {
		return nil, err
	}
	return p.RestorePrepared(ctx, files.State, true, id) // destroys the machine on failure
}

// saveSparse writes src's data extents to a new file at path (holes stay
// holes) and syncs it; it returns the bytes of data written.
func saveSparse(src *os.File, path string) (n int64, err error) {
	fi, err := src.Stat()
	if err != nil {
		return 0, err
	}
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, dst.Close()) }()
	if err := dst.Truncate(fi.Size()); err != nil {
		return 0, err
	}
	err = dataExtents(src, fi.Size(), func(data, end int64) error {
		w, err := io.Copy(io.NewOffsetWriter(dst, data), io.NewSectionReader(src, data, end-data))
		n += w
		return err
	})
	if err != nil {
		return n, err
	}
	return n, dst.Sync()
}
