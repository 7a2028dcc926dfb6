package errdefs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestFSClass(t *testing.T) {
	wrap := func(errno syscall.Errno) error { return &fs.PathError{Op: "open", Path: "/x", Err: errno} }
	for _, tc := range []struct {
		err  error
		want error
	}{
		{wrap(syscall.ENOTEMPTY), ErrFailedPrecondition}, // before fs.ErrExist, which it also is
		{wrap(syscall.ENOSPC), ErrResourceExhausted},
		{wrap(syscall.ENOENT), ErrNotFound},
		{os.ErrExist, ErrAlreadyExists},
		{wrap(syscall.EACCES), ErrPermissionDenied},
		{wrap(syscall.EROFS), ErrPermissionDenied},
		{wrap(syscall.ENAMETOOLONG), ErrInvalidArgument},
		{wrap(syscall.EBUSY), ErrFailedPrecondition},
		{fmt.Errorf("write: %w", wrap(syscall.EIO)), ErrInternal},
	} {
		if got := FSClass(tc.err); got != tc.want {
			t.Errorf("FSClass(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
