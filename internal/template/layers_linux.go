//go:build linux

package template

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"strings"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Limits on what a container image may put into a template root. Tests
// lower them.
var (
	maxImageLayers       = 256
	maxImageContentBytes = int64(32 << 30) // uncompressed layer bytes read, all layers together
	maxImageEntries      = 2_000_000       // files, directories and links written
)

// extractImage flattens the image's layers into root, bottom to top with
// whiteouts honoured (mutate.Extract), and writes the result through an
// os.Root: a path that leaves the root, through ".." or a symlink, is
// refused, as are device nodes and FIFOs (the guest's /dev is a devtmpfs).
// Every layer's uncompressed content must match the digest the image's
// config names for it, so the tree is exactly what the image id names.
func extractImage(ctx context.Context, si *sourceImage, root string, st *steps) error {
	layers, err := si.img.Layers()
	if err != nil {
		return errdefs.InvalidArgument("image %s: %v", si.ref, err)
	}
	diffIDs := si.cfg.RootFS.DiffIDs
	switch {
	case len(layers) != len(diffIDs):
		return errdefs.InvalidArgument("image %s: %d layers but its config names %d", si.ref, len(layers), len(diffIDs))
	case len(layers) > maxImageLayers:
		return errdefs.InvalidArgument("image %s: %d layers (at most %d)", si.ref, len(layers), maxImageLayers)
	}
	budget := &readBudget{}
	names := &nameBudget{}
	checked := &checkedImage{Image: si.img}
	for i, l := range layers {
		checked.layers = append(checked.layers, &checkedLayer{Layer: l, want: diffIDs[i], n: i + 1, of: len(layers),
			budget: budget, names: names, st: st})
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	flat := mutate.Extract(checked)
	defer flat.Close()
	return writeTree(ctx, r, &imageStream{r: flat}, si.ref, budget)
}

// imageStream marks errors reading the flattened image (a bad layer, a
// digest mismatch, the size bound), so they are told from write errors.
type imageStream struct{ r io.Reader }

func (s *imageStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &entryError{msg: err.Error()}
	}
	return n, err
}

// writeTree writes every entry of the flattened tar stream into r, hard
// links last: the stream lists the top layer first, so a link's target
// may come after it. File bytes written may not pass the layer bytes read
// (read): only a sparse entry, refused by the layer scanner, could make
// them.
func writeTree(ctx context.Context, r *os.Root, flat io.Reader, ref ImageRef, read *readBudget) error {
	tr := tar.NewReader(&writtenBound{r: flat, read: read})
	var links []*tar.Header
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// mutate.Extract ends the tar before it reports an error: only
			// the rest of the stream tells a complete image from a failed one.
			if _, err = io.Copy(io.Discard, flat); err == nil {
				return writeLinks(r, links, ref)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errdefs.InvalidArgument("image %s: %v", ref, err)
		}
		if n >= maxImageEntries {
			return errdefs.InvalidArgument("image %s: more than %d entries", ref, maxImageEntries)
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if hdr.Typeflag == tar.TypeLink {
			links = append(links, hdr)
			continue
		}
		if err := entryErr(ref, hdr, writeEntry(r, hdr, tr)); err != nil {
			return err
		}
	}
}

func writeLinks(r *os.Root, links []*tar.Header, ref ImageRef) error {
	for _, hdr := range links {
		if err := entryErr(ref, hdr, writeEntry(r, hdr, nil)); err != nil {
			return err
		}
	}
	return nil
}

// entryErr names the entry in err: InvalidArgument for what the image
// may not contain.
func entryErr(ref ImageRef, hdr *tar.Header, err error) error {
	if err == nil {
		return nil
	}
	var ee *entryError
	if errors.As(err, &ee) {
		return errdefs.InvalidArgument("image %s: %s: %s", ref, hdr.Name, ee.msg)
	}
	return fmt.Errorf("image %s: write %s: %w", ref, hdr.Name, err)
}

// entryError is a layer entry the image may not contain.
type entryError struct{ msg string }

func (e *entryError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &entryError{msg: fmt.Sprintf(format, args...)} }

// cleanEntry is a tar name as a path relative to the root: "." for the
// root itself; an escape is refused.
func cleanEntry(name string) (string, error) {
	p := path.Clean(strings.TrimLeft(name, "/"))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", refuse("path escapes the image root")
	}
	if strings.ContainsRune(p, 0) {
		return "", refuse("path contains a NUL")
	}
	return p, nil
}

// writeEntry writes one entry: directories, regular files, symlinks and
// hard links, owned and moded as the layer says.
func writeEntry(r *os.Root, hdr *tar.Header, body io.Reader) error {
	name, err := cleanEntry(hdr.Name)
	if err != nil {
		return err
	}
	if name == "." {
		return nil // the root directory keeps airlock's owner and mode
	}
	switch hdr.Typeflag {
	case tar.TypeChar, tar.TypeBlock:
		return refuse("device nodes are refused (the guest's /dev is a devtmpfs)")
	case tar.TypeFifo:
		return refuse("FIFOs are refused")
	case tar.TypeDir, tar.TypeReg, tar.TypeSymlink, tar.TypeLink:
	default:
		return refuse("unsupported tar entry type %q", hdr.Typeflag)
	}
	if dir := path.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return refuse("cannot create its directory: %v", err)
		}
	}
	if fi, err := r.Lstat(name); err == nil {
		if !fi.IsDir() || hdr.Typeflag != tar.TypeDir {
			// Only a directory an upper layer implied (by listing a file
			// under it) can be here: the flattened stream names each path
			// once. The upper layer's view wins.
			return nil
		}
		return setOwnerMode(r, name, hdr)
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := r.Mkdir(name, 0o700); err != nil {
			return err
		}
	case tar.TypeReg:
		if err := writeRegular(r, name, hdr.Size, body); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if hdr.Linkname == "" || strings.ContainsRune(hdr.Linkname, 0) {
			return refuse("symlink with an empty or NUL target")
		}
		// The target is resolved by the guest, inside its own root; every
		// write here goes through r, which never follows it out.
		if err := r.Symlink(hdr.Linkname, name); err != nil {
			return err
		}
		return r.Lchown(name, hdr.Uid, hdr.Gid)
	case tar.TypeLink:
		target, err := cleanEntry(hdr.Linkname)
		if err != nil || target == "." {
			return refuse("hard link target %q escapes the image root", hdr.Linkname)
		}
		if err := r.Link(target, name); err != nil {
			return refuse("hard link to %s: %v", hdr.Linkname, err)
		}
		return nil // shares its target's owner and mode
	}
	return setOwnerMode(r, name, hdr)
}

func writeRegular(r *os.Root, name string, size int64, body io.Reader) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return refuse("cannot create: %v", err)
	}
	_, err = io.CopyN(f, body, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// setOwnerMode applies the entry's owner, then its mode (chown clears
// setuid bits).
func setOwnerMode(r *os.Root, name string, hdr *tar.Header) error {
	if err := r.Lchown(name, hdr.Uid, hdr.Gid); err != nil {
		return err
	}
	return r.Chmod(name, fileModeFromUnix(uint32(hdr.Mode)&0o7777))
}

// checkedImage is the source image with each layer's uncompressed stream
// verified against its digest and counted against the size budget.
type checkedImage struct {
	v1.Image
	layers []v1.Layer
}

// Layers returns the checked layers.
func (c *checkedImage) Layers() ([]v1.Layer, error) { return c.layers, nil }

type checkedLayer struct {
	v1.Layer
	want   v1.Hash
	n, of  int
	budget *readBudget
	names  *nameBudget
	st     *steps
}

// Uncompressed streams the layer, failing the read that would end it if
// its content does not match the digest the config names.
func (l *checkedLayer) Uncompressed() (io.ReadCloser, error) {
	if l.want.Algorithm != "sha256" {
		return nil, fmt.Errorf("layer %d: unsupported digest %s", l.n, l.want)
	}
	l.st.detail("layer %d/%d %s", l.n, l.of, l.want.Hex[:12])
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", l.n, err)
	}
	return &verifyingReader{rc: rc, h: sha256.New(), l: l, scan: newLayerScanner(l.names)}, nil
}

// verifyingReader is one layer's uncompressed stream, hashed, counted and
// scanned (layerScanner) as mutate.Extract reads it.
type verifyingReader struct {
	rc   io.ReadCloser
	h    hash.Hash
	l    *checkedLayer
	scan *layerScanner
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	if !v.l.budget.take(int64(n)) {
		return n, fmt.Errorf("the image's layers hold more than %d bytes uncompressed", maxImageContentBytes)
	}
	if serr := v.scan.feed(p[:n]); serr != nil {
		return 0, fmt.Errorf("layer %d: %w", v.l.n, serr)
	}
	if errors.Is(err, io.EOF) {
		if serr := v.scan.finish(); serr != nil {
			return 0, fmt.Errorf("layer %d: %w", v.l.n, serr)
		}
		if got := fmt.Sprintf("%x", v.h.Sum(nil)); got != v.l.want.Hex {
			return n, fmt.Errorf("layer %d: content sha256:%s does not match the config's %s", v.l.n, got, v.l.want)
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error {
	v.scan.finish()
	return v.rc.Close()
}

// readBudget counts the layer bytes read, against maxImageContentBytes.
// Layers are read one at a time by mutate.Extract's goroutine; writeTree
// reads the count from its own.
type readBudget struct{ read atomic.Int64 }

func (b *readBudget) take(n int64) bool { return b.read.Add(n) <= maxImageContentBytes }

// writtenBound reads the flattened stream, failing once it has delivered
// more than the layers' bytes read so far plus a little slack (the tar
// headers mutate.Extract writes anew): content can only come from layer
// bytes, so more means something expanded on the way.
type writtenBound struct {
	r    io.Reader
	read *readBudget
	n    int64
}

func (w *writtenBound) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.n += int64(n)
	if w.n > w.read.read.Load()+writtenSlack {
		return n, &entryError{msg: fmt.Sprintf("an entry expands: flattening wrote %d bytes from %d bytes of layers (sparse files are refused)", w.n, w.read.read.Load())}
	}
	return n, err
}

// writtenSlack allows the flattened stream's own headers and padding.
const writtenSlack = 1 << 20
