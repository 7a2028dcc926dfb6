package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// minStateFree is the free space the state directory's filesystem must
// have for a new operation to start. Every operation is audited after it
// ran; one whose record could not be written would be an unaudited
// operation, so when the store cannot grow new work is refused up front
// (resource_exhausted, naming the cause) instead.
const minStateFree = 16 << 20

// admit refuses new work while the store's filesystem is (nearly) full.
func (m *Manager) admit() error {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(m.cfg.Store.Path()), &st); err != nil {
		return nil // cannot tell: let the operation and its audit decide
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < minStateFree {
		return errdefs.ResourceExhausted("the state directory's filesystem has %d KiB free (at least %d MiB needed to record what runs): refusing new work until space is freed",
			free>>10, minStateFree>>20)
	}
	return nil
}
