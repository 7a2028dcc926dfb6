package api

import (
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// maxPathLen matches Linux PATH_MAX.
const maxPathLen = 4096

// checkPath accepts absolute, clean guest paths only. Cleanliness means no
// "..", ".", empty or trailing-slash segments, so "/job/../etc" is refused
// rather than resolved: the caller must say what it means. The guest checks
// again; this is the first of two fences.
func checkPath(what, p string) error {
	switch {
	case p == "":
		return errdefs.InvalidArgument("%s is required", what)
	case len(p) > maxPathLen:
		return errdefs.InvalidArgument("%s is longer than %d bytes", what, maxPathLen)
	case strings.IndexByte(p, 0) >= 0:
		return errdefs.InvalidArgument("%s contains a NUL byte", what)
	case !path.IsAbs(p):
		return errdefs.InvalidArgument("%s must be absolute", what)
	case path.Clean(p) != p:
		return errdefs.InvalidArgument("%s must be clean (no '..', '.', '//' or trailing '/')", what)
	}
	return nil
}

// fileQuery reads the path parameter (and the other allowed ones) of a
// files route, refusing unknown parameters.
func fileQuery(r *http.Request, allowed ...string) (string, error) {
	q := r.URL.Query()
	for k, vs := range q {
		ok := k == "path"
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return "", errdefs.InvalidArgument("unknown query parameter %q", k)
		}
		if len(vs) != 1 {
			return "", errdefs.InvalidArgument("query parameter %q given %d times", k, len(vs))
		}
	}
	p := q.Get("path")
	if err := checkPath("path", p); err != nil {
		return "", err
	}
	return p, nil
}

func (s *server) writeFile(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r, "mode")
	if err != nil {
		return err
	}
	if p == "/" {
		return errdefs.InvalidArgument("path / is a directory")
	}
	var mode uint32
	if v := r.URL.Query().Get("mode"); v != "" {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o7777 {
			return errdefs.InvalidArgument("mode %q: want octal permission bits like 0644", v)
		}
		mode = uint32(m)
	}
	// Refuse early on a declared length, without reading the body; a body
	// that is chunked or lies about its length is cut by MaxBytesReader.
	if r.ContentLength > s.maxUpload {
		return withStatus(http.StatusRequestEntityTooLarge,
			errdefs.ResourceExhausted("upload of %d bytes is larger than the limit of %d bytes", r.ContentLength, s.maxUpload))
	}
	body := uploadBody{http.MaxBytesReader(w.ResponseWriter, r.Body, s.maxUpload)}
	n, err := s.be.WriteFile(r.Context(), c.tenant, c.id, p, body, mode)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	return writeJSON(w, http.StatusOK, wire.WriteFileResponse{Bytes: n})
}

// uploadBody is an upload cut at the limit. Its overflow error carries the
// resource_exhausted class as well as the *http.MaxBytesError: the Backend
// classifies the errors it sees with errdefs (for the audit record's
// outcome and the error metrics), and a bare MaxBytesError would read there
// as internal while the client is told 413 resource_exhausted.
type uploadBody struct{ r io.ReadCloser }

func (b uploadBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = &uploadTooLarge{mbe}
	}
	return n, err
}

func (b uploadBody) Close() error { return b.r.Close() }

type uploadTooLarge struct{ mbe *http.MaxBytesError }

func (e *uploadTooLarge) Error() string { return e.mbe.Error() }
func (e *uploadTooLarge) Unwrap() []error {
	return []error{e.mbe, errdefs.ErrResourceExhausted}
}

func (s *server) readFile(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	lw := &lazyWriter{w: w}
	_, err = s.be.ReadFile(r.Context(), c.tenant, c.id, p, lw, s.maxRead)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	if !lw.started {
		lw.start() // an empty file
	}
	return nil
}

// lazyWriter sends the 200 and its headers with the first byte, so errors
// found before then are still JSON errors.
type lazyWriter struct {
	w       http.ResponseWriter
	ctype   string // "": application/octet-stream
	started bool
}

func (l *lazyWriter) start() {
	l.started = true
	h := l.w.Header()
	ctype := l.ctype
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	l.w.WriteHeader(http.StatusOK)
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.start()
	}
	return l.w.Write(p)
}

func (s *server) statFile(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	fi, err := s.be.StatFile(r.Context(), c.tenant, c.id, p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fileInfoFrom(fi))
}

func (s *server) listFiles(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	fis, err := s.be.ListFiles(r.Context(), c.tenant, c.id, p)
	if err != nil {
		return err
	}
	out := wire.FileList{Entries: make([]wire.FileInfo, 0, len(fis))}
	for _, fi := range fis {
		out.Entries = append(out.Entries, fileInfoFrom(fi))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *server) removeFile(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r, "recursive")
	if err != nil {
		return err
	}
	if p == "/" {
		return errdefs.InvalidArgument("refusing to remove /")
	}
	recursive := false
	if v := r.URL.Query().Get("recursive"); v != "" {
		if recursive, err = strconv.ParseBool(v); err != nil {
			return errdefs.InvalidArgument("recursive %q: want true or false", v)
		}
	}
	if err := s.be.RemoveFile(r.Context(), c.tenant, c.id, p, recursive); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) makeDir(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	if err := s.be.MakeDir(r.Context(), c.tenant, c.id, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
