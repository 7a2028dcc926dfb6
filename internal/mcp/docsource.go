package mcp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs"
)

// DocumentArgs say where a document tool's document is: its bytes, or a
// file under the operator's docs root.
type DocumentArgs struct {
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"the document's bytes, base64-encoded; exactly one of content_base64 and path"`
	Path          string `json:"path,omitempty" jsonschema:"a file under the docs root the operator allowed: relative to it, or absolute inside it"`
	Filename      string `json:"filename,omitempty" jsonschema:"with content_base64: the document's file name, for its extension (.pdf, .txt, .csv, ...)"`
}

// openDocument resolves a document tool's document into a jobs.Doc whose
// bytes come from an opener; the returned func releases what it holds.
// A path is opened only through an os.Root of the docs root, every time
// it is read, so neither "..", nor an absolute path outside the root, nor
// a symlink leading out of it (even one swapped in between two reads)
// reaches another host file.
func (s *session) openDocument(a DocumentArgs) (jobs.Doc, func(), error) {
	nop := func() {}
	switch {
	case (a.ContentBase64 == "") == (a.Path == ""):
		return jobs.Doc{}, nop, errdefs.InvalidArgument("give exactly one of content_base64 and path")
	case a.ContentBase64 != "":
		doc, err := s.bytesDocument(a)
		return doc, nop, err
	}
	return s.rootDocument(a.Path)
}

func (s *session) bytesDocument(a DocumentArgs) (jobs.Doc, error) {
	if n := int64(base64.StdEncoding.DecodedLen(len(a.ContentBase64))); n > s.opts.MaxDocumentBytes+2 {
		return jobs.Doc{}, errdefs.ResourceExhausted("the document is about %d bytes, over this server's %d-byte limit", n, s.opts.MaxDocumentBytes)
	}
	data, err := base64.StdEncoding.DecodeString(a.ContentBase64)
	if err != nil {
		return jobs.Doc{}, errdefs.InvalidArgument("content_base64 is not standard base64: %v", err)
	}
	name := "document"
	if a.Filename != "" {
		base := filepath.Base(a.Filename)
		if !filepath.IsLocal(base) || strings.ContainsAny(base, "\x00/") {
			return jobs.Doc{}, errdefs.InvalidArgument("filename %q: want a plain file name", a.Filename)
		}
		name = base
	}
	return jobs.Doc{Path: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}, nil
}

// rootDocument opens path under the docs root.
func (s *session) rootDocument(path string) (jobs.Doc, func(), error) {
	nop := func() {}
	if s.opts.DocsRoot == "" {
		return jobs.Doc{}, nop, errdefs.FailedPrecondition("reading documents by path is not enabled: the operator set no docs root; send the document as content_base64")
	}
	rel, err := relativeToRoot(s.opts.DocsRoot, path)
	if err != nil {
		return jobs.Doc{}, nop, err
	}
	root, err := os.OpenRoot(s.opts.DocsRoot)
	if err != nil {
		s.log.Warn("mcp: the docs root cannot be opened", "error", err)
		return jobs.Doc{}, nop, errdefs.Unavailable("the docs root cannot be opened")
	}
	open := func() (io.ReadCloser, error) { return openRegular(root, rel, path) }
	f, err := open() // refuse at once what cannot be read, before any sandbox
	if err != nil {
		root.Close()
		return jobs.Doc{}, nop, err
	}
	f.Close()
	return jobs.Doc{Path: rel, Open: open}, func() { root.Close() }, nil
}

// relativeToRoot turns a tool's path into one relative to root: relative
// paths as they are, absolute ones only when inside root; ".." never.
func relativeToRoot(root, path string) (string, error) {
	rel := path
	if filepath.IsAbs(path) {
		r, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
		if err != nil || !filepath.IsLocal(r) {
			return "", errdefs.PermissionDenied("path %q is outside the docs root: give a path inside it, relative to it", path)
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return "", errdefs.PermissionDenied("path %q leaves the docs root (\"..\" is not allowed): give a path inside it, relative to it", path)
	}
	return filepath.Clean(rel), nil
}

// openRegular opens rel under root, refusing anything but a regular file.
func openRegular(root *os.Root, rel, asGiven string) (io.ReadCloser, error) {
	f, err := root.Open(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errdefs.NotFound("no file %q under the docs root", asGiven)
	case err != nil:
		// os.Root refuses a symlink whose target is outside the root.
		return nil, errdefs.PermissionDenied("path %q cannot be opened under the docs root: it leads outside it (through a symlink?) or is not readable", asGiven)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errdefs.InvalidArgument("path %q is not a regular file", asGiven)
	}
	return f, nil
}
