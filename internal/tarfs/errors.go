package tarfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// fsError gives a filesystem error its errdefs class (errdefs.FSClass, as
// the agent's file calls do), naming the operation and the entry (never
// more than the name the stream or caller gave).
func fsError(op, name string, err error) error {
	class := errdefs.FSClass(err)
	var perr *fs.PathError
	if errors.As(err, &perr) {
		err = perr.Err
	}
	return errdefs.New(class, "%s %s: %v", op, name, err)
}

// sourceReader remembers the last error of the stream under a tar.Reader,
// so a failure of the stream itself (the caller's reader) is told apart
// from a malformed archive.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// readError classifies an error from reading the archive: the stream's own
// error keeps its class; anything else is a malformed archive.
func (s *sourceReader) readError(err error) error {
	if s.err != nil {
		return fmt.Errorf("read archive: %w", s.err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errdefs.InvalidArgument("archive is truncated")
	}
	return errdefs.InvalidArgument("archive is malformed: %v", err)
}

// limitWriter passes at most max bytes (0: any number) to w.
type limitWriter struct {
	w   io.Writer
	max int64
	n   int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.max > 0 && l.n+int64(len(p)) > l.max {
		return 0, errdefs.ResourceExhausted("archive is larger than the limit of %d bytes", l.max)
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}
