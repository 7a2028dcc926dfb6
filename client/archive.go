package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"

	"github.com/airlock-dev/airlock/internal/tarfs"
	"github.com/airlock-dev/airlock/internal/wire"
)

// ArchiveResult is what an archive upload (or a DownloadDir) wrote.
type ArchiveResult = wire.WriteArchiveResponse

// WriteArchive streams the tar stream r into the sandbox, where it is
// unpacked into the directory dir (created with its parents if missing).
// The sandbox refuses entries that would escape dir, device nodes and
// FIFOs, and streams past its limits (invalid_argument, resource_exhausted);
// entries written before such a refusal stay. A size that can be known
// (see Write) is declared, so an oversized stream is refused at once.
func (f *Files) WriteArchive(ctx context.Context, dir string, r io.Reader) (*ArchiveResult, error) {
	r, length := declaredLength(r)
	var out ArchiveResult
	err := f.s.c.doJSON(ctx, request{method: "PUT", path: f.s.path("/archive"), query: url.Values{"path": {dir}},
		body: r, ctype: "application/x-tar", length: length}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadArchive streams path (a directory or a regular file) out of the
// sandbox as a tar stream into w, and returns its size. Entries are named
// from path's base name: /job/out gives out/, out/a.txt, ... A transfer
// that breaks midway is an error (unavailable), never a short stream.
func (f *Files) ReadArchive(ctx context.Context, path string, w io.Writer) (int64, error) {
	res, err := f.s.c.do(ctx, request{method: "GET", path: f.s.path("/archive"), query: url.Values{"path": {path}}})
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(w, transferReader{res.Body})
	if err != nil {
		return n, fmt.Errorf("airlock: read archive of %s: %w", path, err)
	}
	return n, nil
}

// UploadDir copies the contents of the local directory localDir into the
// sandbox directory remoteDir (created if missing): localDir/a/b lands at
// remoteDir/a/b. Symbolic links are copied as links, never followed (the
// sandbox refuses links pointing outside remoteDir); FIFOs, sockets and
// devices are skipped. A local problem (no such directory) is returned
// with its own class, not as a transfer failure.
func (f *Files) UploadDir(ctx context.Context, localDir, remoteDir string) (*ArchiveResult, error) {
	fi, err := os.Stat(localDir)
	if err != nil {
		return nil, fmt.Errorf("upload %s: %w", localDir, localError(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("upload %s: %w", localDir, errNotDir)
	}
	pr, pw := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		_, err := tarfs.Pack(pw, localDir, tarfs.PackOptions{})
		pw.CloseWithError(err)
		packed <- err
	}()
	res, err := f.WriteArchive(ctx, remoteDir, pr)
	pr.CloseWithError(errUploadEnded) // ends a Pack still writing
	if perr := <-packed; perr != nil && !errors.Is(perr, errUploadEnded) {
		// The local side failed first; the transfer error is its echo.
		return nil, fmt.Errorf("upload %s: %w", localDir, perr)
	}
	return res, err
}

var (
	errUploadEnded = errors.New("upload ended")
	errNotDir      = &classedError{class: ErrInvalidArgument, err: errors.New("not a directory")}
)

// localError classes an error of the local filesystem, so that a missing
// local file reads as not_found rather than as a failure to reach the
// daemon; errors.Is still finds the fs error (fs.ErrNotExist).
func localError(err error) error {
	class := ErrInvalidArgument
	switch {
	case errors.Is(err, fs.ErrNotExist):
		class = ErrNotFound
	case errors.Is(err, fs.ErrPermission):
		class = ErrPermissionDenied
	}
	return &classedError{class: class, err: err}
}

// classedError is err with an error class beside it.
type classedError struct{ class, err error }

func (e *classedError) Error() string   { return e.err.Error() }
func (e *classedError) Unwrap() []error { return []error{e.class, e.err} }

// declaredLength is r's remaining size when it can be known without
// reading it (-1 otherwise), and r itself (an empty body made explicit).
func declaredLength(r io.Reader) (io.Reader, int64) {
	length := int64(-1)
	switch v := r.(type) {
	case interface{ Len() int }:
		length = int64(v.Len())
	case statSeeker:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := v.Seek(0, io.SeekCurrent); err == nil && off <= fi.Size() {
				length = fi.Size() - off
			}
		}
	}
	if length == 0 {
		r = bytes.NewReader(nil) // net/http sends a nil-length body as chunked otherwise
	}
	return r, length
}

// DownloadDir copies the contents of the sandbox directory remotePath into
// the local directory localDir (created with its parents if missing):
// remotePath/a/b lands at localDir/a/b. The stream from the sandbox is
// untrusted and is extracted with the same confinement the sandbox uses
// (internal/tarfs): no entry outside localDir, no writes through links,
// no links pointing outside, no device nodes or FIFOs, setuid and setgid
// dropped, modes masked by this process's umask (as docker cp does), and
// at most tarfs.DefaultMaxBytes of files.
func (f *Files) DownloadDir(ctx context.Context, remotePath, localDir string) (*ArchiveResult, error) {
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return nil, fmt.Errorf("download into %s: %w", localDir, localError(err))
	}
	res, err := f.s.c.do(ctx, request{method: "GET", path: f.s.path("/archive"), query: url.Values{"path": {remotePath}}})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	st, err := tarfs.Extract(transferReader{res.Body}, localDir, tarfs.Options{StripTop: path.Base(remotePath), Umask: tarfs.ProcessUmask()})
	out := &ArchiveResult{Entries: st.Entries, Bytes: st.Bytes}
	if err != nil {
		return out, fmt.Errorf("download %s into %s: %w", remotePath, localDir, err)
	}
	return out, nil
}

// transferReader marks a failed read of a response body as unavailable:
// the transfer broke, the data was not wrong.
type transferReader struct{ r io.Reader }

func (t transferReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: transfer broke: %w", ErrUnavailable, err)
	}
	return n, err
}
