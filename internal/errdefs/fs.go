package errdefs

import (
	"errors"
	"io/fs"
	"syscall"
)

// FSClass is the class of a filesystem error, the one mapping the guest
// agent's file calls and its archive extraction (internal/tarfs) share:
// a full disk is ResourceExhausted, a missing path NotFound, and so on.
// Specific errnos come first: a syscall.Errno also matches the generic fs
// errors (ENOTEMPTY "is" fs.ErrExist). Anything else is ErrInternal.
func FSClass(err error) error {
	switch {
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENOTEMPTY):
		return ErrFailedPrecondition
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.ENOMEM):
		return ErrResourceExhausted
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case errors.Is(err, fs.ErrExist):
		return ErrAlreadyExists
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return ErrPermissionDenied
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENXIO):
		return ErrInvalidArgument
	case errors.Is(err, syscall.EBUSY), errors.Is(err, syscall.ETXTBSY):
		return ErrFailedPrecondition
	}
	return ErrInternal
}
