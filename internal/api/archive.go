package api

import (
	"mime"
	"net/http"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// tarType is the media type of archive bodies.
const tarType = "application/x-tar"

// writeArchive relays a tar stream into the sandbox, where the guest
// unpacks it into the directory path. The daemon never reads the stream's
// contents; it bounds its size like a file upload (413 over the limit),
// and the same limit bounds the bytes the guest may write from it.
func (s *server) writeArchive(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != tarType && mt != "application/octet-stream") {
			return errdefs.InvalidArgument("Content-Type %q: send the archive as %s", ct, tarType)
		}
	}
	if r.ContentLength > s.maxUpload {
		return withStatus(http.StatusRequestEntityTooLarge,
			errdefs.ResourceExhausted("archive of %d bytes is larger than the limit of %d bytes", r.ContentLength, s.maxUpload))
	}
	body := uploadBody{http.MaxBytesReader(w.ResponseWriter, r.Body, s.maxUpload)}
	st, err := s.be.WriteArchive(r.Context(), c.tenant, c.id, p, body, s.maxUpload)
	if err != nil {
		return ctxErr(r.Context(), err)
	}
	return writeJSON(w, http.StatusOK, wire.WriteArchiveResponse{Entries: st.Entries, Bytes: st.Bytes})
}

// readArchive relays the guest's tar stream of path. Errors found before
// the first byte (no such path, over the read limit) are JSON errors; a
// transfer that fails later cuts the connection.
func (s *server) readArchive(w *respWriter, r *http.Request, c *call) error {
	p, err := fileQuery(r)
	if err != nil {
		return err
	}
	if p == "/" {
		return errdefs.InvalidArgument("path /: name a directory below /")
	}
	lw := &lazyWriter{w: w, ctype: tarType}
	if _, err := s.be.ReadArchive(r.Context(), c.tenant, c.id, p, lw, s.maxRead); err != nil {
		return ctxErr(r.Context(), err)
	}
	if !lw.started {
		lw.start()
	}
	return nil
}
